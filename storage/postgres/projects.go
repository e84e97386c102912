package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"agentbot/storage"
)

// CreateProject creates a project; an existing one is storage.ErrExists.
func (s *Store) CreateProject(ctx context.Context, p storage.Project) error {
	if err := storage.CheckProjectName(p.Name); err != nil {
		return fmt.Errorf("create project: %w", err)
	}
	if p.Created.IsZero() {
		p.Created = s.now()
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `INSERT INTO projects (name, owner, created) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		p.Name, p.Owner, p.Created)
	if err == nil && tag.RowsAffected() == 0 {
		err = storage.ErrExists
	}
	if err != nil {
		return fmt.Errorf("create project %s: %w", p.Name, err)
	}
	return nil
}

// ListProjects lists every project, by name.
func (s *Store) ListProjects(ctx context.Context) ([]storage.Project, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, _ := s.pool.Query(ctx, `SELECT name, owner, created FROM projects ORDER BY name`)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storage.Project, error) {
		var p storage.Project
		return p, r.Scan(&p.Name, &p.Owner, &p.Created)
	})
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

// BindChannel binds a channel to a project ("" unbinds it).
func (s *Store) BindChannel(ctx context.Context, channel, project string) error {
	if err := storage.CheckKey("channel", channel); err != nil {
		return fmt.Errorf("bind channel: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var err error
	if project == "" {
		_, err = s.pool.Exec(ctx, `DELETE FROM project_channels WHERE channel = $1`, channel)
	} else {
		_, err = s.pool.Exec(ctx, `INSERT INTO project_channels (channel, project) VALUES ($1, $2)
			ON CONFLICT (channel) DO UPDATE SET project = excluded.project`, channel, project)
		if isForeignKey(err) {
			err = storage.ErrNotFound
		}
	}
	if err != nil {
		return fmt.Errorf("bind channel %s to project %q: %w", channel, project, err)
	}
	return nil
}

// ChannelBinding is the project a channel is bound to, "" for none.
func (s *Store) ChannelBinding(ctx context.Context, channel string) (string, error) {
	if err := storage.CheckKey("channel", channel); err != nil {
		return "", fmt.Errorf("channel binding: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var project string
	err := s.pool.QueryRow(ctx, `SELECT project FROM project_channels WHERE channel = $1`, channel).Scan(&project)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("channel binding of %s: %w", channel, err)
	}
	return project, nil
}

// BoundChannels lists the channels bound to a project, sorted.
func (s *Store) BoundChannels(ctx context.Context, project string) ([]string, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, _ := s.pool.Query(ctx, `SELECT channel FROM project_channels WHERE project = $1 ORDER BY channel`, project)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("channels of project %s: %w", project, err)
	}
	return out, nil
}

// SaveDocument stores data as the next version of v.Path, if base is the
// latest version (or AnyVersion).
func (s *Store) SaveDocument(ctx context.Context, project string, v storage.DocVersion, base int, data []byte) (storage.DocVersion, error) {
	return s.writeDocument(ctx, project, v, false, func(latest storage.DocVersion, _ []byte) ([]byte, int, error) {
		next, err := storage.NextVersion(latest, base)
		return data, next, err
	})
}

// EditDocument stores edit(latest bytes) as the next version, atomically:
// the document's head row stays locked from the read to the write.
func (s *Store) EditDocument(ctx context.Context, project string, v storage.DocVersion, edit func(old []byte) ([]byte, error)) (storage.DocVersion, error) {
	return s.writeDocument(ctx, project, v, true, func(latest storage.DocVersion, old []byte) ([]byte, int, error) {
		data, err := edit(old)
		return data, latest.Version + 1, err
	})
}

// writeDocument stores the next version of v.Path in one transaction that
// locks the document's head row: decide gets the latest version (and its
// bytes when withData) and returns the new bytes and version, or an error
// that stores nothing.
func (s *Store) writeDocument(ctx context.Context, project string, v storage.DocVersion, withData bool, decide func(storage.DocVersion, []byte) ([]byte, int, error)) (storage.DocVersion, error) {
	if err := storage.CheckDocVersion(project, v); err != nil {
		return v, fmt.Errorf("save document: %w", err)
	}
	if v.Time.IsZero() {
		v.Time = s.now()
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		latest, old, err := lockHead(ctx, tx, project, v, withData)
		if err != nil {
			return err
		}
		data, next, err := decide(latest, old)
		if err != nil {
			return err
		}
		if data == nil {
			data = []byte{}
		}
		v.Version, v.Size = next, int64(len(data))
		if _, err := tx.Exec(ctx, `INSERT INTO documents (project, path, version, size, session, thread, agent, person, time, data, source)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
			project, v.Path, v.Version, v.Size, v.Session, v.Thread, v.Agent, v.Person, v.Time, data, v.Source); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE document_heads SET version = $3, size = $4, session = $5, thread = $6, agent = $7, person = $8, time = $9, source = $10
			WHERE project = $1 AND path = $2`, project, v.Path, v.Version, v.Size, v.Session, v.Thread, v.Agent, v.Person, v.Time, v.Source)
		return err
	})
	if err != nil {
		return v, fmt.Errorf("save document %s of project %s: %w", v.Path, project, err)
	}
	return v, nil
}

// lockHead makes sure the project and the document's head row exist (a
// new document's at version 0), locks the row and returns the latest
// version, with its bytes when withData.
func lockHead(ctx context.Context, tx pgx.Tx, project string, v storage.DocVersion, withData bool) (storage.DocVersion, []byte, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO projects (name, created) VALUES ($1, $2) ON CONFLICT DO NOTHING`, project, v.Time); err != nil {
		return v, nil, err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO document_heads (project, path, version, time) VALUES ($1, $2, 0, $3) ON CONFLICT DO NOTHING`,
		project, v.Path, v.Time); err != nil {
		return v, nil, err
	}
	latest := storage.DocVersion{Path: v.Path}
	if err := tx.QueryRow(ctx, `SELECT version, size, session, thread, agent, person, time, coalesce(source, '') FROM document_heads
		WHERE project = $1 AND path = $2 FOR UPDATE`, project, v.Path).
		Scan(&latest.Version, &latest.Size, &latest.Session, &latest.Thread, &latest.Agent, &latest.Person, &latest.Time, &latest.Source); err != nil {
		return v, nil, err
	}
	if latest.Version == 0 || !withData {
		return latest, nil, nil
	}
	var data []byte
	err := tx.QueryRow(ctx, `SELECT data FROM documents WHERE project = $1 AND path = $2 AND version = $3`,
		project, v.Path, latest.Version).Scan(&data)
	return latest, data, err
}

// docColumns are the columns a DocVersion is scanned from, in order, in
// documents and in document_heads alike (a version an older agentbot
// wrote and Open has not given a source yet has none).
const docColumns = `d.path, d.version, d.size, d.session, d.thread, d.agent, d.person, d.time, coalesce(d.source, '')`

// scanDoc scans docColumns.
func scanDoc(r pgx.CollectableRow) (storage.DocVersion, error) {
	var v storage.DocVersion
	return v, r.Scan(&v.Path, &v.Version, &v.Size, &v.Session, &v.Thread, &v.Agent, &v.Person, &v.Time, &v.Source)
}

// Documents lists the latest version of each document, most recently
// changed first.
func (s *Store) Documents(ctx context.Context, project string) ([]storage.DocVersion, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, _ := s.pool.Query(ctx, `SELECT `+docColumns+` FROM document_heads d
		WHERE d.project = $1 AND d.version > 0`, project)
	out, err := pgx.CollectRows(rows, scanDoc)
	if err != nil {
		return nil, fmt.Errorf("documents of project %s: %w", project, err)
	}
	storage.SortDocuments(out)
	return out, nil
}

// DocumentHistory lists every version of one document, newest first.
func (s *Store) DocumentHistory(ctx context.Context, project, path string) ([]storage.DocVersion, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, _ := s.pool.Query(ctx, `SELECT `+docColumns+` FROM documents d WHERE d.project = $1 AND d.path = $2
		ORDER BY d.version DESC`, project, path)
	out, err := pgx.CollectRows(rows, scanDoc)
	if err != nil {
		return nil, fmt.Errorf("history of %s in project %s: %w", path, project, err)
	}
	return out, nil
}

// DocumentData returns the bytes of a version (0: the latest).
func (s *Store) DocumentData(ctx context.Context, project, path string, version int) ([]byte, error) {
	if version < 0 {
		return nil, fmt.Errorf("document %s v%d of project %s: %w", path, version, project, storage.ErrNotFound)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT data FROM documents WHERE project = $1 AND path = $2 AND version > 0
		AND ($3 = 0 OR version = $3) ORDER BY version DESC LIMIT 1`, project, path, version).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		err = storage.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("document %s v%d of project %s: %w", path, version, project, err)
	}
	return data, nil
}

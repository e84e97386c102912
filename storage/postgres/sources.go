package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"agentbot/storage"
)

// ProjectSources lists every source of a version of the project's
// documents, sorted: the recorded ones, read from the (project, source)
// index, and those of versions an older agentbot wrote (source NULL), found
// as Open's backfill finds them; one snapshot reads both, so a version
// backfilled meanwhile is counted once, never missed.
func (s *Store) ProjectSources(ctx context.Context, project string) ([]string, error) {
	if err := storage.CheckProjectSources(project); err != nil {
		return nil, err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var out []string
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT DISTINCT source FROM documents WHERE project = $1 AND source <> ''`, project)
		recorded, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		legacy, err := legacySources(ctx, tx, project)
		if err != nil {
			return err
		}
		out = recorded
		for _, l := range legacy {
			if l.source != "" {
				out = append(out, l.source)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sources of project %s: %w", project, err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// legacy is the source storage.LegacySource gives the versions without
// one that a thread and session wrote.
type legacy struct {
	thread, session, source string
}

// legacySources finds the sources of the versions without one (source
// NULL, written by an older agentbot) of project, or of every project
// when project is "": from each distinct thread and session that wrote
// them, and the key of that session when it still exists.
func legacySources(ctx context.Context, tx pgx.Tx, project string) ([]legacy, error) {
	const query = `SELECT DISTINCT d.thread, d.session, coalesce(s.key, '') FROM documents d
		LEFT JOIN sessions s ON s.id = d.session WHERE d.source IS NULL`
	var rows pgx.Rows
	if project == "" {
		rows, _ = tx.Query(ctx, query)
	} else {
		rows, _ = tx.Query(ctx, query+` AND d.project = $1`, project)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (legacy, error) {
		var l legacy
		var key string
		if err := r.Scan(&l.thread, &l.session, &key); err != nil {
			return l, err
		}
		l.source = storage.LegacySource(l.thread, key)
		return l, nil
	})
}

// backfillSources gives every version without a source (written before
// migration 0006, or since by an older replica) the one legacySources
// finds, and each document head the source of its version (an older
// replica's save left the head with its previous version's); Open runs it
// under the migration lock, and with nothing to fill it reads one index.
func backfillSources(ctx context.Context, tx pgx.Tx) error {
	found, err := legacySources(ctx, tx, "")
	if err != nil {
		return fmt.Errorf("find versions without a source: %w", err)
	}
	if len(found) == 0 {
		return nil
	}
	var threads, sessions, sources []string
	for _, l := range found {
		threads, sessions, sources = append(threads, l.thread), append(sessions, l.session), append(sources, l.source)
	}
	if _, err := tx.Exec(ctx, `UPDATE documents d SET source = f.source
		FROM unnest($1::text[], $2::text[], $3::text[]) AS f(thread, session, source)
		WHERE d.source IS NULL AND d.thread = f.thread AND d.session = f.session`, threads, sessions, sources); err != nil {
		return fmt.Errorf("give versions their source: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE document_heads h SET source = d.source FROM documents d
		WHERE d.project = h.project AND d.path = h.path AND d.version = h.version AND h.source IS DISTINCT FROM d.source`); err != nil {
		return fmt.Errorf("give document heads their source: %w", err)
	}
	return nil
}

package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// Layout of projects: projects/<name>/ holds "meta" (the Project as JSON)
// and four buckets: versions (path NUL big-endian version → DocVersion
// JSON), data (the same keys → the bytes), heads (path → the latest
// version, big-endian) and sources (every Source of a version → empty),
// which each save adds to and nothing removes. project-channels maps
// "team/channel" to the project it is bound to.
var (
	bucketProjects        = []byte("projects")
	bucketProjectChannels = []byte("project-channels")
	bucketVersions        = []byte("versions")
	bucketDocData         = []byte("data")
	bucketHeads           = []byte("heads")
	bucketSources         = []byte("sources")
	keyProjectMeta        = []byte("meta")
)

// CreateProject creates a project; an existing one is storage.ErrExists.
func (s *Store) CreateProject(ctx context.Context, p storage.Project) error {
	if err := storage.CheckProjectName(p.Name); err != nil {
		return fmt.Errorf("create project: %w", err)
	}
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketProjects).Bucket([]byte(p.Name)) != nil {
			return storage.ErrExists
		}
		_, err := s.projectBucket(tx, p)
		return err
	})
	if err != nil {
		return fmt.Errorf("create project %s: %w", p.Name, err)
	}
	return nil
}

// projectBucket returns p's bucket, creating it (with p as its record,
// Created set) when missing.
func (s *Store) projectBucket(tx *bbolt.Tx, p storage.Project) (*bbolt.Bucket, error) {
	root := tx.Bucket(bucketProjects)
	if b := root.Bucket([]byte(p.Name)); b != nil {
		return b, nil
	}
	b, err := root.CreateBucket([]byte(p.Name))
	if err != nil {
		return nil, err
	}
	if p.Created.IsZero() {
		p.Created = s.now()
	}
	data, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	for _, name := range [][]byte{bucketVersions, bucketDocData, bucketHeads, bucketSources} {
		if _, err := b.CreateBucket(name); err != nil {
			return nil, err
		}
	}
	return b, b.Put(keyProjectMeta, data)
}

// ListProjects lists every project, by name.
func (s *Store) ListProjects(ctx context.Context) ([]storage.Project, error) {
	var out []storage.Project
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketProjects).ForEachBucket(func(k []byte) error {
			var p storage.Project
			if err := json.Unmarshal(tx.Bucket(bucketProjects).Bucket(k).Get(keyProjectMeta), &p); err != nil {
				return fmt.Errorf("project %s: %w", k, err)
			}
			out = append(out, p)
			return nil
		})
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
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketProjectChannels)
		if project == "" {
			return b.Delete([]byte(channel))
		}
		if tx.Bucket(bucketProjects).Bucket([]byte(project)) == nil {
			return storage.ErrNotFound
		}
		return b.Put([]byte(channel), []byte(project))
	})
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
	var out string
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		out = string(tx.Bucket(bucketProjectChannels).Get([]byte(channel)))
		return nil
	})
	return out, err
}

// BoundChannels lists the channels bound to a project, sorted.
func (s *Store) BoundChannels(ctx context.Context, project string) ([]string, error) {
	var out []string
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketProjectChannels).ForEach(func(k, v []byte) error {
			if string(v) == project {
				out = append(out, string(k))
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("channels of project %s: %w", project, err)
	}
	return out, nil
}

// SaveDocument stores data as the next version of v.Path, if base is the
// latest version (or AnyVersion).
func (s *Store) SaveDocument(ctx context.Context, project string, v storage.DocVersion, base int, data []byte) (storage.DocVersion, error) {
	return s.writeDocument(ctx, project, v, func(latest storage.DocVersion, _ []byte) ([]byte, int, error) {
		next, err := storage.NextVersion(latest, base)
		return data, next, err
	})
}

// EditDocument stores edit(latest bytes) as the next version, atomically.
func (s *Store) EditDocument(ctx context.Context, project string, v storage.DocVersion, edit func(old []byte) ([]byte, error)) (storage.DocVersion, error) {
	return s.writeDocument(ctx, project, v, func(latest storage.DocVersion, old []byte) ([]byte, int, error) {
		data, err := edit(old)
		return data, latest.Version + 1, err
	})
}

// writeDocument stores the next version of v.Path in one transaction:
// decide gets the latest version and its bytes and returns the new bytes
// and version, or an error that stores nothing.
func (s *Store) writeDocument(ctx context.Context, project string, v storage.DocVersion, decide func(storage.DocVersion, []byte) ([]byte, int, error)) (storage.DocVersion, error) {
	if err := storage.CheckDocVersion(project, v); err != nil {
		return v, fmt.Errorf("save document: %w", err)
	}
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b, err := s.projectBucket(tx, storage.Project{Name: project})
		if err != nil {
			return err
		}
		latest, old, err := latestDoc(b, v.Path, true)
		if err != nil {
			return err
		}
		data, next, err := decide(latest, old)
		if err != nil {
			return err
		}
		v.Version, v.Size = next, int64(len(data))
		if v.Time.IsZero() {
			v.Time = s.now()
		}
		return putDoc(b, v, data)
	})
	if err != nil {
		return v, fmt.Errorf("save document %s of project %s: %w", v.Path, project, err)
	}
	return v, nil
}

// putDoc writes one version, adds its source to the project's and moves
// the head to it.
func putDoc(b *bbolt.Bucket, v storage.DocVersion, data []byte) error {
	meta, err := json.Marshal(v)
	if err != nil {
		return err
	}
	key := outputKey(v.Path, uint64(v.Version))
	if err := b.Bucket(bucketVersions).Put(key, meta); err != nil {
		return err
	}
	if err := addSource(b, v.Source); err != nil {
		return err
	}
	if data == nil {
		data = []byte{}
	}
	if err := b.Bucket(bucketDocData).Put(key, data); err != nil {
		return err
	}
	return b.Bucket(bucketHeads).Put([]byte(v.Path), u64Key(uint64(v.Version)))
}

// latestDoc returns the latest version of path in project bucket b (the
// zero DocVersion with Path set when none), with its bytes when withData.
func latestDoc(b *bbolt.Bucket, path string, withData bool) (storage.DocVersion, []byte, error) {
	latest := storage.DocVersion{Path: path}
	head := b.Bucket(bucketHeads).Get([]byte(path))
	if head == nil {
		return latest, nil, nil
	}
	key := outputKey(path, be64(head))
	if err := json.Unmarshal(b.Bucket(bucketVersions).Get(key), &latest); err != nil {
		return latest, nil, fmt.Errorf("version record of %s: %w", path, err)
	}
	if !withData {
		return latest, nil, nil
	}
	return latest, append([]byte(nil), b.Bucket(bucketDocData).Get(key)...), nil
}

// Documents lists the latest version of each document, most recently
// changed first.
func (s *Store) Documents(ctx context.Context, project string) ([]storage.DocVersion, error) {
	var out []storage.DocVersion
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketProjects).Bucket([]byte(project))
		if b == nil {
			return nil
		}
		return b.Bucket(bucketHeads).ForEach(func(k, _ []byte) error {
			v, _, err := latestDoc(b, string(k), false)
			out = append(out, v)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("documents of project %s: %w", project, err)
	}
	storage.SortDocuments(out)
	return out, nil
}

// DocumentHistory lists every version of one document, newest first.
func (s *Store) DocumentHistory(ctx context.Context, project, path string) ([]storage.DocVersion, error) {
	var out []storage.DocVersion
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketProjects).Bucket([]byte(project))
		if b == nil {
			return nil
		}
		prefix := append([]byte(path), 0)
		c := b.Bucket(bucketVersions).Cursor()
		for k, val := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8; k, val = c.Next() {
			var v storage.DocVersion
			if err := json.Unmarshal(val, &v); err != nil {
				return err
			}
			out = append([]storage.DocVersion{v}, out...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("history of %s in project %s: %w", path, project, err)
	}
	return out, nil
}

// DocumentData returns the bytes of a version (0: the latest).
func (s *Store) DocumentData(ctx context.Context, project, path string, version int) ([]byte, error) {
	var out []byte
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketProjects).Bucket([]byte(project))
		if b == nil || version < 0 {
			return storage.ErrNotFound
		}
		if version == 0 {
			head := b.Bucket(bucketHeads).Get([]byte(path))
			if head == nil {
				return storage.ErrNotFound
			}
			version = int(be64(head))
		}
		data := b.Bucket(bucketDocData).Get(outputKey(path, uint64(version)))
		if data == nil {
			return storage.ErrNotFound
		}
		out = append([]byte{}, data...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("document %s v%d of project %s: %w", path, version, project, err)
	}
	return out, nil
}

// addSource adds a version's source to project bucket b's; "" (written
// from no channel) adds nothing.
func addSource(b *bbolt.Bucket, source string) error {
	if source == "" {
		return nil
	}
	return b.Bucket(bucketSources).Put([]byte(source), []byte{})
}

// ProjectSources lists every source of a version of the project's
// documents, sorted, from the set each save adds to.
func (s *Store) ProjectSources(ctx context.Context, project string) ([]string, error) {
	if err := storage.CheckProjectSources(project); err != nil {
		return nil, err
	}
	var out []string
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketProjects).Bucket([]byte(project))
		if b == nil {
			return nil
		}
		return b.Bucket(bucketSources).ForEach(func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("sources of project %s: %w", project, err)
	}
	return out, nil
}

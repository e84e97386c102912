package bolt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Schema 2 kept documents per session only; schema 3 adds projects, and
// its migration makes every session's documents versions of its
// channel's project (schema.go lists the versions).

// metaOwnerKey is the Meta entry where the Slack front end records who
// started a session (bot's metaOwner); the migration credits them.
const metaOwnerKey = "bot.owner"

// sessionDoc is one stored version of a session's document, found by the
// migration.
type sessionDoc struct {
	project string
	v       storage.DocVersion
	data    []byte
}

// migrateProjects makes the documents every session saved (versions of
// its own /outputs) versions of its key's default project
// (storage.ProjectOfKey), credited to the session, its thread, agent and
// owner, in time order across the sessions of a project. A version whose
// bytes were never stored is taken from the session's outputs folder
// under dir when it is the latest, else left out. Internal files (memlogs,
// shared inputs) stay the session's.
func migrateProjects(tx *bbolt.Tx, dir string) error {
	var docs []sessionDoc
	err := tx.Bucket(bucketSessions).ForEachBucket(func(id []byte) error {
		sess, err := loadMeta(tx.Bucket(bucketSessions).Bucket(id))
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		docs = append(docs, sessionDocs(tx, dir, sess)...)
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(docs, func(a, b sessionDoc) int { return a.v.Time.Compare(b.v.Time) })
	s := &Store{}
	for _, d := range docs {
		b, err := s.projectBucket(tx, storage.Project{Name: d.project, Created: d.v.Time})
		if err != nil {
			return err
		}
		latest, _, err := latestDoc(b, d.v.Path, false)
		if err != nil {
			return err
		}
		d.v.Version = latest.Version + 1
		if err := putDoc(b, d.v, d.data); err != nil {
			return fmt.Errorf("document %s of project %s: %w", d.v.Path, d.project, err)
		}
	}
	return nil
}

// sessionDocs returns the stored versions of sess's documents.
func sessionDocs(tx *bbolt.Tx, dir string, sess *transcript.Session) []sessionDoc {
	project := storage.ProjectOfKey(sess.Key)
	latest := map[string]int{}
	for _, o := range transcript.Latest(sess.Outputs) {
		latest[o.Path] = o.Version
	}
	var out []sessionDoc
	for _, o := range sess.Outputs {
		if o.Internal || storage.CheckOutputPath(o.Path) != nil {
			continue
		}
		data := storedOutput(tx, sess.ID, o)
		if data == nil && latest[o.Path] == o.Version {
			data = localOutput(dir, sess.ID, o.Path)
		}
		if data == nil {
			continue // a version overwritten before documents were stored
		}
		out = append(out, sessionDoc{project: project, data: data, v: storage.DocVersion{
			Path: o.Path, Size: int64(len(data)), Session: sess.ID, Thread: sess.Key, Source: transcript.SourceOf(sess.Key),
			Agent: sess.AgentID, Person: sess.Meta[metaOwnerKey], Time: o.Time,
		}})
	}
	return out
}

// storedOutput returns a version's bytes from the outputs bucket, or nil.
func storedOutput(tx *bbolt.Tx, id string, o transcript.Output) []byte {
	b := tx.Bucket(bucketOutputs).Bucket([]byte(id))
	if b == nil || o.Version < 1 {
		return nil
	}
	if v := b.Get(outputKey(o.Path, uint64(o.Version))); v != nil {
		return append([]byte{}, v...)
	}
	return nil
}

// localOutput reads a document from a session's outputs folder, or nil.
func localOutput(dir, id, path string) []byte {
	if dir == "" || !filepath.IsLocal(filepath.FromSlash(path)) {
		return nil
	}
	root, err := os.OpenRoot(filepath.Join(dir, "outputs", id))
	if err != nil {
		return nil
	}
	defer root.Close()
	data, err := root.ReadFile(filepath.FromSlash(path))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return data
}

// projects copies every project, its channel bindings and every version of
// its documents, with their numbers, authors and times; versions dst has
// already are skipped, so Migrate can run again.
func (m *migration) projects() error {
	list, err := m.src.ListProjects(m.ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, p := range list {
		if err := m.project(p); err != nil {
			return fmt.Errorf("migrate project %s: %w", p.Name, err)
		}
	}
	return nil
}

// project copies one project.
func (m *migration) project(p storage.Project) error {
	err := m.dst.CreateProject(m.ctx, p)
	if err != nil && !errors.Is(err, storage.ErrExists) {
		return err
	}
	if err == nil {
		m.rep.Projects++
	}
	channels, err := m.src.BoundChannels(m.ctx, p.Name)
	if err != nil {
		return err
	}
	for _, ch := range channels {
		if err := m.dst.BindChannel(m.ctx, ch, p.Name); err != nil {
			return err
		}
	}
	docs, err := m.src.Documents(m.ctx, p.Name)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if err := m.document(p.Name, d.Path); err != nil {
			return fmt.Errorf("document %s: %w", d.Path, err)
		}
	}
	return nil
}

// document copies the versions of one document that dst lacks.
func (m *migration) document(project, path string) error {
	have, err := m.dst.DocumentHistory(m.ctx, project, path)
	if err != nil {
		return err
	}
	hist, err := m.src.DocumentHistory(m.ctx, project, path)
	if err != nil {
		return err
	}
	slices.Reverse(hist) // oldest first
	for _, v := range hist {
		if len(have) > 0 && v.Version <= have[0].Version {
			continue
		}
		data, err := m.src.DocumentData(m.ctx, project, path, v.Version)
		if err != nil {
			return err
		}
		if _, err := m.dst.SaveDocument(m.ctx, project, v, v.Version-1, data); err != nil {
			return fmt.Errorf("version %d: %w", v.Version, err)
		}
		m.rep.Documents++
	}
	return nil
}

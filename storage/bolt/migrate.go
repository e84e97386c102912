package bolt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// MigrateReport counts what Migrate copied.
type MigrateReport struct {
	// Sessions were copied; Skipped were in the destination already.
	Sessions, Skipped int
	// Messages and Outputs (document versions) came with the sessions.
	Messages, Outputs int
	// Channels are channel defaults; Queued are inbound messages waiting.
	Channels, Queued int
	// ChannelTools are channels' lists of MCP servers.
	ChannelTools int
}

// Migrate copies everything src holds into dst: every session (detached
// ones too) with its transcript and documents, channel defaults and the
// inbound messages still queued. Documents stored before they lived in the
// store (files in the data folder's outputs/<id>/) are copied from there.
// Run it with the bot stopped; running it again copies only what is new.
func Migrate(dst storage.Importer, src *Store) (MigrateReport, error) {
	var rep MigrateReport
	list, err := src.ListSessions()
	if err != nil {
		return rep, fmt.Errorf("migrate: %w", err)
	}
	for _, info := range list {
		sess, err := src.SessionByID(info.ID)
		if err != nil {
			return rep, fmt.Errorf("migrate session %s: %w", info.ID, err)
		}
		attached, err := src.holdsKey(sess)
		if err != nil {
			return rep, fmt.Errorf("migrate session %s: %w", info.ID, err)
		}
		added, err := dst.ImportSession(sess, attached)
		if err != nil {
			return rep, fmt.Errorf("migrate session %s: %w", info.ID, err)
		}
		if !added {
			rep.Skipped++
			continue
		}
		rep.Sessions++
		rep.Messages += len(sess.Messages)
		for _, o := range sess.Outputs {
			data, err := src.outputBytes(sess.ID, o)
			if errors.Is(err, storage.ErrNotFound) {
				continue // a version overwritten before documents were stored
			}
			if err != nil {
				return rep, fmt.Errorf("migrate session %s: document %s v%d: %w", sess.ID, o.Path, o.Version, err)
			}
			if err := dst.PutOutput(sess.ID, o, data); err != nil {
				return rep, fmt.Errorf("migrate session %s: document %s v%d: %w", sess.ID, o.Path, o.Version, err)
			}
			rep.Outputs++
		}
	}
	defaults, err := src.channelDefaults()
	if err != nil {
		return rep, fmt.Errorf("migrate: %w", err)
	}
	for key, agent := range defaults {
		team, channel, _ := strings.Cut(key, "/")
		if err := dst.SetChannelDefault(team, channel, agent); err != nil {
			return rep, fmt.Errorf("migrate channel default %s: %w", key, err)
		}
		rep.Channels++
	}
	tools, err := src.channelTools()
	if err != nil {
		return rep, fmt.Errorf("migrate: %w", err)
	}
	for key, servers := range tools {
		team, channel, _ := strings.Cut(key, "/")
		if err := dst.SetChannelTools(team, channel, servers); err != nil {
			return rep, fmt.Errorf("migrate channel tools %s: %w", key, err)
		}
		rep.ChannelTools++
	}
	keys, err := src.PendingKeys()
	if err != nil {
		return rep, fmt.Errorf("migrate: %w", err)
	}
	for _, key := range keys {
		items, err := src.Pending(key)
		if err != nil {
			return rep, fmt.Errorf("migrate: %w", err)
		}
		for _, it := range items {
			if _, err := dst.Enqueue(key, it.Payload); err != nil {
				return rep, fmt.Errorf("migrate queued message of %q: %w", key, err)
			}
			if err := src.Dequeue(key, it.Seq); err != nil {
				return rep, fmt.Errorf("migrate queued message of %q: %w", key, err)
			}
			rep.Queued++
		}
	}
	return rep, nil
}

// holdsKey reports whether sess is the session its key names (not
// detached).
func (s *Store) holdsKey(sess *transcript.Session) (bool, error) {
	var holds bool
	err := s.db.View(func(tx *bbolt.Tx) error {
		holds = string(tx.Bucket(bucketKeys).Get([]byte(sess.Key))) == sess.ID
		return nil
	})
	return holds, err
}

// outputBytes returns a document version from the store, or from the
// session's outputs folder for the latest version of a document saved
// before documents lived in the store.
func (s *Store) outputBytes(id string, o transcript.Output) ([]byte, error) {
	data, err := s.OutputData(id, o.Path, o.Version)
	if !errors.Is(err, storage.ErrNotFound) {
		return data, err
	}
	var latest transcript.Output
	if sess, err := s.SessionByID(id); err == nil {
		for _, l := range transcript.Latest(sess.Outputs) {
			if l.Path == o.Path {
				latest = l
			}
		}
	}
	if latest.Version != o.Version || !filepath.IsLocal(filepath.FromSlash(o.Path)) {
		return nil, storage.ErrNotFound
	}
	root, err := os.OpenRoot(filepath.Join(s.dir, "outputs", id))
	if err != nil {
		return nil, storage.ErrNotFound
	}
	defer root.Close()
	data, err = root.ReadFile(filepath.FromSlash(o.Path))
	if errors.Is(err, os.ErrNotExist) {
		return nil, storage.ErrNotFound
	}
	return data, err
}

// channelDefaults returns every channel default, "team/channel" → agent.
func (s *Store) channelDefaults() (map[string]string, error) {
	out := map[string]string{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketChannels).ForEach(func(k, v []byte) error {
			out[string(k)] = string(v)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("channel defaults: %w", err)
	}
	return out, nil
}

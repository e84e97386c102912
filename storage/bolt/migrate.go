package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	// Projects were copied with their channel bindings and Documents
	// (document versions).
	Projects, Documents int
	// Credentials were copied still sealed; Flows (pending authorization
	// flows) were moved, still sealed.
	Credentials, Flows int
}

// Migrate copies everything src holds into dst: every session (detached
// ones too) with its transcript and documents, channel defaults and the
// inbound messages still queued, and every project with its channels and
// every version of its documents, and the credentials and pending
// authorization flows, still sealed (the key is not needed). Documents stored before they lived in the
// store (files in the data folder's outputs/<id>/) are copied from there.
// Run it with the bot stopped; running it again copies only what is new.
func Migrate(ctx context.Context, dst storage.Importer, src *Store) (MigrateReport, error) {
	m := &migration{ctx: ctx, dst: dst, src: src}
	for _, step := range []func() error{m.sessions, m.channelDefaults, m.channelTools, m.projects, m.queued, m.credentials, m.flows} {
		if err := step(); err != nil {
			return m.rep, err
		}
	}
	return m.rep, nil
}

// migration is one run of Migrate: its steps, in order, add to rep.
type migration struct {
	ctx context.Context
	dst storage.Importer
	src *Store
	rep MigrateReport
}

// sessions copies every session with its transcript and documents.
func (m *migration) sessions() error {
	list, err := m.src.ListSessions(m.ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, info := range list {
		if err := m.session(info.ID); err != nil {
			return fmt.Errorf("migrate session %s: %w", info.ID, err)
		}
	}
	return nil
}

// session copies one session, unless dst has it already.
func (m *migration) session(id string) error {
	sess, err := m.src.SessionByID(m.ctx, id)
	if err != nil {
		return err
	}
	attached, err := m.src.holdsKey(m.ctx, sess)
	if err != nil {
		return err
	}
	added, err := m.dst.ImportSession(m.ctx, sess, attached)
	if err != nil {
		return err
	}
	if !added {
		m.rep.Skipped++
		return nil
	}
	m.rep.Sessions++
	m.rep.Messages += len(sess.Messages)
	for _, o := range sess.Outputs {
		data, err := m.src.outputBytes(m.ctx, sess.ID, o)
		if errors.Is(err, storage.ErrNotFound) {
			continue // a version overwritten before documents were stored
		}
		if err == nil {
			err = m.dst.PutOutput(m.ctx, sess.ID, o, data)
		}
		if err != nil {
			return fmt.Errorf("document %s v%d: %w", o.Path, o.Version, err)
		}
		m.rep.Outputs++
	}
	return nil
}

// channelDefaults copies every channel's default agent.
func (m *migration) channelDefaults() error {
	defaults, err := m.src.channelDefaults(m.ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for key, agent := range defaults {
		team, channel, _ := strings.Cut(key, "/")
		if err := storage.SetChannelDefault(m.ctx, m.dst, team, channel, agent); err != nil {
			return fmt.Errorf("migrate channel default %s: %w", key, err)
		}
		m.rep.Channels++
	}
	return nil
}

// channelTools copies every channel's list of MCP servers.
func (m *migration) channelTools() error {
	tools, err := m.src.channelTools(m.ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for key, servers := range tools {
		team, channel, _ := strings.Cut(key, "/")
		if err := storage.SetChannelTools(m.ctx, m.dst, team, channel, servers); err != nil {
			return fmt.Errorf("migrate channel tools %s: %w", key, err)
		}
		m.rep.ChannelTools++
	}
	return nil
}

// queued moves the inbound messages still queued: each is dequeued from
// src once dst holds it.
func (m *migration) queued() error {
	keys, err := m.src.PendingKeys(m.ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, key := range keys {
		items, err := m.src.Pending(m.ctx, key)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		for _, it := range items {
			_, done := m.dst.Admit(m.ctx, it.Order, nil, 0, key, it.Payload)
			if a := <-done; a.Err != nil {
				return fmt.Errorf("migrate queued message of %q: %w", key, a.Err)
			}
			if err := m.src.dequeue(m.ctx, key, it.Seq); err != nil {
				return fmt.Errorf("migrate queued message of %q: %w", key, err)
			}
			m.rep.Queued++
		}
	}
	return nil
}

// credentials copies every credential as it is stored: sealed, with its
// description and its Updated time.
func (m *migration) credentials() error {
	list, err := m.src.ListCredentials(m.ctx, storage.CredentialFilter{})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, info := range list {
		c, err := m.src.Credential(m.ctx, info.Team, info.User, info.Server)
		if err == nil {
			err = m.dst.PutCredential(m.ctx, c)
		}
		if err != nil {
			return fmt.Errorf("migrate credential %s/%s/%s: %w", info.Team, info.User, info.Server, err)
		}
		m.rep.Credentials++
	}
	return nil
}

// flows moves the pending authorization flows that have not expired, still
// sealed: each is taken from src once dst holds it, so a flow is not live
// in both.
func (m *migration) flows() error {
	type flow struct {
		state   string
		expires time.Time
		sealed  []byte
	}
	var live []flow
	now := m.src.now().UnixNano()
	err := m.src.view(m.ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketFlows).ForEach(func(k, v []byte) error {
			if len(v) > 8 && int64(be64(v[:8])) > now {
				live = append(live, flow{string(k), time.Unix(0, int64(be64(v[:8]))), append([]byte(nil), v[8:]...)})
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("migrate: flows: %w", err)
	}
	for _, f := range live {
		if err := m.dst.PutFlow(m.ctx, f.state, f.sealed, f.expires); err != nil {
			return fmt.Errorf("migrate: flow: %w", err)
		}
		if _, err := m.src.TakeFlow(m.ctx, f.state); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("migrate: flow: %w", err)
		}
		m.rep.Flows++
	}
	return nil
}

// holdsKey reports whether sess is the session its key names (not
// detached).
func (s *Store) holdsKey(ctx context.Context, sess *transcript.Session) (bool, error) {
	var holds bool
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		holds = string(tx.Bucket(bucketKeys).Get([]byte(sess.Key))) == sess.ID
		return nil
	})
	return holds, err
}

// outputBytes returns a document version from the store, or from the
// session's outputs folder for the latest version of a document saved
// before documents lived in the store.
func (s *Store) outputBytes(ctx context.Context, id string, o transcript.Output) ([]byte, error) {
	data, err := s.OutputData(ctx, id, o.Path, o.Version)
	if !errors.Is(err, storage.ErrNotFound) {
		return data, err
	}
	var latest transcript.Output
	if sess, err := s.SessionByID(ctx, id); err == nil {
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
func (s *Store) channelDefaults(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
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

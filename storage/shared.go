package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"agentbot/engine/transcript"
)

// Batch returns first and whatever else is waiting on ch, up to max in
// all, without blocking: the group a committer writes in one transaction.
func Batch[T any](first T, ch <-chan T, max int) []T {
	batch := []T{first}
	for len(batch) < max {
		select {
		case r, ok := <-ch:
			if !ok {
				return batch
			}
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// Lookup finds a session by id, or else by key (as sessions list shows
// it), in a store.
func Lookup(ctx context.Context, st interface {
	SessionByID(ctx context.Context, id string) (*transcript.Session, error)
	FindSession(ctx context.Context, key string) (*transcript.Session, error)
}, idOrKey string) (*transcript.Session, error) {
	sess, err := st.SessionByID(ctx, idOrKey)
	if err == nil {
		return sess, nil
	}
	if byKey, kerr := Session(ctx, st, idOrKey); kerr == nil {
		return byKey, nil
	} else if !errors.Is(err, ErrNotFound) {
		return nil, kerr // not an id: the key's answer
	}
	return nil, err
}

// HasSession reports whether key has a session, from its metadata alone.
func HasSession(ctx context.Context, st interface {
	FindMeta(ctx context.Context, key string) (*transcript.Session, error)
}, key string) (bool, error) {
	rec, err := st.FindMeta(ctx, key)
	return rec != nil, err
}

// Next returns the first of a key's queued items (see Inbound.Pending);
// ok is false when none is queued.
func Next(ctx context.Context, st interface {
	Pending(ctx context.Context, sessionKey string) ([]Queued, error)
}, key string) (seq uint64, payload []byte, ok bool, err error) {
	items, err := st.Pending(ctx, key)
	if err != nil || len(items) == 0 {
		return 0, nil, false, err
	}
	return items[0].Seq, items[0].Payload, true, nil
}

// Session returns the session stored under key, or an error matching
// ErrNotFound when key has none.
func Session(ctx context.Context, st interface {
	FindSession(ctx context.Context, key string) (*transcript.Session, error)
}, key string) (*transcript.Session, error) {
	sess, err := st.FindSession(ctx, key)
	if err == nil && sess == nil {
		err = fmt.Errorf("load session %q: %w", key, ErrNotFound)
	}
	return sess, err
}

// ChannelDefault is the agent id new sessions of a channel start with
// ("" for none).
func ChannelDefault(ctx context.Context, st ChannelReader, team, channel string) (string, error) {
	c, err := st.Channel(ctx, team, channel)
	return c.Agent, err
}

// SetChannelDefault sets a channel's default agent; "" clears it.
func SetChannelDefault(ctx context.Context, st Channels, team, channel, agentID string) error {
	return st.EditChannel(ctx, team, channel, func(c *ChannelSettings) error {
		c.Agent = agentID
		return nil
	})
}

// ChannelTools are the MCP servers a channel adds to its agents' tools,
// sorted; nil when none.
func ChannelTools(ctx context.Context, st ChannelReader, team, channel string) ([]string, error) {
	c, err := st.Channel(ctx, team, channel)
	return c.Tools, err
}

// SetChannelTools sets a channel's MCP servers; an empty list clears them.
func SetChannelTools(ctx context.Context, st Channels, team, channel string, servers []string) error {
	return st.EditChannel(ctx, team, channel, func(c *ChannelSettings) error {
		c.Tools = servers
		return nil
	})
}

// Found is a store's FindSession made of its Session: (nil, nil) where
// Session says ErrNotFound, else Session's answer.
func Found(sess *transcript.Session, err error) (*transcript.Session, error) {
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return sess, err
}

// SweepInterval is how often a store's Seen and admissions also remove
// expired dedupe marks.
const SweepInterval = time.Minute

// Sweeper spaces out the sweeps of expired dedupe marks: at most one per
// SweepInterval, whatever the callers. The zero value is ready to use.
type Sweeper struct {
	mu   sync.Mutex
	last time.Time
}

// Due reports whether a sweep is due at now (none in the last
// SweepInterval, or the clock went back), and if so records it.
func (w *Sweeper) Due(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.last.IsZero() && now.Sub(w.last) < SweepInterval && !now.Before(w.last) {
		return false
	}
	w.last = now
	return true
}

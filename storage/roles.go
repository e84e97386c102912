package storage

import (
	"context"
	"time"

	"agentbot/engine/transcript"
)

// The storage contract is a set of roles, one per kind of state. A store
// (the embedded bbolt store, storage/postgres) meets all of them, as
// Backend; a consumer declares the roles it uses (bot.Store is a
// composition of them), and storage/storetest checks every store against
// one table of behaviours. Sessions are transcript.Session values; an
// error that means "no such thing" matches ErrNotFound. A new kind of
// state is a new role here, added to Backend, to storetest and to both
// stores; a consumer that needs it adds the role to its composition.
// The roles hold the primitives only: what can be made of them (Session,
// Lookup, HasSession, Next, FindProject, ChannelDefault and its kin) is a
// function here, the same for every store, and a method exists because a
// caller needs it, never for the contract suite alone.
//
// Every method takes the caller's context first: a call whose context is
// done (a stopped turn, a shutdown) fails with the context's error and
// changes nothing. storage/postgres runs its queries under it (bounded by
// its own operation timeout), so a cancel ends a query stalled in the
// database; the bbolt store checks it before each transaction (a begun
// one, short, runs to its end). Close takes none: it runs at shutdown.

// Sessions keeps sessions and their transcripts, by key (Slack uses
// "team/channel/thread") and by id.
type Sessions interface {
	// SessionByID returns the session with the given id.
	SessionByID(ctx context.Context, id string) (*transcript.Session, error)
	// FindSession returns the session stored under key, or (nil, nil)
	// when key has none (storage.Session makes that ErrNotFound).
	FindSession(ctx context.Context, key string) (*transcript.Session, error)
	// FindMeta is FindSession without the transcript (Messages stays
	// empty): the metadata alone, for callers that need no messages.
	FindMeta(ctx context.Context, key string) (*transcript.Session, error)
	// NewSession creates an empty session for key with a fresh id; a key
	// that has one already is an error matching ErrExists.
	NewSession(ctx context.Context, key string) (*transcript.Session, error)
	// SaveSession stores the metadata and appends the messages not stored
	// yet; transcripts only grow. It sets Updated.
	SaveSession(ctx context.Context, s *transcript.Session) error
	// SetMeta sets one entry of the Meta of the session that holds key,
	// without loading or rewriting its transcript ("" deletes it); no such
	// session is an error matching ErrNotFound.
	SetMeta(ctx context.Context, key, name, value string) error
	// WaitingSessions lists the keys of the attached sessions with a tool
	// call waiting for approval (Session.Pending), from an index kept by
	// SaveSession, so finding them never scans every session.
	WaitingSessions(ctx context.Context) ([]string, error)
	// DetachSession frees the session's key and keeps its data.
	DetachSession(ctx context.Context, id string) error
	SessionList
}

// SessionList is what operators browse: every session (storage.Lookup
// finds one by id or key). A running bbolt store answers it through its
// control socket too.
type SessionList interface {
	// ListSessions lists every session, most recently updated first.
	ListSessions(ctx context.Context) ([]SessionInfo, error)
}

// Retention removes sessions for good.
type Retention interface {
	// DeleteSession removes a session with its transcript and documents.
	DeleteSession(ctx context.Context, id string) error
	// Prune deletes the sessions not updated since olderThan and returns
	// their ids.
	Prune(ctx context.Context, olderThan time.Time) ([]string, error)
}

// Dedupe keeps marks that expire: the keys of events already taken in.
type Dedupe interface {
	// Seen marks key for ttl and reports whether a live mark existed.
	// Expired marks are swept by the store itself (see Sweeper).
	Seen(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// Inbound is the queue of messages waiting for their thread's turn, by
// session key, oldest first.
type Inbound interface {
	// Admit marks the dedupe keys for ttl and, unless one was marked
	// already, queues payload for the session key, atomically; with no
	// keys it only queues. This is the one way into the queue. order is
	// the item's place in its thread: Slack's message ts in microseconds
	// (see OrderOf), so a message admitted late (redelivered after a
	// fault) is queued before later messages of its thread; 0 means the
	// time of admission on the store's clock.
	//
	// done receives the outcome once the admission is committed. A store
	// that writes each admission to a local journal on disk (fsynced)
	// before it commits it, and replays the journal at its next start
	// (bbolt), returns journaled too: it receives nil once the admission
	// is in the journal, so the caller may ack the message well before
	// the commit, or the error when it could not be written there (the
	// admission is then dropped, done carries the error: never ack it).
	// Any other store returns a nil journaled: done alone says the
	// admission is durable.
	Admit(ctx context.Context, order int64, keys []string, ttl time.Duration, sessionKey string, payload []byte) (journaled <-chan error, done <-chan Admission)
	// Pending lists a key's queued items in order: by Order, then Seq
	// (Next reads the first). Items leave the queue by CompleteFenced.
	Pending(ctx context.Context, sessionKey string) ([]Queued, error)
	// PendingKeys lists every key with queued items.
	PendingKeys(ctx context.Context) ([]string, error)
}

// Leases give one holder (a replica) a thread's work at a time. A lease
// carries a fencing token that grows with every take, and every write the
// holder makes for the thread is checked against it (Fenced): a holder
// that lost its lease (frozen past the TTL, cut off from the store) writes
// nothing. On a shared store the lease times are the store's own clock
// (the database's), never a replica's.
type Leases interface {
	// TakeLease takes the lease on key for holder for ttl when it is free
	// or expired, or is holder's own, with a token greater than every
	// earlier one of key; ok is false while another holder's lease is live.
	TakeLease(ctx context.Context, key, holder string, ttl time.Duration) (f Fence, ok bool, err error)
	// RenewLease extends f's lease to ttl from now while f is live; a lease
	// that expired, was released or was taken over is never taken back by
	// a renewal: that is ErrFenced.
	RenewLease(ctx context.Context, f Fence, ttl time.Duration) error
	// CheckFence returns nil while f is the live lease on its key, and
	// ErrFenced otherwise. Posts to Slack are decided on it.
	CheckFence(ctx context.Context, f Fence) error
	// ReleaseLease gives up holder's lease on key, if it holds it.
	ReleaseLease(ctx context.Context, key, holder string) error
}

// Fenced are the writes a lease holder makes for its thread, each checked
// against its fence in the same transaction: when the fence is stale the
// write is refused with ErrFenced and changes nothing.
type Fenced interface {
	// SaveSessionFenced is SaveSession under f; s.Key must be f.Key.
	SaveSessionFenced(ctx context.Context, f Fence, s *transcript.Session) error
	// CompleteFenced finishes queued item seq of f.Key under f, in one
	// transaction: it sets the meta entries of the key's session (when it
	// has one; "" deletes an entry), such as the posted marker, and
	// removes the item. An item not queued is ErrNotFound, and nothing
	// changes. Seq 0 names no item: it only sets the meta entries (the
	// fenced SetMeta).
	CompleteFenced(ctx context.Context, f Fence, seq uint64, meta map[string]string) error
}

// ChannelSettings are one channel's settings.
type ChannelSettings struct {
	// Agent is the agent id new sessions of the channel start with; ""
	// for none.
	Agent string
	// Tools are the MCP servers the channel adds to its agents' tools
	// (/agent tools add), deduplicated and sorted (CleanChannelTools);
	// nil when none.
	Tools []string
}

// ChannelReader reads channels' settings.
type ChannelReader interface {
	// Channel returns a channel's settings; the zero value when none are
	// set.
	Channel(ctx context.Context, team, channel string) (ChannelSettings, error)
}

// Channels keeps each channel's settings (ChannelDefault and its
// kin read and set one of them).
type Channels interface {
	ChannelReader
	// EditChannel sets a channel's settings to what edit makes of them,
	// atomically: no other edit lands between the read and the write. An
	// empty Agent or Tools clears it; an error from edit is returned as it
	// is, and nothing changes.
	EditChannel(ctx context.Context, team, channel string, edit func(*ChannelSettings) error) error
}

// Usage counts the tokens each workspace used per UTC day.
type Usage interface {
	// AddDailyUsage adds tokens to a workspace's UTC day and returns the
	// day's total; with no tokens (0 or less) it only reads the total.
	AddDailyUsage(ctx context.Context, team, day string, tokens int) (int, error)
}

// Outputs keeps the bytes of every version of the documents sessions
// save, so any replica can upload or export them.
type Outputs interface {
	// PutOutput stores the bytes of one version of a session's document;
	// storing the same path and version again replaces it.
	PutOutput(ctx context.Context, sessionID string, o transcript.Output, data []byte) error
	// OutputData returns the bytes of a stored version (0: the latest).
	OutputData(ctx context.Context, sessionID, path string, version int) ([]byte, error)
}

// Backend is the whole contract: every role, and the store's own
// lifecycle. The embedded bbolt store (storage/bolt) and storage/postgres
// both meet it.
type Backend interface {
	Sessions
	SessionIndex
	Retention
	Dedupe
	Inbound
	Leases
	Fenced
	Channels
	Usage
	Outputs
	Projects
	Credentials
	// Ping checks that the store answers.
	Ping(ctx context.Context) error
	Close() error
}

// Importer is a store that takes sessions whole, with their ids, times and
// transcripts, as `agentbot migrate` copies them; storage/postgres meets it.
type Importer interface {
	Backend
	// ImportSession stores s as it is; attached says whether it holds its
	// key. It reports false, changing nothing, when a session with s's id
	// exists already, so a migration can run again.
	ImportSession(ctx context.Context, s *transcript.Session, attached bool) (bool, error)
}

package storage

import (
	"time"

	"agentbot/engine/transcript"
)

// Backend is the storage contract: the embedded bbolt Store and
// storage/postgres both meet it, and storage/storetest checks both with one
// table of behaviours. Sessions are transcript.Session values; an error
// that means "no such thing" matches ErrNotFound.
type Backend interface {
	// Session returns the session stored under key (Slack uses
	// "team/channel/thread").
	Session(key string) (*transcript.Session, error)
	// SessionByID returns the session with the given id.
	SessionByID(id string) (*transcript.Session, error)
	// FindSession is Session returning (nil, nil) when key has none.
	FindSession(key string) (*transcript.Session, error)
	// FindMeta is FindSession without the transcript (Messages stays
	// empty): the metadata alone, for callers that need no messages.
	FindMeta(key string) (*transcript.Session, error)
	// Lookup finds a session by id, then by key.
	Lookup(idOrKey string) (*transcript.Session, error)
	// HasSession reports whether key has a session, without loading it.
	HasSession(key string) (bool, error)
	// NewSession creates an empty session for key with a fresh id; a key
	// that has one already is an error matching ErrExists.
	NewSession(key string) (*transcript.Session, error)
	// SaveSession stores the metadata and appends the messages not stored
	// yet; transcripts only grow. It sets Updated.
	SaveSession(s *transcript.Session) error
	// SetMeta sets one entry of the Meta of the session that holds key,
	// without loading or rewriting its transcript ("" deletes it); no such
	// session is an error matching ErrNotFound.
	SetMeta(key, name, value string) error
	// WaitingSessions lists the keys of the attached sessions with a tool
	// call waiting for approval (Session.Pending), from an index kept by
	// SaveSession, so finding them never scans every session.
	WaitingSessions() ([]string, error)
	// DetachSession frees the session's key and keeps its data.
	DetachSession(id string) error
	// DeleteSession removes a session with its transcript and documents.
	DeleteSession(id string) error
	// Prune deletes the sessions not updated since olderThan and returns
	// their ids.
	Prune(olderThan time.Time) ([]string, error)
	// ListSessions lists every session, most recently updated first.
	ListSessions() ([]SessionInfo, error)

	// Seen marks key for ttl and reports whether a live mark existed.
	Seen(key string, ttl time.Duration) (bool, error)
	// SweepSeen removes the marks expired at now and returns how many.
	SweepSeen(now time.Time) (int, error)

	// ChannelDefault is the agent id new sessions of a channel start with.
	ChannelDefault(team, channel string) (string, error)
	// SetChannelDefault sets it; "" clears it.
	SetChannelDefault(team, channel, agentID string) error
	// ChannelTools are the MCP servers a channel adds to its agents'
	// tools (/agent tools add), sorted; nil when none.
	ChannelTools(team, channel string) ([]string, error)
	// SetChannelTools sets them (deduplicated and sorted, as
	// CleanChannelTools returns them); an empty list clears them.
	SetChannelTools(team, channel string, servers []string) error

	// Admit marks the dedupe keys for ttl and, unless one was marked
	// already, queues payload for the session key, atomically.
	Admit(keys []string, ttl time.Duration, sessionKey string, payload []byte) (dup bool, seq uint64, err error)
	// AdmitAsync is Admit with its outcome on a channel.
	AdmitAsync(keys []string, ttl time.Duration, sessionKey string, payload []byte) <-chan Admission
	// Enqueue queues payload for the session key.
	Enqueue(sessionKey string, payload []byte) (uint64, error)
	// Pending lists a key's queued items, oldest first.
	Pending(sessionKey string) ([]Queued, error)
	// Next returns a key's oldest queued item.
	Next(sessionKey string) (seq uint64, payload []byte, ok bool, err error)
	// Dequeue removes one queued item.
	Dequeue(sessionKey string, seq uint64) error
	// PendingKeys lists every key with queued items.
	PendingKeys() ([]string, error)

	// AddDailyUsage adds tokens to a workspace's UTC day and returns the
	// day's total; DailyUsage reads it.
	AddDailyUsage(team, day string, tokens int) (int, error)
	DailyUsage(team, day string) (int, error)

	// PutOutput stores the bytes of one version of a session's document;
	// storing the same path and version again replaces it.
	PutOutput(sessionID string, o transcript.Output, data []byte) error
	// OutputData returns the bytes of a stored version (0: the latest).
	OutputData(sessionID, path string, version int) ([]byte, error)

	// Lease takes or renews the lease on a thread's work for holder, for
	// ttl; it reports false while another holder's lease is live.
	Lease(key, holder string, ttl time.Duration) (bool, error)
	// ReleaseLease gives up holder's lease on key, if it holds it.
	ReleaseLease(key, holder string) error

	// InputDir and OutputDir are the session's local working folders.
	InputDir(id string) (string, error)
	OutputDir(id string) (string, error)
	// Ping checks that the store answers.
	Ping() error
	Close() error
}

// Store, the embedded bbolt store, meets the contract.
var _ Backend = (*Store)(nil)

// Journaled is implemented by a backend whose AdmitAsync returns only once
// the admission is in a local journal that a restart replays (bbolt): the
// caller may ack the message before the outcome arrives. For any other
// backend the outcome alone says the admission is durable.
type Journaled interface {
	// AdmitJournaled reports whether AdmitAsync journals before it returns.
	AdmitJournaled() bool
}

package storage

import (
	"time"

	"agentbot/engine/transcript"
)

// SessionInfo summarises one stored session.
type SessionInfo struct {
	ID       string           `json:"id"`
	Key      string           `json:"key"`
	AgentID  string           `json:"agent_id"`
	Messages int              `json:"messages"`
	Outputs  int              `json:"outputs"`
	Usage    transcript.Usage `json:"usage"`
	Created  time.Time        `json:"created"`
	Updated  time.Time        `json:"updated"`
}

// Queued is one persisted inbound message waiting for its turn.
type Queued struct {
	// Seq is unique across the store and grows with every admission.
	Seq uint64
	// Order places the item in its thread: Slack's message ts in
	// microseconds, or the time of admission (see Inbound.Admit).
	Order    int64
	Payload  []byte
	Enqueued time.Time
}

// Admission is the outcome of Admit: whether a dedupe key was marked
// already, the queue sequence, or the error.
type Admission struct {
	Dup bool
	Seq uint64
	Err error
}

// Fence is a lease held: the thread's key, the holder, and the token the
// store gave when the holder took the lease (see Leases).
type Fence struct {
	Key    string
	Holder string
	Token  uint64
}

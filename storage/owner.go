package storage

import (
	"context"
	"encoding/json"
	"time"

	"agentbot/engine/transcript"
)

// SessionIndex finds a person's sessions from an index the stores keep
// with every save (by transcript.Session.Owner, OwnerOf), so a view of
// them (the Home tab) never reads every session, nor any transcript.
type SessionIndex interface {
	// PersonSessions lists the attached sessions whose owner is person,
	// most recently updated first, at most limit of them (limit <= 0:
	// all).
	PersonSessions(ctx context.Context, person string, limit int) ([]SessionRef, error)
}

// SessionRef is a session as an index lists it.
type SessionRef struct {
	ID, Key string
	Updated time.Time
}

// The thread state under which the bot (bot/threadstate) kept a session's
// owner before transcript.Session.Owner existed: Meta "bot.thread", a
// JSON object with "owner", or before that Meta "bot.owner". Only OwnerOf
// reads them, so the stores can index sessions stored before (bbolt
// schema 7, PostgreSQL migration 0008).
const (
	legacyStateMeta = "bot.thread"
	legacyOwnerMeta = "bot.owner"
)

// OwnerOf is the owner the stores index s by: its Owner, or for a session
// stored before Owner existed, the owner its thread state names; "" for
// none (a terminal session).
func OwnerOf(s *transcript.Session) string {
	if s.Owner != "" {
		return s.Owner
	}
	if raw := s.Meta[legacyStateMeta]; raw != "" {
		var st struct {
			Owner string `json:"owner"`
		}
		if json.Unmarshal([]byte(raw), &st) == nil {
			return st.Owner
		}
		return ""
	}
	return s.Meta[legacyOwnerMeta]
}

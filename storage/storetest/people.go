package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// personSessions: PersonSessions lists a person's attached sessions, most
// recently updated first, from each save's owner (an Owner, or the
// owner the thread state of a session stored before names); a limit
// bounds it; a detached or deleted session, another person's and a
// session without an owner are not listed.
func personSessions(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	c := clock(t, b)
	ids := func(person string, limit int) []string {
		t.Helper()
		refs, err := b.PersonSessions(ctx, person, limit)
		must(t, err)
		var out []string
		for _, r := range refs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids("U1", 0); len(got) != 0 {
		t.Fatalf("an empty store lists %v", got)
	}
	save := func(key, owner string, meta map[string]string) *transcript.Session {
		t.Helper()
		s := newSession(t, b, key)
		c.Add(time.Second)
		s.Owner, s.Meta = owner, meta
		must(t, b.SaveSession(ctx, s))
		return s
	}
	a := save("T/C/1", "U1", nil)
	other := save("T/C/2", "U2", nil)
	legacy := save("T/C/3", "", map[string]string{"bot.thread": `{"owner":"U1","seq":3}`})
	older := save("T/C/4", "", map[string]string{"bot.owner": "U1"})
	save("chat/terminal", "", nil)
	if got, want := ids("U1", 0), []string{older.ID, legacy.ID, a.ID}; !slices.Equal(got, want) {
		t.Fatalf("U1's sessions %v, want %v (most recently updated first)", got, want)
	}
	refs, err := b.PersonSessions(ctx, "U1", 2)
	must(t, err)
	if len(refs) != 2 || refs[0].ID != older.ID || refs[0].Key != "T/C/4" || !refs[0].Updated.Equal(older.Updated) {
		t.Fatalf("U1's first two = %+v", refs)
	}
	// A save moves the session to the front.
	c.Add(time.Second)
	must(t, b.SaveSession(ctx, a))
	if got := ids("U1", 1); !slices.Equal(got, []string{a.ID}) {
		t.Fatalf("after a save of %s: %v", a.ID, got)
	}
	if got := ids("U2", 0); !slices.Equal(got, []string{other.ID}) {
		t.Fatalf("U2's sessions %v", got)
	}
	must(t, b.DetachSession(ctx, legacy.ID))
	must(t, b.DeleteSession(ctx, older.ID))
	if got := ids("U1", 0); !slices.Equal(got, []string{a.ID}) {
		t.Fatalf("after a detach and a delete: %v", got)
	}
	// The key's next session is listed once it has an owner.
	next := newSession(t, b, "T/C/3")
	c.Add(time.Second)
	next.Owner = "U1"
	must(t, b.SaveSession(ctx, next))
	if got := ids("U1", 0); !slices.Equal(got, []string{next.ID, a.ID}) {
		t.Fatalf("after the key's next session: %v", got)
	}
}

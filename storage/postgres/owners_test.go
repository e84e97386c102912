package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"agentbot/storage/pgtest"
)

// Sessions an older agentbot wrote (owner NULL: before migration 0008, or
// by an older replica since) kept their owner only in the bot's thread
// state: the next Open files them under it, so PersonSessions lists them,
// and a session with no owner gets the empty one.
func TestPersonSessionsOfOlderRows(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := open(t, url)
	var ids []string
	for i, meta := range []map[string]string{
		{"bot.thread": `{"owner":"U1","seq":2}`},
		{"bot.owner": "U1"},
		nil,
	} {
		sess, err := s.NewSession(ctx, "T/C/"+string(rune('1'+i)))
		if err != nil {
			t.Fatal(err)
		}
		sess.Meta = meta
		if err := s.SaveSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sess.ID)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE sessions SET owner = NULL`); err != nil { // as an older agentbot left them
		t.Fatal(err)
	}
	if refs, err := s.PersonSessions(ctx, "U1", 0); err != nil || len(refs) != 0 {
		t.Fatalf("before the backfill: %v, %v", refs, err)
	}
	s.Close()
	s = open(t, url)
	refs, err := s.PersonSessions(ctx, "U1", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.ID)
	}
	if want := []string{ids[1], ids[0]}; !slices.Equal(got, want) {
		t.Fatalf("U1's sessions after the backfill = %v, want %v", got, want)
	}
	var unowned int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE owner IS NULL`).Scan(&unowned); err != nil || unowned != 0 {
		t.Fatalf("%d sessions without an owner after Open, %v", unowned, err)
	}
}

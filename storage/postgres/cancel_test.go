package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/storage/pgtest"
)

// TestCancelEndsStalledQuery: a query stalled on a row lock another
// connection holds ends when its context is cancelled (a stopped turn, a
// shutdown), with context.Canceled, instead of waiting for the lock or
// for the store's own operation timeout.
func TestCancelEndsStalledQuery(t *testing.T) {
	url := pgtest.URL(t)
	s := open(t, url)
	bg := context.Background()
	if _, err := s.NewSession(bg, "T/C/1"); err != nil {
		t.Fatal(err)
	}

	// Another connection locks the session's row and keeps it.
	locker, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(bg)
	tx, err := locker.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(bg)
	if _, err := tx.Exec(bg, `SELECT 1 FROM sessions WHERE key = 'T/C/1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.SetMeta(ctx, "T/C/1", "k", "v") }()

	// Wait until the store's query waits for the lock.
	watch, err := pgx.Connect(bg, url)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(bg)
	for {
		var waiting bool
		err := watch.QueryRow(bg, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("SetMeta returned %v while the row was locked", err)
		case <-time.After(10 * time.Millisecond):
		}
	}

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("SetMeta after cancel = %v, want context.Canceled", err)
	}
	// The lock is still held: the store gave up; it did not get through.
	if err := tx.Rollback(bg); err != nil {
		t.Fatal(err)
	}
	rec, err := s.FindMeta(bg, "T/C/1")
	if err != nil || rec == nil || rec.Meta["k"] != "" {
		t.Fatalf("after the cancelled SetMeta: %+v, %v; want the session without k", rec, err)
	}
}

package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/pgtest"
	"agentbot/storage/postgres"
	"agentbot/storage/storetest"
)

const secret = "s3cr3t-Pa55word"

// closedPort returns a local port nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestOpenUnreachable: a database nobody answers for fails Open (and
// Check) with an error that names the failure, within the connect timeout,
// and without the password.
func TestOpenUnreachable(t *testing.T) {
	url := "postgres://agentbot:" + secret + "@" + closedPort(t) + "/agentbot?sslmode=disable"
	start := time.Now()
	_, err := postgres.Open(context.Background(), url, t.TempDir())
	if err == nil {
		t.Fatal("Open of an unreachable database succeeded")
	}
	if d := time.Since(start); d > 2*postgres.ConnectTimeout {
		t.Errorf("Open took %s to fail", d)
	}
	if !strings.Contains(err.Error(), "connect") || strings.Contains(err.Error(), secret) {
		t.Errorf("error %q should say it could not connect, without the password", err)
	}
	if _, err := postgres.Check(context.Background(), url); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("Check: %v", err)
	}
}

// TestBadURLHidesPassword: malformed addresses are refused with an error
// that never shows the password.
func TestBadURLHidesPassword(t *testing.T) {
	for _, url := range []string{
		"postgres://agentbot:" + secret + "@localhost:notaport/db",
		"postgres://agentbot:" + secret + "@[::1/db",
		"postgresql://agentbot:" + secret + "@host/db?sslmode=bogus",
		"host=localhost port=bad password=" + secret,
		"host=localhost password='" + secret + "' sslmode=bogus",
		"postgres://host/db?password=" + secret + "&sslmode=bogus",
		"://agentbot:" + secret + "@host",
	} {
		_, err := postgres.Open(context.Background(), url, t.TempDir())
		if err == nil {
			t.Errorf("Open(bad URL) succeeded")
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the password: %v", err)
		}
		if _, err := postgres.Check(context.Background(), url); err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("Check(bad URL): %v", err)
		}
	}
	// An escaped password shows neither escaped nor plain.
	for _, url := range []string{
		"postgres://agentbot:s3cr3t%40Pa55%2Fw0rd@localhost:notaport/db",
		"postgres://agentbot:s3cr3t%40Pa55%2Fw0rd@" + closedPort(t) + "/db?sslmode=disable",
	} {
		_, err := postgres.Open(context.Background(), url, t.TempDir())
		if err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Open(escaped password): %v", err)
		}
	}
	if _, err := postgres.Open(context.Background(), "", t.TempDir()); err == nil {
		t.Error("Open(\"\") succeeded")
	}
}

// TestNewerSchemaRefused: a database migrated by a newer agentbot is
// refused, naming both versions, and left alone.
func TestNewerSchemaRefused(t *testing.T) {
	url := pgtest.URL(t)
	s, err := postgres.Open(context.Background(), url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `INSERT INTO schema_migrations (version, name) VALUES (99, '0099_future')`); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(context.Background(), url, t.TempDir())
	known := postgres.SchemaVersion()
	if err == nil || !strings.Contains(err.Error(), "99") || !strings.Contains(err.Error(), fmt.Sprintf("(%d)", known)) {
		t.Fatalf("Open of a newer schema: %v; want an error naming 99 and %d", err, known)
	}
	rep, err := postgres.Check(context.Background(), url)
	if err == nil || rep.Version != 99 || rep.Known != known {
		t.Fatalf("Check of a newer schema = %+v, %v", rep, err)
	}
}

// TestCheckIsDryRun: Check reports the pending migrations of a fresh
// database without applying them, and none after Open.
func TestCheckIsDryRun(t *testing.T) {
	url := pgtest.URL(t)
	rep, err := postgres.Check(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Version != 0 || len(rep.Pending) != postgres.SchemaVersion() || rep.Pending[0] != "0001_init" || rep.Latency <= 0 {
		t.Fatalf("Check of a fresh database = %+v", rep)
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var created bool
	if err := conn.QueryRow(context.Background(), `SELECT to_regclass('sessions') IS NOT NULL OR to_regclass('schema_migrations') IS NOT NULL`).Scan(&created); err != nil || created {
		t.Fatalf("Check created tables (%v, %v)", created, err)
	}
	s, err := postgres.Open(context.Background(), url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	rep, err = postgres.Check(context.Background(), url)
	if err != nil || rep.Version != postgres.SchemaVersion() || len(rep.Pending) != 0 {
		t.Fatalf("Check after Open = %+v, %v", rep, err)
	}
}

// TestReplicaOpenTogether: replicas starting at once on a fresh database
// migrate it once, without racing.
func TestReplicaOpenTogether(t *testing.T) {
	url := pgtest.URL(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := postgres.Open(context.Background(), url, t.TempDir())
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rep, err := postgres.Check(context.Background(), url)
	if err != nil || rep.Version != postgres.SchemaVersion() {
		t.Fatalf("after concurrent opens: %+v, %v", rep, err)
	}
}

// TestDatabaseRestart: while the database is down, Ping and SaveSession
// fail with an error; once it is back, the same store works again and
// nothing saved before is lost.
func TestDatabaseRestart(t *testing.T) {
	ctx := context.Background()
	c := pgtest.Cluster(t)
	s := open(t, c.CreateDB(t))
	sess, err := s.NewSession(ctx, "T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	sess.Messages = []transcript.Message{{Role: "system", Content: "sys"}}
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	if err := s.Ping(ctx); err == nil {
		t.Fatal("Ping succeeded with the database stopped")
	}
	sess.Messages = append(sess.Messages, transcript.Message{Role: "user", Content: "while down"})
	if err := s.SaveSession(ctx, sess); err == nil {
		t.Fatal("SaveSession succeeded with the database stopped")
	}
	if dup, _, err := storetest.Admit(ctx, s, []string{"ev"}, time.Minute, "T/C/1", []byte(`{}`)); err == nil {
		t.Fatalf("Admit succeeded with the database stopped (dup %v)", dup)
	}
	c.Start()
	deadline := time.Now().Add(30 * time.Second)
	for s.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the store did not come back after the database restarted")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatalf("SaveSession after restart: %v", err)
	}
	if dup, _, err := storetest.Admit(ctx, s, []string{"ev"}, time.Minute, "T/C/1", []byte(`{}`)); err != nil || dup {
		t.Fatalf("Admit after restart = %v, %v", dup, err)
	}
	got, err := storage.Session(ctx, s, "T/C/1")
	if err != nil || len(got.Messages) != 2 {
		t.Fatalf("after restart: %v, %v", got, err)
	}
	if _, err := storage.Session(ctx, s, "T/C/404"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("errors still match after restart: %v", err)
	}
}

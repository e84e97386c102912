package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"agentbot/engine/fakemodel"
	"agentbot/storage/pgtest"
)

// tables counts the tables of the database at url.
func tables(t *testing.T, url string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// check reports the database: connected, its schema version and what the
// next start would migrate, without migrating; after a start, up to date.
func TestCheckDatabase(t *testing.T) {
	url := pgtest.URL(t)
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	vars["AGENTBOT_DATABASE_URL"] = url
	r := runCmd(t, vars, "", "check")
	contains(t, "check", r.stdout, "database (AGENTBOT_DATABASE_URL)")
	contains(t, "check", r.stdout, "schema version 0 of")
	contains(t, "check", r.stdout, "migration(s) to apply at the next start")
	contains(t, "check", r.stdout, "round trip")
	if n := tables(t, url); n != 0 {
		t.Fatalf("check created %d tables: it must only look", n)
	}
	lacks(t, "check", r.stdout, "data dir") // the data folder check is bbolt's

	// A chat migrates at its start; check then finds nothing to do.
	fm.Enqueue(fakemodel.Reply{Text: "Hello from PostgreSQL."})
	runCmd(t, vars, "hi there, a question\n", "chat", "--agent", "product-lead").wantCode(t, 0)
	r = runCmd(t, vars, "", "check")
	contains(t, "check", r.stdout, "schema up to date")
}

// A database that cannot be reached stops serve at once with exit code 2
// and a message that says what to check, never the password.
func TestServeDatabaseUnreachable(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	vars["SLACK_APP_TOKEN"], vars["SLACK_BOT_TOKEN"] = "xapp-1-A-1-x", "xoxb-1-x"
	vars["AGENTBOT_DATABASE_URL"] = "postgres://agentbot:pa55-w0rd-secret@127.0.0.1:1/agentbot?connect_timeout=2"
	r := runCmd(t, vars, "", "serve")
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, "AGENTBOT_DATABASE_URL")
	contains(t, "stderr", r.stderr, "127.0.0.1")
	lacks(t, "stderr", r.stderr+r.stdout, "pa55-w0rd-secret")

	r = runCmd(t, vars, "", "check")
	contains(t, "check", r.stdout, "database (AGENTBOT_DATABASE_URL)")
	lacks(t, "check", r.stdout+r.stderr, "pa55-w0rd-secret")
	if r.code == 0 {
		t.Fatalf("check passed with an unreachable database:\n%s", r.stdout)
	}
}

// A malformed URL is a setting to fix, for chat and migrate alike: exit
// code 2, no password shown.
func TestBadDatabaseURL(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	for _, bad := range []string{
		"postgres://agentbot:pa55-w0rd-secret@127.0.0.1:notaport/agentbot",
		"postgres://agentbot:pa55-w0rd-secret@[::1/agentbot",
		"mysql://agentbot:pa55-w0rd-secret@127.0.0.1/agentbot",
	} {
		vars["AGENTBOT_DATABASE_URL"] = bad
		for _, args := range [][]string{{"chat", "--agent", "product-lead"}, {"migrate"}} {
			r := runCmd(t, vars, "hello\n", args...)
			r.wantCode(t, 2)
			lacks(t, "output of "+args[0]+" "+bad, r.stderr+r.stdout, "pa55-w0rd-secret")
			if !strings.Contains(r.stderr, "AGENTBOT_DATABASE_URL") {
				t.Errorf("the %s error for %s does not name the setting:\n%s", args[0], bad, r.stderr)
			}
		}
	}
}

// migrate copies a bbolt store (here one written by the first session
// format) into PostgreSQL, documents included; sessions and chat then work
// against the database, and a second run copies nothing twice.
func TestMigrateToPostgres(t *testing.T) {
	url := pgtest.URL(t)
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	v1Data(t, vars)
	vars["AGENTBOT_DATABASE_URL"] = url
	r := runCmd(t, vars, "", "migrate")
	r.wantCode(t, 0)
	contains(t, "migrate", r.stdout, "copied 1 session(s) with 11 message(s) and 1 document version(s)")

	// Everything below reads the database from an empty data folder, as
	// another replica would.
	vars["AGENTBOT_DATA"] = filepath.Join(t.TempDir(), "replica")
	r = runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	contains(t, "sessions list", r.stdout, "lgjnajbfftn7e")
	r = runCmd(t, vars, "", "sessions", "show", "lgjnajbfftn7e")
	r.wantCode(t, 0)
	contains(t, "sessions show", r.stdout, "product-brief.md")

	fm.Enqueue(fakemodel.Reply{Text: "Continuing from the database."})
	r = runCmd(t, vars, "Make it for returning shoppers\n", "chat", "--session", "lgjnajbfftn7e")
	r.wantCode(t, 0)
	contains(t, "chat", r.stdout, "Continuing from the database.")
	if len(fm.Requests()) != 1 || len(sentMessages(t, fm.Requests()[0])) < 12 {
		t.Fatalf("the resumed chat did not send the migrated transcript")
	}

	vars["AGENTBOT_DATA"] = filepath.Join(t.TempDir(), "data2")
	v1Data(t, vars)
	r = runCmd(t, vars, "", "migrate")
	r.wantCode(t, 0)
	contains(t, "second migrate", r.stdout, "copied 0 session(s)")
	contains(t, "second migrate", r.stdout, "1 session(s) were there already")
}

// migrate needs a database to copy into.
func TestMigrateNeedsDatabase(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	r := runCmd(t, vars, "", "migrate")
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, "AGENTBOT_DATABASE_URL")
}

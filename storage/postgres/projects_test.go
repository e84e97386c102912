package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/pgtest"
	"agentbot/storage/storetest"
)

// bolt.Migrate carries projects whole: records, channel bindings, and
// every document version with its number, author and time; a second run
// copies nothing again.
func TestMigrateCopiesProjects(t *testing.T) {
	ctx := context.Background()
	src, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.CreateProject(ctx, storage.Project{Name: "checkout"}); err != nil {
		t.Fatal(err)
	}
	if err := src.BindChannel(ctx, "T1/C1", "checkout"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, body := range []string{"one", "two", "three"} {
		if _, err := src.SaveDocument(ctx, "checkout", storage.DocVersion{Path: "prd.md", Person: "U1", Agent: "pm", Thread: "T1/C1/1.1", Source: "T1/C1", Time: at.Add(time.Duration(i) * time.Minute)}, i, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	dst := open(t, pgtest.URL(t))
	for round := range 2 {
		rep, err := bolt.Migrate(ctx, dst, src)
		if err != nil {
			t.Fatal(err)
		}
		if want := 3 * (1 - round); rep.Documents != want {
			t.Fatalf("round %d: report %+v, want %d documents", round, rep, want)
		}
	}
	hist, err := dst.DocumentHistory(ctx, "checkout", "prd.md")
	if err != nil || len(hist) != 3 || hist[0].Version != 3 || hist[0].Person != "U1" || hist[0].Source != "T1/C1" || !hist[0].Time.Equal(at.Add(2*time.Minute)) {
		t.Fatalf("history in PostgreSQL = %+v, %v", hist, err)
	}
	if data, err := dst.DocumentData(ctx, "checkout", "prd.md", 1); err != nil || string(data) != "one" {
		t.Fatalf("v1 = %q, %v", data, err)
	}
	if got, err := dst.ChannelBinding(ctx, "T1/C1"); err != nil || got != "checkout" {
		t.Fatalf("binding = %q, %v", got, err)
	}
}

// Migration 0004 makes the documents sessions stored in PostgreSQL before
// projects versions of their channel's project, in time order, credited to
// their session, thread, agent and owner; shared files stay the session's.
func TestMigration0004MovesSessionDocuments(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := open(t, url)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	writes := []struct{ key, path, data string }{
		{"T1/C1/1.1", "brief.md", "brief v1"},
		{"T1/C1/2.2", "brief.md", "brief v2"},
		{"T1/C1/1.1", "/inputs/notes.txt", "shared"},
		{"chat/pm/x", "prd.md", "terminal prd"},
	}
	sessions := map[string]*transcript.Session{}
	for i, w := range writes {
		sess := sessions[w.key]
		if sess == nil {
			if sess, err := s.NewSession(ctx, w.key); err != nil {
				t.Fatal(err)
			} else {
				sessions[w.key] = sess
			}
			sess = sessions[w.key]
			sess.AgentID = "analyst"
			sess.SetMeta("bot.owner", "U9")
		}
		o := transcript.Output{Path: w.path, Size: int64(len(w.data)), Version: transcript.NextVersion(sess.Outputs, w.path), Time: at.Add(time.Duration(i) * time.Minute)}
		sess.Outputs = append(sess.Outputs, o)
		if err := s.SaveSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		if err := s.PutOutput(ctx, sess.ID, o, []byte(w.data)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	// Take the database back to schema 3, as today's code leaves it.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	// 0005 (fencing and order) is undone too: the migrations after 3 run
	// again, in order, as on a database today's code left at 3.
	if _, err := conn.Exec(ctx, `DROP TABLE credentials, oauth_flows, document_heads, documents, project_channels, projects;
		DROP FUNCTION agentbot_now_ns(); DROP INDEX queue_key; ALTER TABLE queue DROP COLUMN ord;
		CREATE INDEX queue_key ON queue (session_key, seq); ALTER TABLE leases DROP COLUMN token; DROP SEQUENCE lease_tokens;
		ALTER TABLE sessions DROP COLUMN owner;
		DELETE FROM schema_migrations WHERE version >= 4`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	s = open(t, url)
	hist, err := s.DocumentHistory(ctx, storage.ChannelProject("T1", "C1"), "brief.md")
	if err != nil || len(hist) != 2 {
		t.Fatalf("brief.md history = %+v, %v", hist, err)
	}
	if h := hist[0]; h.Version != 2 || h.Thread != "T1/C1/2.2" || h.Source != "T1/C1" || h.Session != sessions["T1/C1/2.2"].ID || h.Agent != "analyst" || h.Person != "U9" || !h.Time.Equal(at.Add(time.Minute)) {
		t.Fatalf("latest brief = %+v", h)
	}
	if data, err := s.DocumentData(ctx, storage.ChannelProject("T1", "C1"), "brief.md", 1); err != nil || string(data) != "brief v1" {
		t.Fatalf("brief v1 = %q, %v", data, err)
	}
	docs, err := s.Documents(ctx, storage.ChannelProject("T1", "C1"))
	if err != nil || len(docs) != 1 {
		t.Fatalf("the channel's documents = %+v, %v (shared files stay the session's)", docs, err)
	}
	if data, err := s.DocumentData(ctx, storage.TerminalProject, "prd.md", 0); err != nil || string(data) != "terminal prd" {
		t.Fatalf("terminal prd = %q, %v", data, err)
	}
	// Migration 0006 gives the moved versions their source.
	if got, err := s.ProjectSources(ctx, storage.ChannelProject("T1", "C1")); err != nil || len(got) != 1 || got[0] != "T1/C1" {
		t.Fatalf("sources of the channel's project = %q, %v", got, err)
	}
	if got, err := s.ProjectSources(ctx, storage.TerminalProject); err != nil || len(got) != 0 {
		t.Fatalf("sources of the terminal's project = %q, %v", got, err)
	}
}

// BenchmarkDocumentContention is 50 threads appending to one document at
// once on PostgreSQL (see storetest.BenchDocumentContention).
func BenchmarkDocumentContention(b *testing.B) {
	storetest.BenchDocumentContention(b, openBench(b), 50)
}

// A replica killed in the middle of an edit (its connection dies inside
// the transaction, as when the process is killed) lands nothing: the
// document keeps its latest version whole, its row lock is released, and
// the next edit, from another replica, lands on top.
func TestKilledMidEditLandsNothing(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, b := open(t, url), open(t, url)
	if _, err := a.SaveDocument(ctx, "p", storage.DocVersion{Path: "prd.md"}, 0, []byte("line 1\n")); err != nil {
		t.Fatal(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := a.EditDocument(ctx, "p", storage.DocVersion{Path: "prd.md", Person: "U-killed"}, func(old []byte) ([]byte, error) {
			close(inside)
			<-release
			return append(old, "half-written line\n"...), nil
		})
		done <- err
	}()
	<-inside
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var killed int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle in transaction'`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("killed %d connections, %v", killed, err)
	}
	close(release)
	if err := <-done; err == nil {
		t.Fatal("the edit of the killed connection reports success")
	}
	if data, err := b.DocumentData(ctx, "p", "prd.md", 0); err != nil || string(data) != "line 1\n" {
		t.Fatalf("after the kill the document is %q, %v", data, err)
	}
	v, err := b.EditDocument(ctx, "p", storage.DocVersion{Path: "prd.md", Person: "U-other"}, func(old []byte) ([]byte, error) {
		return append(old, "line 2\n"...), nil
	})
	if err != nil || v.Version != 2 {
		t.Fatalf("the other replica's edit = %+v, %v", v, err)
	}
	if data, _ := b.DocumentData(ctx, "p", "prd.md", 0); string(data) != "line 1\nline 2\n" {
		t.Fatalf("document = %q", data)
	}
}

package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// The document the kill tests edit, and the line the model appends.
const (
	killDoc    = "log.md"
	killSeed   = "# Log\n"
	killLine   = "line A\n"
	killedText = "append the line"
	killDone   = "APPENDED"
)

// appendModel answers like a model appending killLine to killDoc: it
// calls edit_output once the user asks, again when told the call was
// interrupted, and says killDone once the append is recorded. hangAfter,
// when set, makes the first request that carries a recorded append hang
// (the process dies there).
func appendModel(hangAfter bool) func(fakemodel.Request) fakemodel.Reply {
	var hung atomic.Bool
	args, _ := json.Marshal(map[string]string{"path": killDoc, "append": killLine})
	call := fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "edit_output", Arguments: string(args)}}}
	return func(req fakemodel.Request) fakemodel.Reply {
		last := -1
		for i, m := range req.Messages {
			if m.Role == openai.ChatMessageRoleUser {
				last = i
			}
		}
		var result string
		for _, m := range req.Messages[last+1:] {
			if m.Role == openai.ChatMessageRoleTool {
				result = m.Content
			}
		}
		switch {
		case result == "" || strings.Contains(result, "interrupted"):
			return call
		case hangAfter && hung.CompareAndSwap(false, true):
			return fakemodel.Reply{Hang: true}
		default:
			return fakemodel.Reply{Text: killDone}
		}
	}
}

// killPoint is where in an edit a kill test kills the replica.
type killPoint int

const (
	// killInEdit: the edit waits for the document's row lock, inside its
	// store transaction.
	killInEdit killPoint = iota
	// killBeforeRecord: the version landed, and the session's save of the
	// tool's result waits for the session's row lock: the transcript never
	// learns of the append.
	killBeforeRecord
	// killInNextCall: the append is recorded and the next model call
	// hangs.
	killInNextCall
)

// TestReplicaKilledInTheMiddleOfAnEdit: a replica SIGKILLed in the middle
// of an edit_output append to a project document, then the other replica
// finishes the turn. Killed inside the store write, after the version
// landed but before the transcript recorded it, or in the model call
// after it, the document ends with exactly one copy of the line on top of
// the version before it (no lost version, no double append), and the
// thread gets one answer.
func TestReplicaKilledInTheMiddleOfAnEdit(t *testing.T) {
	for name, at := range map[string]killPoint{
		"inside the store write":           killInEdit,
		"before the transcript records":    killBeforeRecord,
		"in the model call after the edit": killInNextCall,
	} {
		t.Run(name, func(t *testing.T) { killMidEdit(t, at) })
	}
}

// rowLock holds rows of the test's database locked (SELECT ... FOR
// UPDATE) in a transaction of its own connection until release.
func rowLock(t *testing.T, url, query string, args ...any) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := tx.Exec(ctx, query, args...)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("lock (%s): %d rows, %v", query, tag.RowsAffected(), err)
	}
	return func() {
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// waitForLock waits until a statement of another connection that matches
// the regular expression re waits for a lock, or a replica ends.
func waitForLock(t *testing.T, watch *pgx.Conn, re string, procs ...*replicaProc) {
	t.Helper()
	waitUntil(t, "a statement waiting for a lock: "+re, waitLong, func() bool {
		var n int
		err := watch.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query ~ $1 AND pid <> pg_backend_pid()`, re).Scan(&n)
		for _, p := range procs {
			if p.exited() {
				return true
			}
		}
		return err == nil && n > 0
	})
}

// killMidEdit runs one kill of TestReplicaKilledInTheMiddleOfAnEdit.
func killMidEdit(t *testing.T, at killPoint) {
	ctx := context.Background()
	const ttl = time.Second
	e := newReplicaEnv(t, "", map[string]string{"AGENTBOT_LEASE_TTL": ttl.String()})
	e.fm.Handle(appendModel(at == killInNextCall))
	project := storage.ChannelProject(e.fake.TeamID(), replicaChannel)
	st := e.store()
	defer st.Close()
	if _, err := st.SaveDocument(ctx, project, storage.DocVersion{Path: killDoc, Person: "U0REPLUSER"}, 0, []byte(killSeed)); err != nil {
		t.Fatal(err)
	}
	watch := e.storeConn(t)
	const lockedHead = `document_heads.*FOR UPDATE`
	const lockHead = `SELECT 1 FROM document_heads WHERE project = $1 AND path = $2 FOR UPDATE`
	var releases []func()
	if at != killInNextCall {
		releases = append(releases, rowLock(t, e.url, lockHead, project, killDoc))
	}

	a, b := e.start("replica-a"), e.start("replica-b")
	root, _ := e.mention(a.conn, "", killedText)
	key := e.fake.TeamID() + "/" + replicaChannel + "/" + root
	switch at {
	case killInEdit:
		waitForLock(t, watch, lockedHead, a, b)
	case killBeforeRecord:
		waitForLock(t, watch, lockedHead, a, b)
		// Hold the session, then let the edit land: what records it for
		// the session (its outputs row, whose key refers to the session,
		// or the session's save) waits.
		releases = append(releases, rowLock(t, e.url, `SELECT 1 FROM sessions WHERE key = $1 AND attached FOR UPDATE`, key))
		releases[0]()
		releases = releases[1:]
		waitForLock(t, watch, `INSERT INTO outputs|FROM sessions WHERE id`, a, b)
		if hist, err := st.DocumentHistory(ctx, project, killDoc); err != nil || len(hist) != 2 {
			t.Fatalf("before the kill: versions %+v, %v; want the append landed", hist, err)
		}
	case killInNextCall:
		waitUntil(t, "the model call after the append", waitLong, func() bool { return e.fm.Calls() == 2 || a.exited() || b.exited() })
	}
	holder := e.leaseHolder(root)
	killed, survivor := a, b
	if holder == b.name {
		killed, survivor = b, a
	} else if holder != a.name {
		t.Fatalf("thread lease held by %q during the edit", holder)
	}
	killed.kill()
	for _, release := range releases {
		release()
	}
	waitUntil(t, "the survivor's answer", waitLong, func() bool { return hasText(e, root, killDone) || survivor.exited() })
	time.Sleep(ttl) // a second append or answer would come within a scan
	if survivor.exited() {
		t.Fatalf("the survivor ended\n%s", survivor.logs.String())
	}
	data, err := st.DocumentData(ctx, project, killDoc, 0)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != killSeed+killLine {
		t.Errorf("the document after the kill is %q, want %q (one copy of the line on the seed)", data, killSeed+killLine)
	}
	hist, err := st.DocumentHistory(ctx, project, killDoc)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Version != 2 || hist[1].Version != 1 {
		t.Errorf("versions %+v, want 2 on top of 1", hist)
	}
	n := 0
	for _, s := range botText(e.fake, replicaChannel, root) {
		n += strings.Count(s, killDone)
	}
	if n != 1 {
		t.Errorf("%d answers, want 1: %q", n, botText(e.fake, replicaChannel, root))
	}
	if got := e.userMessages(st, root, killedText); got != 1 {
		t.Errorf("the transcript has the message %d times, want 1", got)
	}
}

// hasText reports whether a bot message of thread holds sub.
func hasText(e *replicaEnv, thread, sub string) bool {
	for _, s := range botText(e.fake, replicaChannel, thread) {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// storeConn is a connection to the test's database for the test's own
// queries, closed when the test ends.
func (e *replicaEnv) storeConn(t testing.TB) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), e.url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

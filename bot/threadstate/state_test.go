package threadstate

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"agentbot/engine/fixtures"
	"agentbot/engine/transcript"
	"agentbot/storage/bolt"
)

// A session stored with one Meta key per field (the form before
// State) reads into the same state, and writing the state replaces
// those keys with the one; other Meta entries stay.
func TestThreadStateReadsTheOldKeys(t *testing.T) {
	s := &transcript.Session{ID: "s1", Meta: map[string]string{
		"bot.owner":     "U1",
		"bot.seq":       "42",
		"bot.posted":    "41",
		"bot.pending":   "first\n\nsecond",
		"bot.approvals": `{"call_1":"1700000000.000100"}`,
		"bot.feedback":  `[{"ts":"1.2","user":"U2","value":"positive","agent":"pm","workflow":"brief","time":"2026-11-22T15:55:00Z"}]`,
		"bot.workflow":  "create-prd",
		"other":         "kept",
	}}
	want := State{Owner: "U1", Seq: 42, Posted: 41, Pending: "first\n\nsecond",
		Approvals: map[string]string{"call_1": "1700000000.000100"},
		Feedback:  []Feedback{{TS: "1.2", User: "U2", Value: "positive", Agent: "pm", Workflow: "brief", Time: time.Date(2026, 11, 22, 15, 55, 0, 0, time.UTC)}},
		Workflow:  "create-prd"}
	got, err := Of(s)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Of(old keys) = %+v, %v\nwant %+v", got, err, want)
	}
	Put(s, got)
	for k := range s.Meta {
		if strings.HasPrefix(k, "bot.") && k != MetaKey {
			t.Errorf("old key %s left after Put", k)
		}
	}
	if s.Meta["other"] != "kept" {
		t.Errorf("Put dropped another Meta entry: %v", s.Meta)
	}
	again, err := Of(s)
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("Of after Put = %+v, %v", again, err)
	}
}

// A part of the old form that does not parse is reported, and the rest is
// still read; a damaged new form is reported as a whole.
func TestThreadStateDamaged(t *testing.T) {
	s := &transcript.Session{ID: "s2", Meta: map[string]string{
		"bot.owner": "U1", "bot.seq": "not a number", "bot.approvals": "{", "bot.feedback": "[1,", "bot.workflow": "brief",
	}}
	got, err := Of(s)
	if err == nil || !strings.Contains(err.Error(), "s2") || !strings.Contains(err.Error(), "seq") || !strings.Contains(err.Error(), "approvals") || !strings.Contains(err.Error(), "feedback") {
		t.Fatalf("damaged old keys: err = %v", err)
	}
	if got.Owner != "U1" || got.Workflow != "brief" || got.Seq != 0 || got.Feedback != nil {
		t.Fatalf("the readable parts were not kept: %+v", got)
	}
	s.Meta = map[string]string{MetaKey: `{"owner":`}
	if _, err := Of(s); err == nil {
		t.Fatal("a damaged thread state read without an error")
	}
}

// The session of storage/bolt/testdata/v1, written by the first release, has
// no thread state: it reads as the zero state, and a state written to it
// survives a save and a reopen, its transcript untouched.
func TestThreadStateOnV1Data(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fixtures.CopyDir(t, filepath.Join(fixtures.RepoRoot(t), "storage", "bolt", "testdata", "v1"), dir)
	st, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const id = "lgjnajbfftn7e" // the session in testdata/v1 (storage/bolt/schema_test.go)
	rec, err := st.SessionByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	msgs := len(rec.Messages)
	got, err := Of(rec)
	if err != nil || !reflect.DeepEqual(got, State{}) {
		t.Fatalf("Of(v1 session) = %+v, %v", got, err)
	}
	want := State{Owner: "U1", Seq: 7, Workflow: "brief"}
	Put(rec, want)
	if err := st.SaveSession(ctx, rec); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec, err = st.SessionByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Of(rec); err != nil || !reflect.DeepEqual(got, want) || len(rec.Messages) != msgs {
		t.Fatalf("after a save and a reopen: %+v, %v, %d messages (want %d)", got, err, len(rec.Messages), msgs)
	}
}

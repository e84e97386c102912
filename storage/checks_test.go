package storage_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// TestChecks: the argument checks every store applies accept what a store
// can key and refuse the rest, each refusal naming what is wrong.
func TestChecks(t *testing.T) {
	long := strings.Repeat("x", storage.MaxKeyLen+1)
	for _, c := range []struct {
		name string
		err  error
		want string // "" accepts; else a part of the refusal
	}{
		{"key", storage.CheckKey("session key", "T/C/1.2"), ""},
		{"empty key", storage.CheckKey("session key", ""), "empty session key"},
		{"long key", storage.CheckKey("session key", long), "session key too long"},
		{"id", storage.CheckID("abc234"), ""},
		{"id with a slash", storage.CheckID("../x"), "only a-z and 0-9"},
		{"seen", storage.CheckSeen("event:Ev1", time.Minute), ""},
		{"seen without ttl", storage.CheckSeen("event:Ev1", 0), "ttl must be positive"},
		{"seen empty key", storage.CheckSeen("", time.Minute), "empty seen key"},
		{"admit", storage.CheckAdmit([]string{"e1"}, time.Minute, "k", []byte(`{}`)), ""},
		{"admit without keys or ttl", storage.CheckAdmit(nil, 0, "k", []byte(`{}`)), ""},
		{"admit not JSON", storage.CheckAdmit(nil, 0, "k", []byte(`{`)), "not valid JSON"},
		{"admit without ttl", storage.CheckAdmit([]string{"e1"}, 0, "k", []byte(`{}`)), "ttl must be positive"},
		{"admit empty dedupe key", storage.CheckAdmit([]string{""}, time.Minute, "k", []byte(`{}`)), "empty seen key"},
		{"admit empty session key", storage.CheckAdmit(nil, 0, "", []byte(`{}`)), "empty session key"},
		{"output path", storage.CheckOutputPath("docs/prd.md"), ""},
		{"empty output path", storage.CheckOutputPath(""), "empty document path"},
		{"output path with NUL", storage.CheckOutputPath("a\x00b"), "NUL byte"},
		{"long output path", storage.CheckOutputPath(long), "too long"},
		{"lease", storage.CheckLease("T/C/1.2", "replica-1"), ""},
		{"lease without holder", storage.CheckLease("T/C/1.2", ""), "empty lease holder"},
		{"lease without key", storage.CheckLease("", "replica-1"), "empty lease key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			switch {
			case c.want == "" && c.err != nil:
				t.Fatalf("refused: %v", c.err)
			case c.want != "" && c.err == nil:
				t.Fatalf("accepted; want a refusal with %q", c.want)
			case c.want != "" && !strings.Contains(c.err.Error(), c.want):
				t.Fatalf("refusal %q does not say %q", c.err, c.want)
			}
		})
	}
}

// TestChannelKey: a channel's key is "team/channel"; a slash in either
// part or an empty channel is refused, an empty team is not.
func TestChannelKey(t *testing.T) {
	for _, c := range []struct{ team, channel, want string }{
		{"T1", "C1", "T1/C1"},
		{"", "C1", "/C1"},
		{"T1", "", ""},
		{"T/1", "C1", ""},
		{"T1", "C/1", ""},
		{strings.Repeat("t", storage.MaxKeyLen+1), "C1", ""},
	} {
		got, err := storage.ChannelKey(c.team, c.channel)
		if (err == nil) != (c.want != "") || got != c.want {
			t.Errorf("ChannelKey(%.10q, %q) = %q, %v; want %q", c.team, c.channel, got, err, c.want)
		}
	}
}

// TestCleanChannelTools: the servers a channel adds come back sorted and
// without duplicates, nil when none; empty names and more than 64 are
// refused.
func TestCleanChannelTools(t *testing.T) {
	got, err := storage.CleanChannelTools([]string{"notes", "jira", "notes"})
	if err != nil || !reflect.DeepEqual(got, []string{"jira", "notes"}) {
		t.Fatalf("CleanChannelTools = %v, %v; want [jira notes]", got, err)
	}
	if got, err := storage.CleanChannelTools(nil); got != nil || err != nil {
		t.Fatalf("CleanChannelTools(nil) = %v, %v; want nil, nil", got, err)
	}
	if _, err := storage.CleanChannelTools([]string{"jira", ""}); err == nil {
		t.Fatal("an empty server name was accepted")
	}
	many := make([]string, 65)
	for i := range many {
		many[i] = fmt.Sprintf("s%02d", i)
	}
	if _, err := storage.CleanChannelTools(many); err == nil || !strings.Contains(err.Error(), "too many servers") {
		t.Fatalf("65 servers: err = %v; want too many servers", err)
	}
	if got, err := storage.CleanChannelTools(many[:64]); err != nil || len(got) != 64 {
		t.Fatalf("64 servers = %d, %v; want all 64", len(got), err)
	}
}

// TestFound: FindSession's (nil, nil) for a missing session, and every
// other answer of Session passed through.
func TestFound(t *testing.T) {
	sess := &transcript.Session{ID: "abc"}
	if got, err := storage.Found(nil, fmt.Errorf("load session %q: %w", "k", storage.ErrNotFound)); got != nil || err != nil {
		t.Fatalf("not found = %v, %v; want nil, nil", got, err)
	}
	if got, err := storage.Found(sess, nil); got != sess || err != nil {
		t.Fatalf("found = %v, %v; want the session", got, err)
	}
	broken := errors.New("disk on fire")
	if got, err := storage.Found(nil, broken); got != nil || !errors.Is(err, broken) {
		t.Fatalf("failure = %v, %v; want the error", got, err)
	}
}

// TestMetaJSON: SetMetaJSON changes one Meta entry of stored metadata and
// keeps the rest; EncodeMeta never stores the messages.
func TestMetaJSON(t *testing.T) {
	sess := &transcript.Session{ID: "abc", Key: "T/C/1", Meta: map[string]string{"keep": "1", "drop": "2"},
		Messages: []transcript.Message{{Role: "user", Content: "hi"}}}
	meta, err := storage.EncodeMeta(sess)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(meta), "hi") {
		t.Fatalf("EncodeMeta kept the messages: %s", meta)
	}
	if len(sess.Messages) != 1 {
		t.Fatal("EncodeMeta changed the session")
	}
	meta, err = storage.SetMetaJSON(meta, "drop", "")
	if err == nil {
		meta, err = storage.SetMetaJSON(meta, "new", "3")
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(meta), `"keep":"1"`) || !strings.Contains(string(meta), `"new":"3"`) || strings.Contains(string(meta), "drop") {
		t.Fatalf("meta after SetMetaJSON = %s; want keep and new, not drop", meta)
	}
	if _, err := storage.SetMetaJSON([]byte("{"), "a", "b"); err == nil {
		t.Fatal("SetMetaJSON accepted broken JSON")
	}
}

func TestOrderOf(t *testing.T) {
	for ts, want := range map[string]int64{
		"1700000000.000100": 1700000000000100,
		"1700000000.1":      1700000000100000,
		"1700000000.123456": 1700000000123456,
		"":                  0,
		"abc.def":           0,
		"1700000000":        0,
		"1.1234567":         0,
		"-5.000001":         0,
	} {
		if got := storage.OrderOf(ts); got != want {
			t.Errorf("OrderOf(%q) = %d, want %d", ts, got, want)
		}
	}
}

// Package storetest is the storage contract suite: one table of named
// behaviours that every storage.Backend must show, run by each store's own
// tests (Run), and the inbound-message benchmark body (BenchInbound).
//
// It uses only the Backend interface, plus SetNow (the Clock interface)
// where a behaviour needs to move time; a backend without it skips those.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Clock is met by a backend whose clock (session times, seen expiry) a
// test can replace. Leases need not follow it: they may use a clock the
// replicas share.
type Clock interface {
	SetNow(now func() time.Time)
}

// Open returns a fresh, empty backend for one test and closes it at the
// test's cleanup.
type Open func(t *testing.T) storage.Backend

// behaviour is one named entry of the contract.
type behaviour struct {
	name string
	run  func(t *testing.T, b storage.Backend)
}

// Run runs every behaviour of the contract as a subtest, each on a fresh
// backend from open.
func Run(t *testing.T, open Open) {
	for _, bh := range behaviours {
		t.Run(bh.name, func(t *testing.T) { bh.run(t, open(t)) })
	}
}

// Names lists the behaviours, in order.
func Names() []string {
	var names []string
	for _, bh := range behaviours {
		names = append(names, bh.name)
	}
	return names
}

var behaviours = []behaviour{
	{"NewSessionIsEmptyAndFound", newSessionIsEmptyAndFound},
	{"NewSessionTwiceIsErrExists", newSessionTwiceIsErrExists},
	{"MissingIsErrNotFound", missingIsErrNotFound},
	{"SaveSessionRoundTrips", saveSessionRoundTrips},
	{"SaveSessionAppendsInSteps", saveSessionAppendsInSteps},
	{"SaveSessionRefusesShorterTranscript", saveSessionRefusesShorter},
	{"SaveSessionRefusesWrongKey", saveSessionRefusesWrongKey},
	{"DetachThenNewSessionForKey", detachThenNewSession},
	{"SetMetaKeepsTranscript", setMetaKeepsTranscript},
	{"FindMetaLeavesTranscriptOut", findMeta},
	{"WaitingSessionsFollowPending", waitingSessions},
	{"DeleteSessionRemovesAll", deleteSessionRemovesAll},
	{"PruneRemovesOldSessions", pruneRemovesOld},
	{"ListSessionsMostRecentFirst", listSessionsOrder},
	{"PersonSessionsFromTheIndex", personSessions}, // people.go
	{"LookupByIDThenKey", lookupByIDThenKey},
	{"BadKeysAndIDsRejected", badKeysRejected},
	{"SeenMarksUntilExpiry", seenMarksUntilExpiry},
	{"AdmitSameKeyTwiceIsDup", admitSameKeyTwice},
	{"AdmitTwoKeysOneMarkedIsDup", admitTwoKeysOneMarked},
	{"AdmitAgainAfterExpiry", admitAgainAfterExpiry},
	{"AdmitQueuesInOrder", admitQueuesInOrder},
	{"AdmitRejectsBadInput", admitRejectsBadInput},
	{"QueueNextPendingDequeue", queueNextPendingDequeue},
	{"ChannelDefaultsSetAndClear", channelDefaults},
	{"ChannelToolsSetSortedAndClear", channelTools},
	{"DailyUsageAddsPerTeamAndDay", dailyUsage},
	{"OutputsVersionsLatestReplace", outputsVersions},
	{"OutputsDeletedWithSession", outputsDeletedWithSession},
	{"LeaseExclusiveRenewRelease", leaseExclusive},
	{"LeaseTakeoverAfterExpiry", leaseTakeover},
	{"LeaseTokensGrowAndFence", leaseTokensGrow},
	{"LeaseRenewNeverRetakes", leaseRenewNeverRetakes},
	{"FencedWritesRefusedWhenStale", fencedWritesRefused},
	{"CompleteFencedIsOneWrite", completeFenced},
	{"QueueOrdersByMessageTs", queueOrdersByTs},
	{"ConcurrentSavesOfDifferentSessions", concurrentSaves},
	{"ConcurrentAdmissions", concurrentAdmissions},
	{"FoldersAndPing", foldersAndPing},
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// clock installs a fake clock on b, or skips when b has none.
func clock(t *testing.T, b storage.Backend) *fakeClock {
	t.Helper()
	cb, ok := b.(Clock)
	if !ok {
		t.Skip("backend has no SetNow")
	}
	c := &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)}
	cb.SetNow(c.Now)
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newSession(t *testing.T, b storage.Backend, key string) *transcript.Session {
	ctx := context.Background()
	t.Helper()
	s, err := b.NewSession(ctx, key)
	if err != nil {
		t.Fatalf("NewSession(%q): %v", key, err)
	}
	return s
}

func msg(role, content string) transcript.Message {
	return transcript.Message{Role: role, Content: content}
}

// sameSession fails unless got and want are the same session; times
// compare as instants.
func sameSession(t *testing.T, got, want *transcript.Session) {
	t.Helper()
	g, w := *got, *want
	if !g.Created.Equal(w.Created) || !g.Updated.Equal(w.Updated) {
		t.Errorf("times: got created %v updated %v, want %v %v", g.Created, g.Updated, w.Created, w.Updated)
	}
	g.Created, g.Updated, w.Created, w.Updated = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	for _, s := range []*transcript.Session{&g, &w} {
		s.Outputs = slices.Clone(s.Outputs)
		for i := range s.Outputs {
			s.Outputs[i].Time = s.Outputs[i].Time.UTC()
		}
		if len(s.Messages) == 0 {
			s.Messages = nil
		}
	}
	if !reflect.DeepEqual(g, w) {
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		t.Errorf("session differs:\n got %s\nwant %s", gj, wj)
	}
}

func newSessionIsEmptyAndFound(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	c := clock(t, b)
	s := newSession(t, b, "T1/C1/1.0")
	if s.ID == "" || s.Key != "T1/C1/1.0" || len(s.Messages) != 0 {
		t.Fatalf("new session: %+v", s)
	}
	if !s.Created.Equal(c.Now()) || !s.Updated.Equal(c.Now()) {
		t.Errorf("created %v updated %v, want the clock's %v", s.Created, s.Updated, c.Now())
	}
	for name, load := range map[string]func() (*transcript.Session, error){
		"Session":     func() (*transcript.Session, error) { return storage.Session(ctx, b, s.Key) },
		"SessionByID": func() (*transcript.Session, error) { return b.SessionByID(ctx, s.ID) },
		"FindSession": func() (*transcript.Session, error) { return b.FindSession(ctx, s.Key) },
		"Lookup":      func() (*transcript.Session, error) { return storage.Lookup(ctx, b, s.ID) },
	} {
		got, err := load()
		if err != nil || got == nil {
			t.Fatalf("%s: %v, %v", name, got, err)
		}
		sameSession(t, got, s)
	}
	if ok, err := storage.HasSession(ctx, b, s.Key); err != nil || !ok {
		t.Errorf("HasSession(own key) = %v, %v", ok, err)
	}
	if ok, err := storage.HasSession(ctx, b, "T1/C1/2.0"); err != nil || ok {
		t.Errorf("HasSession(other key) = %v, %v", ok, err)
	}
	other := newSession(t, b, "T1/C1/2.0")
	if other.ID == s.ID {
		t.Errorf("two sessions share id %s", s.ID)
	}
}

func newSessionTwiceIsErrExists(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "k")
	_, err := b.NewSession(ctx, "k")
	if !errors.Is(err, storage.ErrExists) {
		t.Fatalf("second NewSession: %v, want ErrExists", err)
	}
	got, err := storage.Session(ctx, b, "k")
	must(t, err)
	if got.ID != s.ID {
		t.Errorf("key now holds %s, want the first session %s", got.ID, s.ID)
	}
}

func missingIsErrNotFound(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	const id = "aaaaaaaaaaaaa"
	if _, err := storage.Session(ctx, b, "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Session: %v", err)
	}
	if _, err := b.SessionByID(ctx, id); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("SessionByID: %v", err)
	}
	if s, err := b.FindSession(ctx, "nope"); s != nil || err != nil {
		t.Errorf("FindSession = %v, %v; want nil, nil", s, err)
	}
	if _, err := storage.Lookup(ctx, b, id); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Lookup: %v", err)
	}
	if err := b.DetachSession(ctx, id); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("DetachSession: %v", err)
	}
	if err := b.DeleteSession(ctx, id); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("DeleteSession: %v", err)
	}
	if err := b.SaveSession(ctx, &transcript.Session{ID: id, Key: "nope"}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("SaveSession of an unknown id: %v", err)
	}
	if err := Dequeue(ctx, b, "nope", 42); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Dequeue: %v", err)
	}
	if _, err := b.OutputData(ctx, id, "a.md", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("OutputData: %v", err)
	}
}

// fullSession fills every field of s a store must keep.
func fullSession(s *transcript.Session) {
	s.AgentID = "pm"
	s.Agent = &transcript.AgentSnapshot{ID: "pm", Name: "John", Title: "Product Manager", Icon: "📋", Source: "bundle", Format: "md"}
	s.Date = "2026-03-01"
	s.Vars = map[string]string{"project-root": "/project", "lang": "Français ✓"}
	s.Messages = []transcript.Message{
		msg(transcript.RoleSystem, "You are John."),
		msg(transcript.RoleUser, "Write a PRD\nwith \"quotes\" and \\ and \x00-free unicode: 日本"),
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "call_1", Type: transcript.ToolTypeFunction,
			Function: transcript.FunctionCall{Name: "read_file", Arguments: `{"path":"a.md"}`}}}},
		{Role: transcript.RoleTool, ToolCallID: "call_1", Content: "contents"},
		{Role: transcript.RoleAssistant, Refusal: "no"},
	}
	s.Skill = &transcript.ActiveSkill{Name: "create-prd", Root: "/project/skills/create-prd", Vars: map[string]string{"x": "y"}}
	s.Compaction = &transcript.Compaction{Upto: 2, Summary: "sum", Kept: &transcript.KeptCall{Assistant: 2, CallID: "call_1", Result: 3}}
	s.TokenRatio = 1.25
	s.PrefixBreaks, s.Window, s.Compactions, s.Elided = 1, 8000, 2, 3
	s.Outputs = []transcript.Output{{Path: "prd.md", Size: 10, Version: 1, Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}}
	s.Meta = map[string]string{"user": "U1"}
	s.Usage = transcript.Usage{Prompt: 100, Cached: 20, Completion: 30, Calls: 2}
}

func saveSessionRoundTrips(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	c := clock(t, b)
	s := newSession(t, b, "T/C/1")
	fullSession(s)
	c.Add(time.Minute)
	must(t, b.SaveSession(ctx, s))
	if !s.Updated.Equal(c.Now()) {
		t.Errorf("SaveSession set Updated to %v, want %v", s.Updated, c.Now())
	}
	got, err := storage.Session(ctx, b, "T/C/1")
	must(t, err)
	sameSession(t, got, s)
	got, err = b.SessionByID(ctx, s.ID)
	must(t, err)
	sameSession(t, got, s)
}

func saveSessionAppendsInSteps(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "k")
	s.Messages = append(s.Messages, msg("system", "sys"))
	must(t, b.SaveSession(ctx, s))
	s.Messages = append(s.Messages, msg("user", "one"), msg("assistant", "two"))
	must(t, b.SaveSession(ctx, s))
	s.AgentID = "changed" // metadata alone
	must(t, b.SaveSession(ctx, s))
	// A copy loaded now appends after the stored messages.
	copy2, err := b.SessionByID(ctx, s.ID)
	must(t, err)
	sameSession(t, copy2, s)
	copy2.Messages = append(copy2.Messages, msg("user", "three"))
	must(t, b.SaveSession(ctx, copy2))
	got, err := storage.Session(ctx, b, "k")
	must(t, err)
	var contents []string
	for _, m := range got.Messages {
		contents = append(contents, m.Content)
	}
	if want := []string{"sys", "one", "two", "three"}; !slices.Equal(contents, want) || got.AgentID != "changed" {
		t.Fatalf("transcript %q agent %q, want %q agent changed", contents, got.AgentID, want)
	}
}

func saveSessionRefusesShorter(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "k")
	s.Messages = []transcript.Message{msg("system", "a"), msg("user", "b"), msg("assistant", "c")}
	must(t, b.SaveSession(ctx, s))
	short := *s
	short.Messages = s.Messages[:2]
	short.AgentID = "should not stick"
	if err := b.SaveSession(ctx, &short); err == nil {
		t.Fatal("saving a shorter transcript succeeded")
	}
	got, err := b.SessionByID(ctx, s.ID)
	must(t, err)
	if len(got.Messages) != 3 || got.AgentID == "should not stick" {
		t.Errorf("after the refused save: %d messages, agent %q", len(got.Messages), got.AgentID)
	}
}

func saveSessionRefusesWrongKey(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "k1")
	newSession(t, b, "k2")
	wrong := *s
	wrong.Key = "k2"
	if err := b.SaveSession(ctx, &wrong); err == nil {
		t.Fatal("saving under another session's key succeeded")
	}
	wrong.Key = "k3"
	if err := b.SaveSession(ctx, &wrong); err == nil {
		t.Fatal("saving under a key the session does not hold succeeded")
	}
	got, err := storage.Session(ctx, b, "k2")
	must(t, err)
	if got.ID == s.ID {
		t.Error("k2 now names the first session")
	}
}

// waitingSessions: a session saved with a pending approval is listed by
// WaitingSessions until a save without one; detached and deleted sessions
// are not listed.
func waitingSessions(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	list := func() []string {
		t.Helper()
		keys, err := b.WaitingSessions(ctx)
		must(t, err)
		return keys
	}
	a, c := newSession(t, b, "a"), newSession(t, b, "c")
	if got := list(); len(got) != 0 {
		t.Fatalf("waiting before any approval: %q", got)
	}
	pending := []transcript.Approval{{CallID: "call_1", Tool: "files__write", Args: "{}", Asked: time.Unix(1700000000, 0)}}
	a.Pending, c.Pending = pending, pending
	must(t, b.SaveSession(ctx, a))
	must(t, b.SaveSession(ctx, c))
	if got := list(); len(got) != 2 || got[0] != "a" || got[1] != "c" {
		t.Fatalf("waiting = %q, want [a c]", got)
	}
	a.Pending = nil
	must(t, b.SaveSession(ctx, a))
	if got := list(); len(got) != 1 || got[0] != "c" {
		t.Fatalf("waiting after a was decided = %q, want [c]", got)
	}
	must(t, b.DetachSession(ctx, c.ID))
	if got := list(); len(got) != 0 {
		t.Fatalf("a detached session is listed: %q", got)
	}
	d := newSession(t, b, "d")
	d.Pending = pending
	must(t, b.SaveSession(ctx, d))
	must(t, b.DeleteSession(ctx, d.ID))
	if got := list(); len(got) != 0 {
		t.Fatalf("a deleted session is listed: %q", got)
	}
}

// findMeta: FindMeta returns the key's session without its messages,
// (nil, nil) for a key without one, and nothing for a detached session.
func findMeta(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "k")
	s.Meta = map[string]string{"owner": "U1"}
	s.Pending = []transcript.Approval{{CallID: "call_1", Tool: "files__write", Args: "{}", Asked: time.Unix(1700000000, 0)}}
	s.Messages = []transcript.Message{msg("system", "sys"), msg("user", "hi")}
	must(t, b.SaveSession(ctx, s))
	got, err := b.FindMeta(ctx, "k")
	must(t, err)
	if got == nil || got.ID != s.ID || got.Meta["owner"] != "U1" || len(got.Pending) != 1 || len(got.Messages) != 0 {
		t.Fatalf("FindMeta = %+v", got)
	}
	if got, err := b.FindMeta(ctx, "nobody"); err != nil || got != nil {
		t.Fatalf("FindMeta of a key without a session = %+v, %v", got, err)
	}
	must(t, b.DetachSession(ctx, s.ID))
	if got, err := b.FindMeta(ctx, "k"); err != nil || got != nil {
		t.Fatalf("FindMeta of a detached key = %+v, %v", got, err)
	}
}

// setMetaKeepsTranscript: SetMeta changes one Meta entry of the key's
// session and nothing else; later saves still append; "" deletes; a key
// without a session (or only a detached one) is ErrNotFound.
func setMetaKeepsTranscript(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "k")
	s.Meta = map[string]string{"a": "1"}
	s.Messages = []transcript.Message{msg("system", "sys"), msg("user", "hi")}
	must(t, b.SaveSession(ctx, s))
	must(t, b.SetMeta(ctx, "k", "posted", "42"))
	got, err := storage.Session(ctx, b, "k")
	must(t, err)
	if got.Meta["posted"] != "42" || got.Meta["a"] != "1" || len(got.Messages) != 2 || got.Messages[1].Content != "hi" {
		t.Fatalf("after SetMeta: meta %v, %d messages", got.Meta, len(got.Messages))
	}
	got.Messages = append(got.Messages, msg("assistant", "hello"))
	must(t, b.SaveSession(ctx, got))
	must(t, b.SetMeta(ctx, "k", "a", ""))
	got, err = storage.Session(ctx, b, "k")
	must(t, err)
	if _, ok := got.Meta["a"]; ok || got.Meta["posted"] != "42" || len(got.Messages) != 3 {
		t.Fatalf("after deleting a: meta %v, %d messages", got.Meta, len(got.Messages))
	}
	if err := b.SetMeta(ctx, "nobody", "x", "1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("SetMeta on a key without a session: %v", err)
	}
	must(t, b.DetachSession(ctx, s.ID))
	if err := b.SetMeta(ctx, "k", "x", "1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("SetMeta on a detached key: %v", err)
	}
}

func detachThenNewSession(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	old := newSession(t, b, "k")
	old.Messages = []transcript.Message{msg("system", "old")}
	must(t, b.SaveSession(ctx, old))
	must(t, b.DetachSession(ctx, old.ID))
	if ok, err := storage.HasSession(ctx, b, "k"); err != nil || ok {
		t.Fatalf("HasSession after detach = %v, %v", ok, err)
	}
	if _, err := storage.Session(ctx, b, "k"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Session after detach: %v", err)
	}
	kept, err := b.SessionByID(ctx, old.ID)
	must(t, err)
	if len(kept.Messages) != 1 || kept.Key != "k" {
		t.Errorf("detached session: %d messages, key %q", len(kept.Messages), kept.Key)
	}
	fresh := newSession(t, b, "k")
	if fresh.ID == old.ID {
		t.Fatal("NewSession after detach reused the id")
	}
	if got, err := storage.Session(ctx, b, "k"); err != nil || got.ID != fresh.ID {
		t.Fatalf("Session(k) = %v, %v; want the new session", got, err)
	}
	if err := b.SaveSession(ctx, kept); err == nil {
		t.Error("saving the detached session over the key's new session succeeded")
	}
	must(t, b.DetachSession(ctx, old.ID)) // again: no change
	if got, err := storage.Session(ctx, b, "k"); err != nil || got.ID != fresh.ID {
		t.Fatalf("detaching the old session again freed the new one: %v, %v", got, err)
	}
	list, err := b.ListSessions(ctx)
	must(t, err)
	if len(list) != 2 {
		t.Errorf("ListSessions has %d sessions, want both", len(list))
	}
}

func deleteSessionRemovesAll(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "k")
	s.Messages = []transcript.Message{msg("system", "x")}
	must(t, b.SaveSession(ctx, s))
	in, err := workFolders(t, b).Session("inputs", s.ID)
	must(t, err)
	out, err := workFolders(t, b).Session("outputs", s.ID)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(out, "prd.md"), []byte("doc"), 0o600))
	must(t, os.WriteFile(filepath.Join(in, "in.txt"), []byte("in"), 0o600))
	must(t, b.PutOutput(ctx, s.ID, transcript.Output{Path: "prd.md", Version: 1, Size: 3}, []byte("doc")))
	if _, err := Enqueue(ctx, b, "k", []byte(`{"text":"queued"}`)); err != nil {
		t.Fatal(err)
	}
	must(t, b.DeleteSession(ctx, s.ID))
	if _, err := b.SessionByID(ctx, s.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("SessionByID after delete: %v", err)
	}
	if ok, _ := storage.HasSession(ctx, b, "k"); ok {
		t.Error("key still has a session")
	}
	for _, dir := range []string{in, out} {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("folder %s after delete: %v", dir, err)
		}
	}
	if items, err := b.Pending(ctx, "k"); err != nil || len(items) != 1 {
		t.Errorf("queued items of the key after delete: %d, %v; want 1 kept", len(items), err)
	}
	if err := b.DeleteSession(ctx, s.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	newSession(t, b, "k")
}

func pruneRemovesOld(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	c := clock(t, b)
	old := newSession(t, b, "old")
	detached := newSession(t, b, "detached")
	must(t, b.DetachSession(ctx, detached.ID))
	c.Add(time.Hour)
	cut := c.Now()
	c.Add(time.Hour)
	young := newSession(t, b, "young")
	ids, err := b.Prune(ctx, cut)
	must(t, err)
	sort.Strings(ids)
	want := []string{old.ID, detached.ID}
	sort.Strings(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("Prune = %v, want %v", ids, want)
	}
	list, err := b.ListSessions(ctx)
	must(t, err)
	if len(list) != 1 || list[0].ID != young.ID {
		t.Fatalf("left after prune: %+v", list)
	}
	if ids, err := b.Prune(ctx, cut); err != nil || len(ids) != 0 {
		t.Errorf("second Prune = %v, %v", ids, err)
	}
	newSession(t, b, "old") // the key is free
}

func listSessionsOrder(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	c := clock(t, b)
	if list, err := b.ListSessions(ctx); err != nil || len(list) != 0 {
		t.Fatalf("empty store lists %v, %v", list, err)
	}
	a := newSession(t, b, "a")
	c.Add(time.Second)
	bb := newSession(t, b, "b")
	c.Add(time.Second)
	cc := newSession(t, b, "c")
	c.Add(time.Second)
	a.AgentID = "pm"
	a.Messages = []transcript.Message{msg("system", "s"), msg("user", "u")}
	a.Outputs = []transcript.Output{{Path: "x.md", Version: 1}, {Path: "x.md", Version: 2}}
	a.Usage = transcript.Usage{Prompt: 5, Cached: 1, Completion: 2, Calls: 1}
	must(t, b.SaveSession(ctx, a))
	list, err := b.ListSessions(ctx)
	must(t, err)
	var ids []string
	for _, info := range list {
		ids = append(ids, info.ID)
	}
	if want := []string{a.ID, cc.ID, bb.ID}; !slices.Equal(ids, want) {
		t.Fatalf("order %v, want %v (most recently updated first)", ids, want)
	}
	got := list[0]
	if got.Key != "a" || got.AgentID != "pm" || got.Messages != 2 || got.Outputs != 2 ||
		got.Usage.Prompt != 5 || got.Usage.Cached != 1 || got.Usage.Completion != 2 || got.Usage.Calls != 1 ||
		!got.Updated.Equal(a.Updated) || !got.Created.Equal(a.Created) {
		t.Errorf("info %+v does not describe %+v", got, a)
	}
}

func lookupByIDThenKey(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "team/chan/1")
	byID, err := storage.Lookup(ctx, b, s.ID)
	must(t, err)
	byKey, err := storage.Lookup(ctx, b, "team/chan/1")
	must(t, err)
	if byID.ID != s.ID || byKey.ID != s.ID {
		t.Errorf("Lookup found %s and %s, want %s", byID.ID, byKey.ID, s.ID)
	}
	// A key that looks like an id: the id wins.
	other := newSession(t, b, s.ID)
	if got, err := storage.Lookup(ctx, b, s.ID); err != nil || got.ID != s.ID {
		t.Errorf("Lookup(id that is also a key) = %v, %v; want the session with that id", got, err)
	}
	must(t, b.DeleteSession(ctx, s.ID))
	if got, err := storage.Lookup(ctx, b, s.ID); err != nil || got.ID != other.ID {
		t.Errorf("Lookup falls back to the key: %v, %v", got, err)
	}
	if _, err := storage.Lookup(ctx, b, "no/such/key"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Lookup(unknown) = %v", err)
	}
}

// badKeysRejected: every call with a bad key, id, path, channel, ttl,
// holder, payload or version is refused, and the store keeps working.
func badKeysRejected(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	for _, c := range badInputCalls(b) {
		if c.call() == nil {
			t.Error(c.name + " succeeded")
		}
	}
	if _, err := b.SessionByID(ctx, "../etc"); err == nil || errors.Is(err, storage.ErrNotFound) {
		t.Errorf("SessionByID(bad id) = %v, want a validation error", err)
	}
	doc := newSession(t, b, "doc")
	for _, c := range badOutputCalls(b, doc.ID) {
		if c.call() == nil {
			t.Error(c.name + " succeeded")
		}
	}
	if _, err := b.OutputData(ctx, doc.ID, "a.md", -1); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("OutputData with version -1: %v, want ErrNotFound", err)
	}
	// The store keeps working after the bad calls.
	newSession(t, b, "fine")
}

// badCall is one call with bad input a store must refuse; name describes
// it in the failure message.
type badCall struct {
	name string
	call func() error
}

// errOf drops a call's result and keeps its error.
func errOf[T any](_ T, err error) error { return err }

// badInputCalls lists the refused calls that need no session: a bad
// session key or id, seen key, ttl, payload, channel, lease holder or key.
func badInputCalls(b storage.Backend) []badCall {
	ctx := context.Background()
	long := strings.Repeat("x", storage.MaxKeyLen+1)
	return []badCall{
		{`NewSession("")`, func() error { return errOf(b.NewSession(ctx, "")) }},
		{"NewSession(too long)", func() error { return errOf(b.NewSession(ctx, long)) }},
		{`Seen("")`, func() error { return errOf(b.Seen(ctx, "", time.Minute)) }},
		{"Seen with ttl 0", func() error { return errOf(b.Seen(ctx, "k", 0)) }},
		{"Enqueue(not JSON)", func() error { return errOf(Enqueue(ctx, b, "k", []byte("not json"))) }},
		{"SetChannelDefault with no channel", func() error { return storage.SetChannelDefault(ctx, b, "T", "", "pm") }},
		{"SetChannelDefault with '/' in the channel", func() error { return storage.SetChannelDefault(ctx, b, "T", "a/b", "pm") }},
		{"Lease with ttl 0", func() error { return errOf(Lease(ctx, b, "k", "h", 0)) }},
		{"Lease with no holder", func() error { return errOf(Lease(ctx, b, "k", "", time.Minute)) }},
		{"ReleaseLease with no key", func() error { return b.ReleaseLease(ctx, "", "h") }},
	}
}

// badOutputCalls lists the refused document calls on session id: each bad
// path with PutOutput and OutputData, version 0, and a bad session id.
func badOutputCalls(b storage.Backend, id string) []badCall {
	ctx := context.Background()
	var calls []badCall
	for _, path := range []string{"", "a\x00b", strings.Repeat("p", storage.MaxKeyLen+1)} {
		calls = append(calls,
			badCall{fmt.Sprintf("PutOutput with path %.20q", path), func() error {
				return b.PutOutput(ctx, id, transcript.Output{Path: path, Version: 1}, []byte("x"))
			}},
			badCall{fmt.Sprintf("OutputData with path %.20q", path), func() error { return errOf(b.OutputData(ctx, id, path, 0)) }})
	}
	return append(calls,
		badCall{"PutOutput with version 0", func() error {
			return b.PutOutput(ctx, id, transcript.Output{Path: "a.md", Version: 0}, []byte("x"))
		}},
		badCall{"OutputData with a bad session id", func() error { return errOf(b.OutputData(ctx, "../x", "a.md", 0)) }})
}

func seenMarksUntilExpiry(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	c := clock(t, b)
	check := func(key string, want bool) {
		t.Helper()
		got, err := b.Seen(ctx, key, 10*time.Minute)
		if err != nil || got != want {
			t.Fatalf("Seen(%s) = %v, %v; want %v", key, got, err, want)
		}
	}
	check("ev1", false)
	check("ev1", true)
	check("ev2", false)
	c.Add(9 * time.Minute)
	check("ev1", true) // keeps its first expiry: 10 min from the start
	// Past the expiry (a second of slack: a database clock the test shifts
	// moves on its own between calls, by a round trip at most).
	c.Add(time.Minute + time.Second)
	check("ev1", false) // expired: marked anew
	check("ev1", true)
	check("ev2", false)
}

func admitSameKeyTwice(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	dup, seq, err := Admit(ctx, b, []string{"ev1"}, 10*time.Minute, "k", []byte(`{"n":1}`))
	if err != nil || dup || seq == 0 {
		t.Fatalf("first Admit = %v, %d, %v", dup, seq, err)
	}
	dup, seq2, err := Admit(ctx, b, []string{"ev1"}, 10*time.Minute, "k", []byte(`{"n":2}`))
	if err != nil || !dup || seq2 != 0 {
		t.Fatalf("second Admit = %v, %d, %v; want dup", dup, seq2, err)
	}
	items, err := b.Pending(ctx, "k")
	must(t, err)
	if len(items) != 1 || items[0].Seq != seq || string(items[0].Payload) != `{"n":1}` {
		t.Fatalf("queued %+v, want the first only", items)
	}
	if dup, _ := b.Seen(ctx, "ev1", time.Minute); !dup {
		t.Error("Admit did not mark the key for Seen")
	}
	// One key given twice in one admission counts as marked already.
	if dup, _, err := Admit(ctx, b, []string{"ev9", "ev9"}, time.Minute, "k", []byte(`{}`)); err != nil || !dup {
		t.Errorf("Admit with a key twice = %v, %v; want dup", dup, err)
	}
}

func admitTwoKeysOneMarked(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	if _, err := b.Seen(ctx, "C1/1.0", 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	dup, _, err := Admit(ctx, b, []string{"Ev1", "C1/1.0"}, 10*time.Minute, "k", []byte(`{}`))
	if err != nil || !dup {
		t.Fatalf("Admit with one key marked = %v, %v; want dup", dup, err)
	}
	if items, _ := b.Pending(ctx, "k"); len(items) != 0 {
		t.Fatalf("a dup was queued: %+v", items)
	}
	// The other key got marked too: the same event under it is a dup.
	if dup, _, err := Admit(ctx, b, []string{"Ev1"}, 10*time.Minute, "k", []byte(`{}`)); err != nil || !dup {
		t.Errorf("Admit of the other key = %v, %v; want dup", dup, err)
	}
	if dup, _, err := Admit(ctx, b, []string{"Ev2", "C1/2.0"}, 10*time.Minute, "k", []byte(`{}`)); err != nil || dup {
		t.Errorf("Admit of two fresh keys = %v, %v; want admitted", dup, err)
	}
}

func admitAgainAfterExpiry(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	c := clock(t, b)
	if dup, _, err := Admit(ctx, b, []string{"ev"}, time.Minute, "k", []byte(`1`)); err != nil || dup {
		t.Fatalf("Admit = %v, %v", dup, err)
	}
	c.Add(59 * time.Second)
	if dup, _, _ := Admit(ctx, b, []string{"ev"}, time.Minute, "k", []byte(`2`)); !dup {
		t.Fatal("admitted again before expiry")
	}
	c.Add(2 * time.Second)
	if dup, _, err := Admit(ctx, b, []string{"ev"}, time.Minute, "k", []byte(`3`)); err != nil || dup {
		t.Fatalf("Admit after expiry = %v, %v; want admitted", dup, err)
	}
	items, err := b.Pending(ctx, "k")
	must(t, err)
	if len(items) != 2 || string(items[1].Payload) != "3" {
		t.Fatalf("queued %+v", items)
	}
}

func admitQueuesInOrder(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	var chans []<-chan storage.Admission
	for i := range 5 {
		chans = append(chans, Done(b.Admit(ctx, 0, []string{fmt.Sprintf("ev%d", i)}, time.Minute, "k", []byte(fmt.Sprint(i)))))
	}
	var seqs []uint64
	for i, ch := range chans {
		a := <-ch
		if a.Err != nil || a.Dup || a.Seq == 0 {
			t.Fatalf("admission %d: %+v", i, a)
		}
		seqs = append(seqs, a.Seq)
	}
	if !slices.IsSorted(seqs) || len(slices.Compact(slices.Clone(seqs))) != len(seqs) {
		t.Fatalf("seqs %v are not increasing in call order", seqs)
	}
	items, err := b.Pending(ctx, "k")
	must(t, err)
	for i, it := range items {
		if it.Seq != seqs[i] || string(it.Payload) != fmt.Sprint(i) {
			t.Fatalf("item %d = %d %s, want %d %d", i, it.Seq, it.Payload, seqs[i], i)
		}
	}
	if len(items) != 5 {
		t.Fatalf("%d items queued, want 5", len(items))
	}
	// No keys: a plain enqueue.
	if dup, seq, err := Admit(ctx, b, nil, 0, "k", []byte(`{}`)); err != nil || dup || seq <= seqs[4] {
		t.Errorf("Admit without keys = %v, %d, %v", dup, seq, err)
	}
}

func admitRejectsBadInput(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	for name, a := range map[string]func() storage.Admission{
		"not JSON": func() storage.Admission {
			return <-Done(b.Admit(ctx, 0, []string{"e1"}, time.Minute, "k", []byte("{")))
		},
		"empty key": func() storage.Admission {
			return <-Done(b.Admit(ctx, 0, []string{"e2"}, time.Minute, "", []byte("{}")))
		},
		"no ttl": func() storage.Admission { return <-Done(b.Admit(ctx, 0, []string{"e3"}, 0, "k", []byte("{}"))) },
		"empty seen key": func() storage.Admission {
			return <-Done(b.Admit(ctx, 0, []string{""}, time.Minute, "k", []byte("{}")))
		},
	} {
		if got := a(); got.Err == nil {
			t.Errorf("%s: admitted %+v", name, got)
		}
	}
	if items, _ := b.Pending(ctx, "k"); len(items) != 0 {
		t.Fatalf("bad admissions queued %+v", items)
	}
	// The keys of refused admissions are not marked.
	if dup, _, err := Admit(ctx, b, []string{"e1"}, time.Minute, "k", []byte(`{}`)); err != nil || dup {
		t.Errorf("Admit after a refused one = %v, %v", dup, err)
	}
}

func queueNextPendingDequeue(t *testing.T, b storage.Backend) {
	seqs, other := queueFilled(t, b)
	queueDrained(t, b, seqs, other)
}

// queueFilled checks an empty queue, then fills k1 with three items and
// k0 with one and checks what Pending and Next read; it returns k1's seqs
// and k0's.
func queueFilled(t *testing.T, b storage.Backend) ([]uint64, uint64) {
	ctx := context.Background()
	c := clock(t, b)
	queueEmpty(t, b)
	payloads := []string{`{"text":"one"}`, `{"text": "two",  "spaces":true}`, `[3]`}
	var seqs []uint64
	for _, p := range payloads {
		seq, err := Enqueue(ctx, b, "k1", []byte(p))
		must(t, err)
		seqs = append(seqs, seq)
	}
	s2, err := Enqueue(ctx, b, "k0", []byte(`"other"`))
	must(t, err)
	if s2 <= seqs[2] {
		t.Errorf("seq %d after %d: seqs are not global and growing", s2, seqs[2])
	}
	pendingItems(t, b, "k1", seqs, payloads, c.Now())
	seq, payload, ok, err := storage.Next(ctx, b, "k1")
	if err != nil || !ok || seq != seqs[0] || string(payload) != payloads[0] {
		t.Fatalf("Next = %d %s %v %v", seq, payload, ok, err)
	}
	if keys, err := b.PendingKeys(ctx); err != nil || !slices.Equal(keys, []string{"k0", "k1"}) {
		t.Fatalf("PendingKeys = %v, %v", keys, err)
	}
	return seqs, s2
}

// queueEmpty checks that a fresh store has nothing queued: Next finds no
// item and PendingKeys lists no key.
func queueEmpty(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	t.Helper()
	if _, _, ok, err := storage.Next(ctx, b, "k1"); ok || err != nil {
		t.Fatalf("Next on an empty queue = %v, %v", ok, err)
	}
	if keys, err := b.PendingKeys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("PendingKeys on an empty store = %v, %v", keys, err)
	}
}

// pendingItems checks that Pending(key) holds exactly the items seqs with
// payloads, in order, each enqueued within a second of at.
func pendingItems(t *testing.T, b storage.Backend, key string, seqs []uint64, payloads []string, at time.Time) {
	ctx := context.Background()
	t.Helper()
	items, err := b.Pending(ctx, key)
	must(t, err)
	if len(items) != len(seqs) {
		t.Fatalf("Pending = %+v", items)
	}
	for i, it := range items {
		if it.Seq != seqs[i] || !bytes.Equal(it.Payload, []byte(payloads[i])) || it.Enqueued.Sub(at).Abs() > time.Second {
			t.Errorf("item %d = %d %s %v, want %d %s %v", i, it.Seq, it.Payload, it.Enqueued, seqs[i], payloads[i], at)
		}
	}
}

// queueDrained dequeues the items queueFilled queued, in and out of order,
// and checks that seqs are never reused.
func queueDrained(t *testing.T, b storage.Backend, seqs []uint64, s2 uint64) {
	ctx := context.Background()
	must(t, Dequeue(ctx, b, "k1", seqs[0]))
	if err := Dequeue(ctx, b, "k1", seqs[0]); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("dequeue twice: %v", err)
	}
	if err := Dequeue(ctx, b, "k1", s2); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("dequeue of another key's item: %v", err)
	}
	if seq, _, _, _ := storage.Next(ctx, b, "k1"); seq != seqs[1] {
		t.Errorf("Next after dequeue = %d, want %d", seq, seqs[1])
	}
	must(t, Dequeue(ctx, b, "k0", s2))
	if keys, err := b.PendingKeys(ctx); err != nil || !slices.Equal(keys, []string{"k1"}) {
		t.Fatalf("PendingKeys after emptying k0 = %v, %v", keys, err)
	}
	must(t, Dequeue(ctx, b, "k1", seqs[2])) // out of order
	if seq, _, _, _ := storage.Next(ctx, b, "k1"); seq != seqs[1] {
		t.Errorf("Next = %d, want %d", seq, seqs[1])
	}
	must(t, Dequeue(ctx, b, "k1", seqs[1]))
	if _, _, ok, _ := storage.Next(ctx, b, "k1"); ok {
		t.Error("Next on an emptied queue found an item")
	}
	next, err := Enqueue(ctx, b, "k1", []byte(`{}`))
	must(t, err)
	if next <= s2 {
		t.Errorf("seq %d reused after emptying, want more than %d", next, s2)
	}
}

func channelDefaults(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	get := func(team, ch, want string) {
		t.Helper()
		got, err := storage.ChannelDefault(ctx, b, team, ch)
		if err != nil || got != want {
			t.Fatalf("ChannelDefault(%s, %s) = %q, %v; want %q", team, ch, got, err, want)
		}
	}
	get("T1", "C1", "")
	must(t, storage.SetChannelDefault(ctx, b, "T1", "C1", "pm"))
	get("T1", "C1", "pm")
	get("T1", "C2", "")
	get("T2", "C1", "")
	must(t, storage.SetChannelDefault(ctx, b, "T1", "C1", "architect"))
	get("T1", "C1", "architect")
	must(t, storage.SetChannelDefault(ctx, b, "", "C1", "dev")) // no team
	get("", "C1", "dev")
	must(t, storage.SetChannelDefault(ctx, b, "T1", "C1", ""))
	get("T1", "C1", "")
	get("", "C1", "dev")
	must(t, storage.SetChannelDefault(ctx, b, "T1", "C1", "")) // clearing twice is fine
}

func channelTools(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	get := func(team, ch string, want ...string) {
		t.Helper()
		got, err := storage.ChannelTools(ctx, b, team, ch)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("ChannelTools(%s, %s) = %q, %v; want %q", team, ch, got, err, want)
		}
	}
	get("T1", "C1")
	must(t, storage.SetChannelTools(ctx, b, "T1", "C1", []string{"jira", "github", "jira"}))
	get("T1", "C1", "github", "jira") // sorted, deduplicated
	get("T1", "C2")
	get("T2", "C1")
	must(t, storage.SetChannelTools(ctx, b, "", "C1", []string{"docs"})) // no team
	must(t, storage.SetChannelTools(ctx, b, "T1", "C1", []string{"github"}))
	get("T1", "C1", "github")
	get("", "C1", "docs")
	if err := storage.SetChannelTools(ctx, b, "T1", "C1", []string{""}); err == nil {
		t.Error("SetChannelTools with an empty server name succeeded")
	}
	if err := storage.SetChannelTools(ctx, b, "T1", "a/b", []string{"x"}); err == nil {
		t.Error("SetChannelTools with '/' in the channel succeeded")
	}
	get("T1", "C1", "github") // a refused change changes nothing
	must(t, storage.SetChannelTools(ctx, b, "T1", "C1", nil))
	get("T1", "C1")
	must(t, storage.SetChannelTools(ctx, b, "T1", "C1", nil)) // clearing twice is fine
	get("", "C1", "docs")
}

func dailyUsage(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	add := func(team, day string, n, want int) {
		t.Helper()
		got, err := b.AddDailyUsage(ctx, team, day, n)
		if err != nil || got != want {
			t.Fatalf("AddDailyUsage(%s, %s, %d) = %d, %v; want %d", team, day, n, got, err, want)
		}
	}
	if n, err := b.AddDailyUsage(ctx, "T1", "2026-03-01", 0); err != nil || n != 0 {
		t.Fatalf("AddDailyUsage of 0 tokens to nothing = %d, %v", n, err)
	}
	add("T1", "2026-03-01", 100, 100)
	add("T1", "2026-03-01", 50, 150)
	add("T1", "2026-03-02", 7, 7)
	add("T2", "2026-03-01", 1, 1)
	add("T1", "2026-03-01", -5, 150) // negative counts as nothing
	if n, err := b.AddDailyUsage(ctx, "T1", "2026-03-01", 0); err != nil || n != 150 {
		t.Fatalf("AddDailyUsage of 0 tokens = %d, %v; want 150", n, err)
	}
}

func outputsVersions(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "k")
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	put := func(path string, v int, data string) {
		t.Helper()
		must(t, b.PutOutput(ctx, s.ID, transcript.Output{Path: path, Version: v, Size: int64(len(data)), Time: at}, []byte(data)))
	}
	get := func(path string, v int, want string) {
		t.Helper()
		got, err := b.OutputData(ctx, s.ID, path, v)
		if err != nil || string(got) != want {
			t.Fatalf("OutputData(%s, %d) = %q, %v; want %q", path, v, got, err, want)
		}
	}
	put("prd.md", 1, "# PRD v1")
	put("prd.md", 2, "# PRD v2")
	put("arch.md", 1, "arch")
	get("prd.md", 1, "# PRD v1")
	get("prd.md", 2, "# PRD v2")
	get("prd.md", 0, "# PRD v2")
	get("arch.md", 0, "arch")
	put("prd.md", 2, "# PRD v2, fixed")
	get("prd.md", 0, "# PRD v2, fixed")
	get("prd.md", 1, "# PRD v1")
	put("empty.md", 1, "")
	get("empty.md", 0, "")
	bin := string([]byte{0, 1, 2, 0xff})
	put("bin.dat", 1, bin)
	get("bin.dat", 1, bin)
	if _, err := b.OutputData(ctx, s.ID, "prd.md", 3); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("missing version: %v", err)
	}
	if _, err := b.OutputData(ctx, s.ID, "nope.md", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("missing path: %v", err)
	}
	other := newSession(t, b, "k2")
	if _, err := b.OutputData(ctx, other.ID, "prd.md", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another session's document: %v", err)
	}
}

func outputsDeletedWithSession(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "k")
	must(t, b.PutOutput(ctx, s.ID, transcript.Output{Path: "prd.md", Version: 1, Size: 1}, []byte("x")))
	must(t, b.DeleteSession(ctx, s.ID))
	if _, err := b.OutputData(ctx, s.ID, "prd.md", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("document after its session was deleted: %v", err)
	}
	p := newSession(t, b, "p")
	must(t, b.PutOutput(ctx, p.ID, transcript.Output{Path: "prd.md", Version: 1, Size: 1}, []byte("x")))
	if _, err := b.Prune(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.OutputData(ctx, p.ID, "prd.md", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("document after its session was pruned: %v", err)
	}
}

func lease(t *testing.T, b storage.Backend, key, holder string, ttl time.Duration, want bool) {
	ctx := context.Background()
	t.Helper()
	got, err := Lease(ctx, b, key, holder, ttl)
	if err != nil || got != want {
		t.Fatalf("Lease(%s, %s) = %v, %v; want %v", key, holder, got, err, want)
	}
}

func leaseExclusive(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	lease(t, b, "T/C/1", "a", time.Minute, true)
	lease(t, b, "T/C/1", "b", time.Minute, false)
	lease(t, b, "T/C/1", "a", time.Minute, true) // renew
	lease(t, b, "T/C/2", "b", time.Minute, true) // another thread
	must(t, b.ReleaseLease(ctx, "T/C/1", "b"))   // not b's: no effect
	lease(t, b, "T/C/1", "b", time.Minute, false)
	must(t, b.ReleaseLease(ctx, "T/C/1", "a"))
	lease(t, b, "T/C/1", "b", time.Minute, true)
	lease(t, b, "T/C/1", "a", time.Minute, false)
	must(t, b.ReleaseLease(ctx, "T/C/9", "a")) // nothing held: fine
}

func leaseTakeover(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	// Leases may follow a clock the test cannot move (the database's), so
	// this waits for a short lease to run out.
	lease(t, b, "k", "a", 50*time.Millisecond, true)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := Lease(ctx, b, "k", "b", time.Minute)
		must(t, err)
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an expired lease was never taken over")
		}
		time.Sleep(20 * time.Millisecond)
	}
	lease(t, b, "k", "a", time.Minute, false)
}

func concurrentSaves(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	const workers, saves = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*saves)
	ids := make([]string, workers)
	for w := range workers {
		s := newSession(t, b, fmt.Sprintf("T/C/%d", w))
		ids[w] = s.ID
		wg.Go(func() {
			for i := range saves {
				s.Messages = append(s.Messages, msg("user", fmt.Sprintf("%d-%d", w, i)))
				if err := b.SaveSession(ctx, s); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w, id := range ids {
		s, err := b.SessionByID(ctx, id)
		must(t, err)
		if len(s.Messages) != saves || s.Messages[saves-1].Content != fmt.Sprintf("%d-%d", w, saves-1) {
			t.Fatalf("session %d: %d messages", w, len(s.Messages))
		}
	}
}

func concurrentAdmissions(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	const workers, each = 8, 20
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		seqs   []uint64
		shared int
		errs   []error
	)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("T/C/%d", i%3)
				dup, seq, err := Admit(ctx, b, []string{fmt.Sprintf("ev-%d-%d", w, i)}, time.Minute, key, []byte(`{}`))
				dup2, seq2, err2 := Admit(ctx, b, []string{"shared-event"}, time.Minute, "T/C/shared", []byte(`{}`))
				mu.Lock()
				if err != nil || err2 != nil || dup {
					errs = append(errs, fmt.Errorf("admit: %v %v dup %v", err, err2, dup))
				}
				seqs = append(seqs, seq)
				if !dup2 {
					shared++
					seqs = append(seqs, seq2)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	if shared != 1 {
		t.Fatalf("the shared event was admitted %d times, want once", shared)
	}
	if n := len(slices.Compact(slices.Sorted(slices.Values(seqs)))); n != workers*each+1 {
		t.Fatalf("%d distinct seqs, want %d", n, workers*each+1)
	}
	total := 0
	keys, err := b.PendingKeys(ctx)
	must(t, err)
	for _, k := range keys {
		items, err := b.Pending(ctx, k)
		must(t, err)
		total += len(items)
	}
	if total != workers*each+1 {
		t.Fatalf("%d queued, want %d", total, workers*each+1)
	}
}

// workFolders are the sessions' working folders under b's data folder
// (storage.Folders): not the contract's, but a store removes a session's
// with it (DeleteSession, Prune).
func workFolders(t *testing.T, b storage.Backend) storage.Folders {
	t.Helper()
	d, ok := b.(interface{ Dir() string })
	if !ok {
		t.Fatalf("%T has no data folder (Dir)", b)
	}
	return storage.Folders{Dir: d.Dir()}
}

func foldersAndPing(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	must(t, b.Ping(ctx))
	s := newSession(t, b, "k")
	in, err := workFolders(t, b).Session("inputs", s.ID)
	must(t, err)
	out, err := workFolders(t, b).Session("outputs", s.ID)
	must(t, err)
	if in == out || filepath.Base(in) != s.ID || filepath.Base(out) != s.ID ||
		filepath.Base(filepath.Dir(in)) != "inputs" || filepath.Base(filepath.Dir(out)) != "outputs" {
		t.Errorf("folders %s and %s, want .../inputs/<id> and .../outputs/<id>", in, out)
	}
	for _, d := range []string{in, out} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("%s is not a folder: %v", d, err)
		}
	}
}

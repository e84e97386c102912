package webapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"agentbot/bot/fakeslack"
	"agentbot/bot/render"
	"agentbot/bot/webapi"
)

// Against the fake Slack: a private channel and a DM are private, a public
// one is not; a member is found, a stranger is not; a thread's messages
// are read; an unknown channel is an error, and counts as private.
func TestReadsAgainstSlack(t *testing.T) {
	fs := fakeslack.New(t)
	s := render.Slack{API: fs.Client()}
	ctx := context.Background()
	for ch, want := range map[string]bool{"G1": true, "D1": true, "C1": false} {
		if got, err := webapi.IsPrivate(ctx, s, ch); err != nil || got != want {
			t.Errorf("IsPrivate(%s) = %v, %v; want %v", ch, got, err, want)
		}
	}
	if p, err := webapi.IsPrivate(ctx, s, ""); err == nil || !p {
		t.Errorf("IsPrivate of no channel = %v, %v; want private and an error", p, err)
	}
	fs.SetMembers("C1", "U1")
	if ok, err := webapi.IsMember(ctx, s, "C1", "U1"); err != nil || !ok {
		t.Errorf("a member: %v, %v", ok, err)
	}
	if ok, err := webapi.IsMember(ctx, s, "C1", "U2"); err != nil || ok {
		t.Errorf("a stranger: %v, %v", ok, err)
	}
	thread := fs.NextTS()
	fs.SendEvent(map[string]any{"type": "message", "channel": "C1", "user": "U1", "text": "first", "ts": thread})
	fs.SendEvent(map[string]any{"type": "message", "channel": "C1", "user": "U1", "text": "second", "ts": fs.NextTS(), "thread_ts": thread})
	msgs, err := webapi.Replies(ctx, s, "C1", thread)
	if err != nil || len(msgs) != 2 || msgs[1].Text != "second" {
		t.Fatalf("replies: %d messages, %v", len(msgs), err)
	}
}

// A slash command's answer through its response_url is an ephemeral JSON
// message (https://docs.slack.dev/interactivity/handling-user-interaction#message_responses).
func TestRespondURL(t *testing.T) {
	var got map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &got) != nil {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	if err := webapi.RespondURL(context.Background(), srv.URL, "hi &lt;there&gt;"); err != nil {
		t.Fatal(err)
	}
	if got["response_type"] != "ephemeral" || got["text"] != "hi &lt;there&gt;" {
		t.Fatalf("sent %v", got)
	}
	if err := webapi.RespondURL(context.Background(), "http://127.0.0.1:1/nowhere", "x"); err == nil {
		t.Fatal("an unreachable response_url is no error")
	}
}

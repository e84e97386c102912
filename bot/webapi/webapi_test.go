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

// Against the fake Slack: a thread's messages are read.
func TestReadsAgainstSlack(t *testing.T) {
	fs := fakeslack.New(t)
	s := render.Slack{API: fs.Client()}
	ctx := context.Background()
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

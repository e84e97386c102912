package bot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// post sends one request to the rig's request URL, signed with secret at
// t (no signature when secret is empty), and returns the status.
func (r *rig) post(body []byte, ctype, secret string, at time.Time, header http.Header) int {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.requestURL.URL+"/slack/events", bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	if secret != "" {
		fakeslack.SignRequest(req.Header, secret, at, body)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// mentionBody is an event_callback carrying an app_mention of text in a
// new thread at ts, as Slack sends it over HTTP.
func mentionBody(r *rig, ts, text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"token": "t", "team_id": r.slack.TeamID(), "api_app_id": "A0FAKEAPP", "type": "event_callback",
		"event_id": "Ev" + strings.ReplaceAll(ts, ".", ""), "event_time": time.Now().Unix(),
		"event": map[string]any{"type": "app_mention", "user": user, "channel": channel, "ts": ts,
			"text": "<@" + r.slack.BotUserID() + "> " + text},
	})
	return b
}

// Requests Slack did not sign, or signed too long ago, or that are too
// large, of another content type, or JSON where Slack sends a form, are
// each refused with their status and admit nothing; signed ones that do
// not decode are acked and admit nothing; none is logged with its body.
// A good request after them is answered.
func TestRequestURLRefusesBadRequests(t *testing.T) {
	ctx := context.Background()
	logs := &syncBuffer{}
	r := newRig(t, rigOpts{http: true, mutate: func(c *bot.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "answer to " + req.LastUserText()}
	})
	now := time.Now()
	const form = "application/x-www-form-urlencoded"
	click, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": user},
		"actions": []map[string]any{{"action_id": "stop", "value": "x"}}})
	big := mentionBody(r, r.slack.NextTS(), "BODYSECRET "+strings.Repeat("x", 1<<20))
	var threads []string
	for _, tc := range []struct {
		name   string
		body   []byte
		ctype  string
		secret string
		at     time.Time
		want   int
	}{
		{"wrong signature", nil, "application/json", "not-the-signing-secret", now, http.StatusUnauthorized},
		{"no signature", nil, "application/json", "", now, http.StatusUnauthorized},
		{"timestamp 6 minutes old", nil, "application/json", signingSecret, now.Add(-6 * time.Minute), http.StatusUnauthorized},
		{"timestamp 6 minutes ahead", nil, "application/json", signingSecret, now.Add(6 * time.Minute), http.StatusUnauthorized},
		{"body over 1 MB", big, "application/json", signingSecret, now, http.StatusRequestEntityTooLarge},
		{"text/plain", nil, "text/plain", signingSecret, now, http.StatusUnsupportedMediaType},
		{"no content type", nil, "", signingSecret, now, http.StatusUnsupportedMediaType},
		{"event as a form", nil, form, signingSecret, now, http.StatusBadRequest},
		{"interactivity as JSON", click, "application/json", signingSecret, now, http.StatusBadRequest},
		// Signed, of the right type, but unreadable: acked as Socket Mode
		// acks an envelope it cannot read, so Slack does not send it again.
		{"payload that is not JSON", []byte(url.Values{"payload": {"BODYSECRET not json"}}.Encode()), form, signingSecret, now, http.StatusOK},
		{"event of an unknown type", []byte(`{"type":"event_callback","event_id":"EvX","event":{"type":"no_such_event","text":"BODYSECRET"}}`), "application/json", signingSecret, now, http.StatusOK},
		{"slash command as JSON", []byte(`{"command":"/agent","text":"BODYSECRET help","user_id":"` + user + `"}`), "application/json", signingSecret, now, http.StatusBadRequest},
	} {
		body := tc.body
		if body == nil {
			ts := r.slack.NextTS()
			threads = append(threads, ts)
			body = mentionBody(r, ts, "BODYSECRET "+tc.name)
		}
		if got := r.post(body, tc.ctype, tc.secret, tc.at, nil); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	// A good request is answered; then none of the refused ones was.
	good := r.slack.NextTS()
	if got := r.post(mentionBody(r, good, "a good question"), "application/json", signingSecret, time.Now(), nil); got != http.StatusOK {
		t.Fatalf("good request: status %d", got)
	}
	r.waitFor("the good answer", func() bool {
		for _, m := range r.botMessages(good) {
			if strings.Contains(text(m), "answer to a good question") {
				return true
			}
		}
		return false
	})
	time.Sleep(200 * time.Millisecond)
	for _, th := range threads {
		if n := len(r.botMessages(th)); n != 0 {
			t.Errorf("thread %s of a refused request has %d bot messages", th, n)
		}
	}
	if r.model.Calls() != 1 {
		t.Errorf("model calls %d, want 1 (the good request's)", r.model.Calls())
	}
	if n := strings.Count(logs.String(), "slack request refused"); n != 10 {
		t.Errorf("%d refusals logged, want 10", n)
	}
	if n := strings.Count(logs.String(), "unreadable slack request"); n != 2 {
		t.Errorf("%d unreadable requests logged, want 2", n)
	}
	if strings.Contains(logs.String(), "BODYSECRET") {
		t.Error("a refused request's body was logged")
	}
}

// A request sent again as it was (same timestamp, signature and retry
// number) within Slack's 5 minutes is refused: a slash command, which no
// event id dedupes, runs once.
func TestRequestURLRefusesReplay(t *testing.T) {
	r := newRig(t, rigOpts{http: true})
	cmd := fakeslack.SlashForm(slack.SlashCommand{Command: "/agent", Text: "help", UserID: user, ChannelID: channel,
		TeamID: r.slack.TeamID(), ResponseURL: r.slack.URL() + "/response/none"})
	body := []byte(cmd.Encode())
	at := time.Now()
	const form = "application/x-www-form-urlencoded"
	if got := r.post(body, form, signingSecret, at, nil); got != http.StatusOK {
		t.Fatalf("first: status %d", got)
	}
	if got := r.post(body, form, signingSecret, at, nil); got != http.StatusUnauthorized {
		t.Fatalf("replay: status %d, want 401", got)
	}
	// Slack's own retry of it carries X-Slack-Retry-Num: not a replay.
	retry := http.Header{"X-Slack-Retry-Num": {"1"}, "X-Slack-Retry-Reason": {"http_timeout"}}
	if got := r.post(body, form, signingSecret, at, retry); got != http.StatusOK {
		t.Fatalf("retry: status %d, want 200", got)
	}
	if got := r.post(body, form, signingSecret, at, http.Header{"X-Slack-Retry-Num": {"4"}}); got != http.StatusBadRequest {
		t.Fatalf("retry number 4: status %d, want 400 (Slack retries 3 times)", got)
	}
}

// slowStore takes delay to admit each item, as a slow database would.
type slowStore struct {
	bot.Store
	delay time.Duration
}

func (s slowStore) Admit(ctx context.Context, order int64, d []string, ttl time.Duration, key string, payload []byte) (<-chan error, <-chan storage.Admission) {
	time.Sleep(s.delay)
	_, ch := s.Store.Admit(ctx, order, d, ttl, key, payload)
	return nil, ch
}

// Slack retries a request it saw no answer to within its timeout (here
// compressed to 50 ms), with X-Slack-Retry-Num and X-Slack-Retry-Reason
// http_timeout, while the first is still being admitted: every retry is
// answered 200 and the message is handled once.
func TestRequestURLRetryOfAdmittedEvent(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{http: true, delivery: fakeslack.HTTPOptions{Timeout: 50 * time.Millisecond},
		mutate: func(c *bot.Config) { c.Store = slowStore{Store: c.Store, delay: 150 * time.Millisecond} }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "answer to " + req.LastUserText()}
	})
	_, env := r.mention("one question", "")
	r.waitFor("the first request and its retries to be answered", func() bool {
		n := 0
		for _, d := range r.slack.Deliveries() {
			if d.EnvelopeID == env {
				n++
			}
		}
		return n == 4
	})
	r.waitFor("the answer", func() bool {
		ss := r.slack.Streams()
		return len(ss) >= 1 && ss[0].Stopped
	})
	time.Sleep(200 * time.Millisecond)
	for _, d := range r.slack.Deliveries() {
		if d.Status != http.StatusOK {
			t.Errorf("delivery %+v: want 200", d)
		}
		if d.Attempt > 0 && d.Reason != "http_timeout" {
			t.Errorf("retry %+v: want reason http_timeout", d)
		}
	}
	if r.model.Calls() != 1 || len(r.slack.Streams()) != 1 {
		t.Fatalf("model calls %d, streams %d: want the message handled once", r.model.Calls(), len(r.slack.Streams()))
	}
}

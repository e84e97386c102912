package fakeslack_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/fakeslack"
)

const testSecret = "0123456789abcdef0123456789abcdef"

// seen is one request a test app received.
type seen struct {
	at                     time.Time
	ctype, retry, reason   string
	form                   url.Values
	body                   []byte
	verified, verification bool
}

// app is a request URL that verifies every request with slack-go's
// verifier, answers url_verification, and answers events with the
// statuses given, in turn (200 when they run out).
type app struct {
	mu       sync.Mutex
	reqs     []seen
	statuses []int
}

func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s := seen{at: time.Now(), ctype: r.Header.Get("Content-Type"), retry: r.Header.Get("X-Slack-Retry-Num"),
		reason: r.Header.Get("X-Slack-Retry-Reason"), body: body}
	if v, err := slack.NewSecretsVerifier(r.Header, testSecret); err == nil {
		v.Write(body)
		s.verified = v.Ensure() == nil
	}
	s.form, _ = url.ParseQuery(string(body))
	var outer struct{ Type, Challenge string }
	_ = json.Unmarshal(body, &outer)
	a.mu.Lock()
	defer a.mu.Unlock()
	if outer.Type == "url_verification" {
		s.verification = true
		a.reqs = append(a.reqs, s)
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": outer.Challenge})
		return
	}
	a.reqs = append(a.reqs, s)
	status := http.StatusOK
	if len(a.statuses) > 0 {
		status, a.statuses = a.statuses[0], a.statuses[1:]
	}
	w.WriteHeader(status)
}

func (a *app) seen() []seen {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]seen(nil), a.reqs...)
}

// HTTP delivery as Slack documents it: a url_verification first; every
// request signed (slack-go's verifier accepts it); events as JSON,
// interactivity as a form's payload, slash commands as a form; a request
// answered 5xx retried 3 times with X-Slack-Retry-Num 1..3 and
// X-Slack-Retry-Reason http_error, on the compressed schedule; the ack
// recorded once one is answered 200.
func TestDeliverHTTP(t *testing.T) {
	fs := fakeslack.New(t)
	a := &app{statuses: []int{503, 500, 503}}
	srv := httptest.NewServer(a)
	defer srv.Close()
	delays := []time.Duration{0, 40 * time.Millisecond, 80 * time.Millisecond}
	if err := fs.DeliverHTTP(srv.URL, testSecret, fakeslack.HTTPOptions{RetryDelays: delays}); err != nil {
		t.Fatal(err)
	}
	env := fs.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: "U1", Channel: "C1", TimeStamp: fs.NextTS(), Text: "hi"})
	if _, err := fs.WaitAck(env, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	click := fs.SendBlockAction(fakeslack.BlockAction{UserID: "U1", ChannelID: "C1", MessageTS: "1.2", ActionID: "a", Value: "v"})
	cmd := fs.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "help", UserID: "U1", ChannelID: "C1"})
	for _, e := range []string{click, cmd} {
		if _, err := fs.WaitAck(e, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	got := a.seen()
	if len(got) != 7 || !got[0].verification {
		t.Fatalf("%d requests, the first a url_verification: %v", len(got), len(got) > 0 && got[0].verification)
	}
	for i, s := range got {
		if !s.verified {
			t.Errorf("request %d: signature not verified", i)
		}
	}
	for i, s := range got[1:5] { // the event, then its 3 retries
		wantRetry, wantReason := "", ""
		if i > 0 {
			wantRetry, wantReason = string(rune('0'+i)), "http_error"
		}
		if s.ctype != "application/json" || s.retry != wantRetry || s.reason != wantReason {
			t.Errorf("event attempt %d: %q retry %q %q", i, s.ctype, s.retry, s.reason)
		}
		if i > 1 && s.at.Sub(got[i].at) < delays[i-1] {
			t.Errorf("retry %d came %v after the one before it, want at least %v", i, s.at.Sub(got[i].at), delays[i-1])
		}
	}
	if s := got[5]; s.ctype != "application/x-www-form-urlencoded" || s.form.Get("payload") == "" {
		t.Errorf("interactivity: %q %q", s.ctype, s.body)
	}
	if s := got[6]; s.ctype != "application/x-www-form-urlencoded" || s.form.Get("command") != "/agent" || s.form.Get("text") != "help" {
		t.Errorf("slash command: %q %q", s.ctype, s.body)
	}
}

// A request URL that does not echo the challenge is refused, as Slack
// refuses to save it.
func TestDeliverHTTPNeedsTheChallenge(t *testing.T) {
	fs := fakeslack.New(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"challenge":"wrong"}`)) }))
	defer srv.Close()
	if err := fs.DeliverHTTP(srv.URL, testSecret, fakeslack.HTTPOptions{}); err == nil {
		t.Fatal("DeliverHTTP accepted a request URL that did not echo the challenge")
	}
}

// A request not answered within the timeout is retried at once with
// X-Slack-Retry-Reason http_timeout, without waiting for its answer.
func TestDeliverHTTPTimeout(t *testing.T) {
	fs := fakeslack.New(t)
	var mu sync.Mutex
	var reasons []string
	first := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var outer struct{ Type, Challenge string }
		if json.Unmarshal(body, &outer) == nil && outer.Type == "url_verification" {
			_ = json.NewEncoder(w).Encode(map[string]string{"challenge": outer.Challenge})
			return
		}
		mu.Lock()
		reasons = append(reasons, r.Header.Get("X-Slack-Retry-Reason"))
		slow := first
		first = false
		mu.Unlock()
		if slow {
			time.Sleep(300 * time.Millisecond)
		}
	}))
	defer srv.Close()
	if err := fs.DeliverHTTP(srv.URL, testSecret, fakeslack.HTTPOptions{Timeout: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	env := fs.SendEvent(map[string]any{"type": "app_mention", "user": "U1", "channel": "C1", "ts": fs.NextTS()})
	if _, err := fs.WaitAck(env, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reasons) != 2 || reasons[0] != "" || reasons[1] != "http_timeout" {
		t.Fatalf("retry reasons %q, want the first request and one http_timeout retry", reasons)
	}
}

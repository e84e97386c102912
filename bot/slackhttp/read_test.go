package slackhttp_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentbot/bot/slackhttp"
)

const secret = "8f742231b10e8888abcd99yyyzzz85a5"

// sign signs body at t as Slack does
// (https://docs.slack.dev/authentication/verifying-requests-from-slack).
func sign(h http.Header, key string, t time.Time, body []byte) {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
}

func request(body []byte, ctype, key string, t time.Time) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/slack/events", bytes.NewReader(body))
	r.Header.Set("Content-Type", ctype)
	sign(r.Header, key, t, body)
	return r
}

// eventBody is a typical event_callback: an app_mention of about 1 KB.
var eventBody = []byte(`{"token":"t","team_id":"T1","api_app_id":"A1","type":"event_callback","event_id":"Ev1","event_time":1700000000,` +
	`"event":{"type":"app_mention","user":"U1","channel":"C1","ts":"1700000000.000100","text":"<@U0BOT> ` + strings.Repeat("words ", 150) + `"}}`)

// Read takes what Slack sends, each kind as Slack sends it, and refuses
// the rest with its status.
func TestRead(t *testing.T) {
	now := time.Now()
	form := "application/x-www-form-urlencoded"
	click := []byte(url.Values{"payload": {`{"type":"block_actions","user":{"id":"U1"},"actions":[{"action_id":"a","value":"v"}]}`}}.Encode())
	slash := []byte(url.Values{"command": {"/agent"}, "text": {"help"}, "user_id": {"U1"}, "channel_id": {"C1"}}.Encode())
	for _, tc := range []struct {
		name        string
		body        []byte
		ctype, key  string
		at          time.Time
		kind        slackhttp.Kind
		status      int
		retry, want string
	}{
		{name: "event", body: eventBody, ctype: "application/json", key: secret, at: now, kind: slackhttp.Event},
		{name: "event, charset", body: eventBody, ctype: "application/json; charset=utf-8", key: secret, at: now, kind: slackhttp.Event},
		{name: "url_verification", body: []byte(`{"type":"url_verification","challenge":"c123","token":"t"}`), ctype: "application/json", key: secret, at: now, kind: slackhttp.URLVerification},
		{name: "app_rate_limited", body: []byte(`{"token":"t","type":"app_rate_limited","team_id":"T1","minute_rate_limited":1518467820,"api_app_id":"A1"}`), ctype: "application/json", key: secret, at: now, kind: slackhttp.RateLimited},
		{name: "click", body: click, ctype: form, key: secret, at: now, kind: slackhttp.Interaction},
		{name: "slash", body: slash, ctype: form, key: secret, at: now, kind: slackhttp.Slash},
		{name: "retry", body: eventBody, ctype: "application/json", key: secret, at: now, kind: slackhttp.Event, retry: "2"},
		{name: "wrong secret", body: eventBody, ctype: "application/json", key: "other", at: now, status: 401},
		{name: "old", body: eventBody, ctype: "application/json", key: secret, at: now.Add(-5*time.Minute - 2*time.Second), status: 401},
		{name: "too big", body: append(eventBody, bytes.Repeat([]byte(" "), slackhttp.MaxBody)...), ctype: "application/json", key: secret, at: now, status: 413},
		{name: "xml", body: eventBody, ctype: "application/xml", key: secret, at: now, status: 415},
		{name: "JSON click", body: []byte(`{"type":"block_actions"}`), ctype: "application/json", key: secret, at: now, status: 400},
		{name: "JSON in a form", body: eventBody, ctype: form, key: secret, at: now, status: 400},
		{name: "unknown event type", body: []byte(`{"type":"event_callback","event_id":"Ev2","event":{"type":"no_such_event"}}`), ctype: "application/json", key: secret, at: now, kind: slackhttp.Unreadable},
		{name: "payload not JSON", body: []byte("payload=nope"), ctype: form, key: secret, at: now, kind: slackhttp.Unreadable},
		{name: "retry 9", body: eventBody, ctype: "application/json", key: secret, at: now, retry: "9", status: 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := request(tc.body, tc.ctype, tc.key, tc.at)
			if tc.retry != "" {
				r.Header.Set("X-Slack-Retry-Num", tc.retry)
				r.Header.Set("X-Slack-Retry-Reason", "http_timeout")
			}
			req, err := slackhttp.Read(r, secret)
			if tc.status != 0 {
				var ref *slackhttp.Refusal
				if !errors.As(err, &ref) || ref.Status != tc.status {
					t.Fatalf("err %v, want a refusal with status %d", err, tc.status)
				}
				return
			}
			if err != nil || req.Kind != tc.kind {
				t.Fatalf("kind %v, err %v; want kind %v", req.Kind, err, tc.kind)
			}
			if tc.retry != "" && (strconv.Itoa(req.RetryNum) != tc.retry || req.RetryReason != "http_timeout") {
				t.Fatalf("retry %d %q", req.RetryNum, req.RetryReason)
			}
			if tc.kind == slackhttp.URLVerification && req.Challenge != "c123" {
				t.Fatalf("challenge %q", req.Challenge)
			}
		})
	}
}

// BenchmarkVerify is the signature check of one request (about 1 KB, a
// typical event), target under 50 µs.
func BenchmarkVerify(b *testing.B) {
	h := http.Header{}
	sign(h, secret, time.Now(), eventBody)
	b.ReportAllocs()
	b.SetBytes(int64(len(eventBody)))
	for b.Loop() {
		if err := slackhttp.Verify(h, eventBody, secret); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead is the whole of reading one event request: body, signature
// and parse.
func BenchmarkRead(b *testing.B) {
	b.ReportAllocs()
	now := time.Now()
	for b.Loop() {
		if _, err := slackhttp.Read(request(eventBody, "application/json", secret, now), secret); err != nil {
			b.Fatal(err)
		}
	}
}

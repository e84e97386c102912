package fakeslack

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// HTTP delivery: Slack's Events API over HTTP, as an app with request
// URLs receives it (https://docs.slack.dev/apis/events-api/). Every
// request is signed with the app's signing secret
// (https://docs.slack.dev/authentication/verifying-requests-from-slack:
// X-Slack-Request-Timestamp, and X-Slack-Signature "v0=" + hex
// HMAC-SHA256 of "v0:{timestamp}:{body}"). Events come as JSON;
// interactivity as a form whose payload field is JSON
// (https://docs.slack.dev/interactivity/handling-user-interaction); slash
// commands as a form of their fields
// (https://docs.slack.dev/interactivity/implementing-slash-commands).
// A request answered with a non-2xx status, or not answered within 3 s,
// is retried up to 3 times, immediately, after 1 minute and after 5
// minutes, with X-Slack-Retry-Num and X-Slack-Retry-Reason
// (https://docs.slack.dev/apis/events-api/#retries); the fake compresses
// that schedule (HTTPOptions.RetryDelays).

// HTTPOptions shape HTTP delivery (DeliverHTTP).
type HTTPOptions struct {
	// Timeout is how long a request may take before Slack counts it
	// failed and retries it, without waiting for its answer (default 3 s).
	Timeout time.Duration
	// RetryDelays are the waits before retries 1, 2 and 3 (default
	// Slack's 0, 1 min and 5 min compressed 600 times: 0, 100 ms, 500 ms).
	RetryDelays []time.Duration
	// Concurrent sends every envelope at once, as Slack does under load;
	// otherwise each waits for the one before it to be answered, up to
	// OrderWindow (default 250 ms), so a test's events arrive in the order
	// it sent them while one answered late does not hold up the rest.
	Concurrent  bool
	OrderWindow time.Duration
}

// Delivery is one HTTP request the fake made to the request URL.
type Delivery struct {
	EnvelopeID string
	Attempt    int    // 0 for the first request, then X-Slack-Retry-Num
	Reason     string // X-Slack-Retry-Reason ("" on the first)
	Status     int    // the answer's status; 0 when none came (Err)
	Late       bool   // answered after the timeout: Slack had retried already
	Latency    time.Duration
	Err        string
}

// httpSender delivers envelopes to a request URL.
type httpSender struct {
	url, secret string
	opt         HTTPOptions
	client      *http.Client
	ctx         context.Context
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	queue       chan *Envelope // serial delivery
}

// DeliverHTTP switches the fake from Socket Mode to HTTP delivery: it
// sends a url_verification to requestURL, as Slack does when the URL is
// set (https://docs.slack.dev/reference/events/url_verification), and
// fails unless the challenge comes back; then every envelope, those
// waiting for a websocket included, is POSTed there, signed with secret.
func (s *Server) DeliverHTTP(requestURL, secret string, opt HTTPOptions) error {
	if opt.Timeout <= 0 {
		opt.Timeout = 3 * time.Second
	}
	if opt.OrderWindow <= 0 {
		opt.OrderWindow = 250 * time.Millisecond
	}
	if opt.RetryDelays == nil {
		opt.RetryDelays = []time.Duration{0, 100 * time.Millisecond, 500 * time.Millisecond}
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &httpSender{url: requestURL, secret: secret, opt: opt, ctx: ctx, cancel: cancel,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}, queue: make(chan *Envelope, 4096)}
	if err := h.verifyURL(); err != nil {
		cancel()
		return err
	}
	h.wg.Add(1)
	go func() { defer h.wg.Done(); h.serial(s) }()
	s.sock.Lock()
	s.httpOut = h
	pending := s.pending
	s.pending = nil
	s.sock.Unlock()
	for _, e := range pending {
		h.send(s, e)
	}
	return nil
}

// verifyURL sends url_verification and checks the challenge comes back.
func (h *httpSender) verifyURL() error {
	challenge := randomHex(16)
	body, _ := json.Marshal(map[string]string{"token": verificationToken, "challenge": challenge, "type": "url_verification"})
	resp, err := h.post(h.ctx, body, "application/json", 0, "")
	if err != nil {
		return fmt.Errorf("fakeslack: url_verification: %w", err)
	}
	defer resp.Body.Close()
	var got struct {
		Challenge string `json:"challenge"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &got) != nil || got.Challenge != challenge {
		return fmt.Errorf("fakeslack: url_verification: status %d, body %q: the challenge did not come back", resp.StatusCode, raw)
	}
	return nil
}

// send delivers e: at once when concurrent, else after those before it.
func (h *httpSender) send(s *Server, e *Envelope) {
	if h.opt.Concurrent {
		h.wg.Add(1)
		go func() { defer h.wg.Done(); h.deliver(s, e, nil) }()
		return
	}
	select {
	case h.queue <- e:
	case <-h.ctx.Done():
	}
}

// serial delivers queued envelopes one after another, each once the one
// before it was answered or OrderWindow has passed.
func (h *httpSender) serial(s *Server) {
	for {
		select {
		case <-h.ctx.Done():
			return
		case e := <-h.queue:
			first := make(chan struct{})
			h.wg.Add(1)
			go func() { defer h.wg.Done(); h.deliver(s, e, first) }()
			select {
			case <-first:
			case <-time.After(h.opt.OrderWindow):
			case <-h.ctx.Done():
				return
			}
		}
	}
}

// deliver sends e and retries it on Slack's schedule until it is
// answered 2xx in time or the retries are spent; first, when set, is
// closed once the first request has had its outcome.
func (h *httpSender) deliver(s *Server, e *Envelope, first chan struct{}) {
	body, ctype, retry, why := httpBody(e.JSON)
	s.mu.Lock()
	e.Sent = time.Now()
	s.mu.Unlock()
	// A Redeliver is Slack's retry number first (its retry_attempt).
	reason := h.attempt(s, e, body, ctype, retry, why)
	if first != nil {
		close(first)
	}
	for n := retry + 1; n <= len(h.opt.RetryDelays) && reason != ""; n++ {
		select {
		case <-h.ctx.Done():
			return
		case <-time.After(h.opt.RetryDelays[n-1]):
		}
		reason = h.attempt(s, e, body, ctype, n, reason)
	}
}

// attempt makes one request; it returns "" when it was answered 2xx in
// time, else the retry reason: http_timeout or http_error.
func (h *httpSender) attempt(s *Server, e *Envelope, body []byte, ctype string, n int, reason string) string {
	start := time.Now()
	type result struct {
		status int
		err    error
	}
	done := make(chan result, 1)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		resp, err := h.post(h.ctx, body, ctype, n, reason)
		r := result{err: err}
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			r.status = resp.StatusCode
		}
		done <- r
		d := Delivery{EnvelopeID: e.ID, Attempt: n, Reason: reason, Status: r.status, Latency: time.Since(start),
			Late: time.Since(start) > h.opt.Timeout}
		if err != nil {
			d.Err = err.Error()
		}
		s.recordDelivery(d)
	}()
	select {
	case r := <-done:
		if r.err == nil && r.status/100 == 2 {
			s.recordHTTPAck(e, start)
			return ""
		}
		return "http_error"
	case <-time.After(h.opt.Timeout):
		return "http_timeout"
	case <-h.ctx.Done():
		return ""
	}
}

// post makes one signed request.
func (h *httpSender) post(ctx context.Context, body []byte, ctype string, n int, reason string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ctype)
	SignRequest(req.Header, h.secret, time.Now(), body)
	if n > 0 {
		req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(n))
		req.Header.Set("X-Slack-Retry-Reason", reason)
	}
	return h.client.Do(req)
}

// stop cancels delivery and waits for it to end.
func (h *httpSender) stop() {
	h.cancel()
	h.wg.Wait()
	h.client.CloseIdleConnections()
}

// SignRequest sets the signing headers of a request with body, as Slack
// signs it at t (https://docs.slack.dev/authentication/verifying-requests-from-slack).
func SignRequest(h http.Header, secret string, t time.Time, body []byte) {
	ts := strconv.FormatInt(t.Unix(), 10)
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", Signature(secret, ts, body))
}

// Signature is "v0=" and the hex HMAC-SHA256 of "v0:{timestamp}:{body}".
func Signature(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + timestamp + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// httpBody is the HTTP body of a Socket Mode envelope: an events_api
// payload as JSON, an interactive payload as the form field payload, a
// slash command as a form of its fields; anything else (SendRaw) as its
// payload, or the raw message when it has none. retry and reason are the
// envelope's retry_attempt and retry_reason (a Redeliver).
func httpBody(raw []byte) (body []byte, ctype string, retry int, reason string) {
	var env struct {
		Type         string          `json:"type"`
		Payload      json.RawMessage `json:"payload"`
		RetryAttempt int             `json:"retry_attempt"`
		RetryReason  string          `json:"retry_reason"`
	}
	if json.Unmarshal(raw, &env) != nil || len(env.Payload) == 0 {
		return raw, "application/json", 0, ""
	}
	retry, reason = env.RetryAttempt, env.RetryReason
	switch env.Type {
	case "interactive":
		return []byte(url.Values{"payload": {string(env.Payload)}}.Encode()), "application/x-www-form-urlencoded", retry, reason
	case "slash_commands":
		var cmd slack.SlashCommand
		if json.Unmarshal(env.Payload, &cmd) == nil {
			return []byte(SlashForm(cmd).Encode()), "application/x-www-form-urlencoded", retry, reason
		}
	}
	return env.Payload, "application/json", retry, reason
}

// SlashForm is a slash command as Slack POSTs it, form-encoded.
func SlashForm(cmd slack.SlashCommand) url.Values {
	v := url.Values{
		"token": {cmd.Token}, "team_id": {cmd.TeamID}, "team_domain": {cmd.TeamDomain},
		"channel_id": {cmd.ChannelID}, "channel_name": {cmd.ChannelName},
		"user_id": {cmd.UserID}, "user_name": {cmd.UserName}, "command": {cmd.Command}, "text": {cmd.Text},
		"api_app_id": {cmd.APIAppID}, "response_url": {cmd.ResponseURL}, "trigger_id": {cmd.TriggerID},
	}
	if cmd.EnterpriseID != "" {
		v.Set("enterprise_id", cmd.EnterpriseID)
		v.Set("enterprise_name", cmd.EnterpriseName)
		v.Set("is_enterprise_install", strconv.FormatBool(cmd.IsEnterpriseInstall))
	}
	return v
}

// recordDelivery keeps one request's outcome.
func (s *Server) recordDelivery(d Delivery) {
	s.mu.Lock()
	s.deliveries = append(s.deliveries, d)
	s.notifyLocked()
	s.mu.Unlock()
}

// recordHTTPAck records a request answered 2xx in time as the envelope's
// ack, so Acks and WaitAck read both modes alike.
func (s *Server) recordHTTPAck(e *Envelope, start time.Time) {
	now := time.Now()
	s.mu.Lock()
	s.acks = append(s.acks, Ack{EnvelopeID: e.ID, Time: now, Latency: now.Sub(start), Known: true})
	s.notifyLocked()
	s.mu.Unlock()
}

// Deliveries returns every HTTP request made to the request URL, in the
// order they were answered.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.deliveries...)
}

// HTTPMode reports whether the fake delivers over HTTP (DeliverHTTP).
func (s *Server) HTTPMode() bool {
	s.sock.Lock()
	defer s.sock.Unlock()
	return s.httpOut != nil
}

// stopHTTP ends HTTP delivery (Close).
func (s *Server) stopHTTP() {
	s.sock.Lock()
	h := s.httpOut
	s.sock.Unlock()
	if h != nil {
		h.stop()
	}
}

// Package slackhttp reads Slack's signed HTTP requests, the Events API,
// interactivity and slash commands on one request URL, into the payloads
// Socket Mode carries (slackevents.EventsAPIEvent, slack.InteractionCallback,
// slack.SlashCommand), and refuses what Slack did not sign.
package slackhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// MaxBody is the largest request body read; a larger one is refused with
// 413 before its signature is checked.
const MaxBody = 1 << 20

// Kind is what a request carries.
type Kind int

// The kinds of requests Slack sends to a request URL.
const (
	URLVerification Kind = iota + 1 // the handshake when the URL is set
	Event                           // an Events API event_callback
	Interaction                     // an interactivity payload (payload=)
	Slash                           // a slash command
	// RateLimited is app_rate_limited: Slack is dropping the app's events
	// for the minute (https://docs.slack.dev/apis/events-api/#rate-limiting).
	RateLimited
	// Unreadable is a request Slack signed, of the right content type,
	// whose event or payload does not decode (an event type slack-go does
	// not know, a field of the wrong type): Err says why. Like a Socket
	// Mode envelope the bot cannot read, it is answered 200, so Slack does
	// not send it again, and nothing is admitted.
	Unreadable
)

// Request is one verified request from Slack.
type Request struct {
	Kind Kind
	// Challenge is url_verification's challenge, to echo back.
	Challenge   string
	Event       slackevents.EventsAPIEvent
	Interaction slack.InteractionCallback
	Slash       slack.SlashCommand
	// Timestamp and Signature are the request's signing headers: together
	// they name this very request, so a replay of it can be refused.
	Timestamp, Signature string
	// RetryNum and RetryReason are Slack's X-Slack-Retry-Num and
	// X-Slack-Retry-Reason (0 and "" on a first delivery).
	RetryNum    int
	RetryReason string
	// Err is why an Unreadable request does not decode.
	Err error
}

// Refusal is why a request is refused, with the HTTP status to answer.
type Refusal struct {
	Status int
	Reason string
	Err    error
}

func (r *Refusal) Error() string {
	if r.Err != nil {
		return fmt.Sprintf("%s: %v", r.Reason, r.Err)
	}
	return r.Reason
}

func (r *Refusal) Unwrap() error { return r.Err }

func refuse(status int, reason string, err error) (Request, error) {
	return Request{}, &Refusal{Status: status, Reason: reason, Err: err}
}

// Read reads and verifies one request: a POST of at most MaxBody bytes,
// signed with secret as https://docs.slack.dev/authentication/verifying-requests-from-slack
// says (v0, HMAC-SHA256 of "v0:{timestamp}:{body}", timestamp within 5
// minutes, compared in constant time by slack-go's verifier), carrying
// JSON (the Events API) or a form (interactivity's payload=, a slash
// command). What it refuses is a *Refusal.
func Read(r *http.Request, secret string) (Request, error) {
	if r.Method != http.MethodPost {
		return refuse(http.StatusMethodNotAllowed, "not a POST", nil)
	}
	if r.ContentLength > MaxBody {
		return refuse(http.StatusRequestEntityTooLarge, "body over 1 MB", nil)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return refuse(http.StatusBadRequest, "read body", err)
	}
	if len(body) > MaxBody {
		return refuse(http.StatusRequestEntityTooLarge, "body over 1 MB", nil)
	}
	if err := Verify(r.Header, body, secret); err != nil {
		return refuse(http.StatusUnauthorized, "signature", err)
	}
	req, err := parse(r.Header.Get("Content-Type"), body)
	if err != nil {
		return req, err
	}
	req.Timestamp, req.Signature = r.Header.Get("X-Slack-Request-Timestamp"), r.Header.Get("X-Slack-Signature")
	if n := r.Header.Get("X-Slack-Retry-Num"); n != "" {
		req.RetryNum, err = strconv.Atoi(n)
		if err != nil || req.RetryNum < 0 || req.RetryNum > MaxRetry {
			return refuse(http.StatusBadRequest, "X-Slack-Retry-Num "+strconv.Quote(n), err)
		}
	}
	req.RetryReason = r.Header.Get("X-Slack-Retry-Reason")
	return req, nil
}

// MaxRetry is the highest X-Slack-Retry-Num: Slack retries a request 3
// times (https://docs.slack.dev/apis/events-api/#retries).
const MaxRetry = 3

// Key names this very delivery of a request: its signing headers and its
// retry number. Slack signs a retry's body again, but a retry within the
// same second carries the same signature; its retry number tells it apart
// from a replay, which has one of the numbers seen already.
func (r Request) Key() string {
	return r.Timestamp + "/" + r.Signature + "/" + strconv.Itoa(r.RetryNum)
}

// Verify checks a request's signature over body with slack-go's verifier.
func Verify(h http.Header, body []byte, secret string) error {
	v, err := slack.NewSecretsVerifier(h, secret)
	if err != nil {
		return err
	}
	if _, err := v.Write(body); err != nil {
		return err
	}
	return v.Ensure()
}

// parse reads a verified body by its content type.
func parse(contentType string, body []byte) (Request, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return refuse(http.StatusUnsupportedMediaType, "content type", err)
	}
	switch mt {
	case "application/json":
		return parseJSON(body)
	case "application/x-www-form-urlencoded":
		return parseForm(body)
	}
	return refuse(http.StatusUnsupportedMediaType, "content type "+mt, nil)
}

// parseJSON reads an Events API body: url_verification, app_rate_limited
// or event_callback
// (https://docs.slack.dev/apis/events-api/); anything else in JSON (an
// interactivity payload or a slash command, which Slack sends as forms)
// is refused.
func parseJSON(body []byte) (Request, error) {
	var outer struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	if err := json.Unmarshal(body, &outer); err != nil {
		return refuse(http.StatusBadRequest, "JSON body", err)
	}
	switch outer.Type {
	case slackevents.URLVerification:
		return Request{Kind: URLVerification, Challenge: outer.Challenge}, nil
	case slackevents.AppRateLimited:
		return Request{Kind: RateLimited}, nil
	case slackevents.CallbackEvent:
		ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
		if err != nil {
			return Request{Kind: Unreadable, Err: fmt.Errorf("event_callback: %w", err)}, nil
		}
		return Request{Kind: Event, Event: ev}, nil
	}
	return refuse(http.StatusBadRequest, "JSON body of type "+strconv.Quote(outer.Type)+" (interactivity and slash commands come as forms)", nil)
}

// parseForm reads a form body: interactivity's payload= (JSON), or a
// slash command's fields
// (https://docs.slack.dev/interactivity/handling-user-interaction,
// https://docs.slack.dev/interactivity/implementing-slash-commands).
func parseForm(body []byte) (Request, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return refuse(http.StatusBadRequest, "form body", err)
	}
	if p := form.Get("payload"); p != "" {
		var cb slack.InteractionCallback
		if err := json.Unmarshal([]byte(p), &cb); err != nil {
			return Request{Kind: Unreadable, Err: fmt.Errorf("interactivity payload: %w", err)}, nil
		}
		return Request{Kind: Interaction, Interaction: cb}, nil
	}
	if form.Get("command") == "" {
		return refuse(http.StatusBadRequest, "form with neither payload nor command", errors.New("not an interactivity payload or a slash command"))
	}
	r, _ := http.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	cmd, err := slack.SlashCommandParse(r)
	if err != nil {
		return refuse(http.StatusBadRequest, "slash command", err)
	}
	return Request{Kind: Slash, Slash: cmd}, nil
}

package bot

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/slack-go/slack/socketmode"

	"agentbot/bot/keys"
	"agentbot/bot/slackhttp"
)

// ackWithin is how long a request of HTTP mode waits for its item to be
// admitted before it is answered 503: Slack wants an answer within 3 s
// (https://docs.slack.dev/apis/events-api/#responding), and retries a
// request answered late or with an error, as Socket Mode redelivers an
// envelope not acked.
const ackWithin = 2500 * time.Millisecond

// SlackHandler is the request URL of HTTP mode (/slack/events): Slack's
// events, interactivity and slash commands, each verified with
// Config.SigningSecret (package slackhttp), handed to the same intake as
// Socket Mode's envelopes, and answered 200 once admitted as Socket Mode
// acks them: a message once it is durable (journaled or committed), a
// click once queued, a slash command at once. A request not admitted
// within ackWithin is answered 503, so Slack retries it; a retry of one
// admitted meanwhile is dropped by the same dedupe keys as a Socket Mode
// redelivery (event_id, channel and ts, the click).
func (b *Bot) SlackHandler() http.Handler {
	return http.HandlerFunc(b.serveRequest)
}

func (b *Bot) serveRequest(w http.ResponseWriter, r *http.Request) {
	req, err := slackhttp.Read(r, b.c.cfg.SigningSecret)
	if err != nil {
		b.refuse(w, r, err)
		return
	}
	switch req.Kind {
	case slackhttp.URLVerification:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": req.Challenge})
		return
	case slackhttp.RateLimited:
		b.c.log.Warn("slack is rate limiting this app's events: some are dropped for the minute (app_rate_limited)")
		return // 200: it wants no more
	case slackhttp.Unreadable:
		// As a Socket Mode envelope the bot cannot read: acked, so Slack
		// does not deliver it again (intake.handle).
		b.c.obs.EventReceived(string(socketmode.EventTypeErrorBadMessage))
		b.c.log.Warn("unreadable slack request; answered 200 so Slack does not send it again", "err", req.Err)
		return
	}
	if !b.connected.Load() {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	if b.replayed(r, req) {
		b.c.log.Warn("slack request refused: replayed", "remote", r.RemoteAddr, "retry_num", req.RetryNum)
		http.Error(w, "replayed request", http.StatusUnauthorized)
		return
	}
	evt := requestEvent(req)
	acked := make(chan struct{})
	var once sync.Once
	b.c.obs.EventReceived(string(evt.Type))
	b.in.inbox.pushAcked(evt, func() { once.Do(func() { close(acked) }) })
	t := time.NewTimer(ackWithin)
	defer t.Stop()
	select {
	case <-acked:
		w.WriteHeader(http.StatusOK)
	case <-t.C:
		b.c.log.Warn("slack request not admitted in time; answered 503 so Slack retries it", "type", evt.Type, "retry_num", req.RetryNum)
		http.Error(w, "not admitted yet", http.StatusServiceUnavailable)
	case <-r.Context().Done():
	}
}

// replayed reports whether req was taken before (its timestamp, signature
// and retry number; slackhttp.Request.Key), within slackhttp.ReplayWindow.
// Every request is looked up in this process's memory; a slash command,
// which no durable dedupe key guards, also in the store, so a replay to
// another replica is refused too. An event or a click replayed to another
// replica passes here and is dropped by its item's dedupe keys (event_id,
// the click), acked as Slack's own retries are. When the store cannot
// say, the command is refused as a replay would be.
func (b *Bot) replayed(r *http.Request, req slackhttp.Request) bool {
	if b.replays.Seen(req.Key(), time.Now()) {
		return true
	}
	if req.Kind != slackhttp.Slash {
		return false
	}
	dup, err := b.c.cfg.Store.Seen(r.Context(), keys.Request(req.Key()), slackhttp.ReplayWindow)
	if err != nil {
		b.c.log.Error("slack request: replay check", "err", err)
		return true
	}
	return dup
}

// refuse answers a request slackhttp refused, logged without its body.
func (b *Bot) refuse(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusBadRequest
	var ref *slackhttp.Refusal
	if errors.As(err, &ref) {
		status = ref.Status
	}
	b.c.log.Warn("slack request refused", "status", status, "remote", r.RemoteAddr, "err", err)
	http.Error(w, http.StatusText(status), status)
}

// requestEvent is a verified request as the Socket Mode envelope the
// intake handles.
func requestEvent(req slackhttp.Request) socketmode.Event {
	switch req.Kind {
	case slackhttp.Interaction:
		return socketmode.Event{Type: socketmode.EventTypeInteractive, Data: req.Interaction}
	case slackhttp.Slash:
		return socketmode.Event{Type: socketmode.EventTypeSlashCommand, Data: req.Slash}
	}
	return socketmode.Event{Type: socketmode.EventTypeEventsAPI, Data: req.Event}
}

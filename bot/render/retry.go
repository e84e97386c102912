package render

import (
	"context"
	"errors"
	"net"
	"net/url"
	"time"

	"github.com/slack-go/slack"

	"agentbot/engine/retry"
)

// retryPolicy is how often and how long a reply waits before each new try
// of a Slack call that is safe to repeat (chat.stopStream, chat.update:
// both set a state, so a repeat is harmless) after it failed for a passing
// reason: five waits from 250ms doubling to 4s, jittered, about 4-8 s in
// all, so a stream is not left open by a short outage.
var retryPolicy = retry.Policy{MaxAttempts: 6, Base: 250 * time.Millisecond, Max: 4 * time.Second}

// passingErrors are Slack's error codes for a failure on its side that a
// later try may not meet (https://docs.slack.dev/reference/methods/chat.update:
// "internal_error", "fatal_error", "service_unavailable", "request_timeout").
var passingErrors = map[string]bool{"internal_error": true, "fatal_error": true, "service_unavailable": true, "request_timeout": true}

// transient reports whether err is a failure a later try may not meet: an
// HTTP 5xx, one of Slack's own passing errors, or a network error. A
// cancelled context is not.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errFenced) {
		return false
	}
	if sc, ok := errors.AsType[slack.StatusCodeError](err); ok {
		return sc.Code >= 500
	}
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		return passingErrors[se.Err]
	}
	var ne net.Error
	var ue *url.Error
	return errors.As(err, &ne) || errors.As(err, &ue)
}

// again runs call, a Slack call safe to repeat, and tries it again after
// each passing failure (transient), as retryPolicy says. It returns the
// last call's error.
func (r *Reply) again(what string, call func() error) error {
	var last error
	p := retryPolicy
	p.Sleep = r.sleep
	p.OnRetry = func(try int, err error, _ time.Duration) {
		r.log.Info("slack call failed; trying again", "call", what, "try", try, "err", err)
	}
	_ = p.Do(r.ctx, func(int) error {
		if last = call(); last != nil && !transient(last) {
			return retry.Stop(last)
		}
		return last
	})
	return last
}

// update replaces the message ts with m, tried again after passing
// failures.
func (r *Reply) update(ts string, m Message) error {
	return r.again("chat.update", func() error { return r.p.Update(r.ctx, r.t.Channel, ts, m) })
}

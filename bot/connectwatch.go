package bot

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"agentbot/bot/slackcheck"
)

// maxRefusedConnects is how many times in a row Slack may refuse to open
// a Socket Mode connection (apps.connections.open answering
// not_allowed_token_type, missing_scope, …) before Run gives up: a
// refusal that repeats is a setting to fix, not a passing fault. slack-go
// tries again after 0.1, 0.2, 0.4, 0.8 s, so this is about 2 s.
const maxRefusedConnects = 5

// connectWatch logs what goes wrong with the Socket Mode connection at
// error level, with what to do (the hint agentbot check gives), and counts
// Slack's refusals in a row.
type connectWatch struct {
	log     *slog.Logger
	refused int
}

// watch looks at one Socket Mode event: a failed connect is logged; the
// maxRefusedConnects-th refusal in a row is returned as an error; a
// connection made starts the count again.
func (w *connectWatch) watch(evt socketmode.Event) error {
	switch evt.Type {
	case socketmode.EventTypeConnected:
		w.refused = 0
	case socketmode.EventTypeInvalidAuth:
		w.log.Error("Slack refused the Socket Mode connection: invalid auth", "hint", slackcheck.SocketModeHint(errors.New("invalid_auth")))
	case socketmode.EventTypeConnectionError:
		ce, ok := evt.Data.(*slack.ConnectionErrorEvent)
		if !ok || ce.ErrorObj == nil {
			w.log.Error("socket mode connection failed; trying again")
			return nil
		}
		code, refused := slackcheck.Refusal(ce.ErrorObj)
		if !refused {
			w.refused = 0
			w.log.Error("socket mode connection failed; trying again", "err", ce.ErrorObj, "attempt", ce.Attempt, "retry_in", ce.Backoff)
			return nil
		}
		w.refused++
		hint := slackcheck.SocketModeHint(ce.ErrorObj)
		if w.refused >= maxRefusedConnects {
			return fmt.Errorf("Slack refused the Socket Mode connection %d times in a row (apps.connections.open: %s): %s", w.refused, code, hint)
		}
		w.log.Error("Slack refused the Socket Mode connection; trying again", "error", code, "attempt", w.refused, "of", maxRefusedConnects, "retry_in", ce.Backoff, "hint", hint)
	}
	return nil
}

// socketError is the error of a Socket Mode connection that ended for
// good: a refusal (invalid_auth ends it at once) says what to do.
func socketError(err error) error {
	if code, ok := slackcheck.Refusal(err); ok {
		return fmt.Errorf("socket mode: Slack refused the connection (apps.connections.open: %s): %s", code, slackcheck.SocketModeHint(err))
	}
	return fmt.Errorf("socket mode: %w", err)
}

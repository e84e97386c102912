package bot

import (
	"context"
	"errors"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
)

// maxRateLimitRetries bounds how often one Slack call is retried after 429.
const maxRateLimitRetries = 5

// call runs a Slack Web API call, waiting out rate limits as Slack asks
// (RateLimitedError.RetryAfter).
func (b *Bot) call(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || attempt >= maxRateLimitRetries {
			return err
		}
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = time.Second
		}
		b.log.Debug("slack rate limited", "retry_after", wait)
		if err := b.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// postMsg posts a message in a thread and returns its ts.
func (b *Bot) postMsg(ctx context.Context, channel, thread string, opts ...slack.MsgOption) (string, error) {
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	var ts string
	err := b.call(ctx, func() error {
		var err error
		_, ts, err = b.cfg.API.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

// post posts plain text in a thread, logging failures.
func (b *Bot) post(ctx context.Context, channel, thread, text string) {
	if _, err := b.postMsg(ctx, channel, thread, slack.MsgOptionText(text, false)); err != nil {
		b.log.Error("post message", "channel", channel, "err", err)
	}
}

// update replaces a message's content.
func (b *Bot) update(ctx context.Context, channel, ts string, opts ...slack.MsgOption) error {
	return b.call(ctx, func() error {
		_, _, _, err := b.cfg.API.UpdateMessageContext(ctx, channel, ts, opts...)
		return err
	})
}

// ephemeral shows text to one user only.
func (b *Bot) ephemeral(channel, user, thread, text string) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	err := b.call(b.turnCtx, func() error {
		_, err := b.cfg.API.PostEphemeralContext(b.turnCtx, channel, user, opts...)
		return err
	})
	if err != nil {
		b.log.Warn("post ephemeral", "channel", channel, "err", err)
	}
}

// postAnswer renders an answer: split at paragraph or fence boundaries into
// markdown blocks of at most slackmd.MaxPieceChars, each message with a short
// plain-text fallback. With replaceTS set, the first piece replaces that
// message (a status or expired stream); if that fails it is posted anew.
// tail blocks (the feedback buttons) follow the last piece.
func (b *Bot) postAnswer(ctx context.Context, channel, thread, replaceTS, text string, tail ...slack.Block) error {
	pieces := slackmd.Split(text, slackmd.MaxPieceChars)
	for i, p := range pieces {
		blocks := []slack.Block{slackmd.Block(p)}
		if i == len(pieces)-1 {
			blocks = append(blocks, tail...)
		}
		opts := []slack.MsgOption{
			slack.MsgOptionText(slackmd.Fallback(p, slackmd.DefaultFallbackChars), false),
			slack.MsgOptionBlocks(blocks...),
		}
		if i == 0 && replaceTS != "" {
			if err := b.update(ctx, channel, replaceTS, opts...); err == nil {
				continue
			}
		}
		if _, err := b.postMsg(ctx, channel, thread, opts...); err != nil {
			return err
		}
	}
	return nil
}

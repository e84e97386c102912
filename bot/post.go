package bot

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"agentbot/bot/render"
	"agentbot/bot/slackmd"
	"agentbot/bot/threadwork"
	"agentbot/bot/view"
)

// web is the Slack Web API with the rate-limit retry (bot/render).
func (b *core) web() render.Slack {
	return render.Slack{API: b.cfg.API, Clients: b.clients, Log: b.log, Sleep: b.sleep}
}

// api is the Web API client of ctx's workspace (render.Slack.Client).
func (b *core) api(ctx context.Context) *slack.Client { return b.web().Client(ctx) }

// call runs a Slack Web API call, waiting out rate limits as Slack asks.
func (b *core) call(ctx context.Context, fn func() error) error { return b.web().Call(ctx, fn) }

// postMsg posts a message in a thread and returns its ts. Under a
// thread's lease (ctx) the fence is checked first: a replica that lost the
// thread posts nothing there.
func (b *core) postMsg(ctx context.Context, channel, thread string, opts ...slack.MsgOption) (string, error) {
	if err := threadwork.Guard(ctx); err != nil {
		return "", err
	}
	ctx = b.inChannel(ctx, channel)
	return b.web().PostMessage(ctx, channel, thread, opts...)
}

// post posts text in a thread, logging failures. Text is mrkdwn the bot
// writes; &, < and > are escaped (slackmd.EscapeText), so only user and
// channel mentions are markup.
func (b *core) post(ctx context.Context, channel, thread, text string) {
	if _, err := b.postMsg(ctx, channel, thread, slack.MsgOptionText(slackmd.EscapeText(text), false)); err != nil {
		b.log.Error("post message", "channel", channel, "err", err)
	}
}

// update replaces a message's content.
func (b *core) update(ctx context.Context, channel, ts string, opts ...slack.MsgOption) error {
	if err := threadwork.Guard(ctx); err != nil {
		return err
	}
	return b.web().UpdateMessage(ctx, channel, ts, opts...)
}

// ephemeral shows text to one user only; text is escaped as post's.
func (b *core) ephemeral(channel, user, thread, text string) {
	opts := []slack.MsgOption{slack.MsgOptionText(slackmd.EscapeText(text), false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	ctx := b.inChannel(b.turnCtx, channel)
	err := b.call(ctx, func() error {
		_, err := b.api(ctx).PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err != nil {
		b.log.Warn("post ephemeral", "channel", channel, "err", err)
	}
}

// postMarkdownWith posts markdown text followed by tail blocks within
// Slack's limits, in the messages view.Messages lays out, under the name
// and icon of as (the app's own for the zero Author). When Slack refuses
// a message, the thread gets its text as plain text.
func (b *core) postMarkdownWith(ctx context.Context, channel, thread string, as render.Author, md, tailNote string, tail []slack.Block) error {
	for _, m := range view.Messages(md, tailNote, tail) {
		if err := b.postMarkdownPiece(ctx, channel, thread, as, m.Text, m.Extra); err != nil {
			return err
		}
	}
	return nil
}

// postMarkdownPiece posts one markdown piece with extra blocks, falling back
// to the piece as plain text when Slack refuses the blocks.
func (b *core) postMarkdownPiece(ctx context.Context, channel, thread string, as render.Author, piece string, extra []slack.Block) error {
	blocks := append([]slack.Block{slackmd.Block(piece)}, extra...)
	_, err := b.postMsg(ctx, channel, thread, append(as.MsgOptions(),
		slack.MsgOptionText(slackmd.EscapeText(slackmd.Fallback(piece, slackmd.DefaultFallbackChars)), false),
		slack.MsgOptionBlocks(blocks...))...)
	if err == nil {
		return nil
	}
	if _, perr := b.postMsg(ctx, channel, thread, append(as.MsgOptions(), slack.MsgOptionText(slackmd.EscapeText(piece), false))...); perr != nil {
		return fmt.Errorf("post %d characters: %w (plain text: %w)", view.Runes(piece), err, perr)
	}
	return nil
}

// setSessionStatus shows the thread's agent session as processing or
// active; a failure is logged and never affects the turn.
func (b *core) setSessionStatus(ctx context.Context, it item, status string) {
	_, err := b.api(ctx).SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{
		Status: status, ChannelID: it.Channel, ThreadTS: it.ThreadTS, InitiatorUserID: it.User})
	if err != nil {
		b.log.Debug("agent session status", "status", status, "err", err)
	}
}

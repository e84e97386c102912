package render

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/bot/workspace"
	"agentbot/engine/retry"
)

// MaxRateLimitRetries bounds how often one Slack call is retried after a
// rate limit (HTTP 429).
const MaxRateLimitRetries = 5

// Slack is the Poster over slack-go's Web API client. Every call waits out
// rate limits as Slack asks (RateLimitedError.RetryAfter), up to
// MaxRateLimitRetries times.
type Slack struct {
	// API is the client of a single-workspace app; Clients, when set,
	// gives each call the client of its context's workspace instead
	// (package workspace).
	API     *slack.Client
	Clients workspace.Clients
	Log     *slog.Logger
	// Sleep waits d, or until ctx ends; nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Call runs a Slack Web API call, waiting out rate limits as Slack asks.
func (s Slack) Call(ctx context.Context, fn func() error) error {
	p := retry.Policy{MaxAttempts: MaxRateLimitRetries + 1, Sleep: s.Sleep,
		OnRetry: func(_ int, _ error, wait time.Duration) { s.logger().Debug("slack rate limited", "retry_after", wait) }}
	return p.Do(ctx, func(int) error {
		err := fn()
		rl, ok := errors.AsType[*slack.RateLimitedError](err)
		if !ok {
			return retry.Stop(err)
		}
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = time.Second
		}
		return retry.After(err, wait) // Base 0: Slack's wait, no more
	})
}

// Client is the Web API client of ctx's workspace: Clients' when set (a
// workspace without one gets a client whose calls fail, so none is made
// with another workspace's token), else API.
func (s Slack) Client(ctx context.Context) *slack.Client {
	if s.Clients == nil {
		return s.API
	}
	c, err := workspace.Resolve(ctx, s.Clients)
	if err != nil {
		s.logger().WarnContext(ctx, "slack call refused: no token for its workspace", "err", err)
		return workspace.Failing(err)
	}
	return c.API
}

func (s Slack) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// PostMessage posts a message in thread (none when "") and returns its ts.
func (s Slack) PostMessage(ctx context.Context, channel, thread string, opts ...slack.MsgOption) (string, error) {
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	var ts string
	err := s.Call(ctx, func() error {
		var err error
		_, ts, err = s.Client(ctx).PostMessageContext(ctx, channel, opts...)
		return err
	})
	s.Refused("chat.postMessage", err)
	return ts, err
}

// UpdateMessage replaces the content of the message ts.
func (s Slack) UpdateMessage(ctx context.Context, channel, ts string, opts ...slack.MsgOption) error {
	err := s.Call(ctx, func() error {
		_, _, _, err := s.Client(ctx).UpdateMessageContext(ctx, channel, ts, opts...)
		return err
	})
	s.Refused("chat.update", err)
	return err
}

// Post posts m in the thread of channel, as m.As, and returns its ts.
// When Slack refuses m's blocks, the thread gets m as plain text instead.
func (s Slack) Post(ctx context.Context, channel, thread string, m Message) (string, error) {
	ts, err := s.PostMessage(ctx, channel, thread, append(m.options(), m.As.options()...)...)
	if m.Blocks != nil && PayloadRefused(err) {
		p := m.plain()
		return s.PostMessage(ctx, channel, thread, append(p.options(), p.As.options()...)...)
	}
	return ts, err
}

// Update replaces the content of the message ts with m; when Slack refuses
// m's blocks, with m as plain text.
func (s Slack) Update(ctx context.Context, channel, ts string, m Message) error {
	err := s.UpdateMessage(ctx, channel, ts, m.options()...)
	if len(m.Blocks) > 0 && PayloadRefused(err) {
		return s.UpdateMessage(ctx, channel, ts, m.plain().options()...)
	}
	return err
}

// Delete deletes the message ts.
func (s Slack) Delete(ctx context.Context, channel, ts string) error {
	err := s.Call(ctx, func() error {
		_, _, err := s.Client(ctx).DeleteMessageContext(ctx, channel, ts)
		return err
	})
	s.Refused("chat.delete", err)
	return err
}

// refusals are the Slack errors that say agentbot sent what Slack does not
// accept, or lacks a permission: a bug or a misconfigured app, worth a
// warning, never a debug line.
var refusals = map[string]bool{
	"invalid_blocks": true, "invalid_blocks_format": true, "msg_blocks_too_long": true, "msg_too_long": true,
	"invalid_arguments": true, "no_text": true, "missing_scope": true, "not_allowed": true,
	"not_allowed_token_type": true, "invalid_chunks": true,
}

// payloadErrors are the refusals of a message's content: the same message
// as plain text may pass.
var payloadErrors = map[string]bool{
	"invalid_blocks": true, "invalid_blocks_format": true, "msg_blocks_too_long": true, "invalid_arguments": true,
}

// PayloadRefused reports whether Slack refused a message's content
// (its blocks, their length, or an argument).
func PayloadRefused(err error) bool {
	e, ok := errors.AsType[slack.SlackErrorResponse](err)
	return ok && payloadErrors[e.Err]
}

// Refused logs at warn level an error of method that says Slack refused
// what was sent or lacks a permission, with the block paths Slack names
// (response_metadata.messages) and the scope it needed; other errors are
// left to the caller. It reports whether err was such a refusal.
func (s Slack) Refused(method string, err error) bool {
	e, ok := errors.AsType[slack.SlackErrorResponse](err)
	if !ok || !refusals[e.Err] {
		return false
	}
	attrs := []any{"method", method, "error", e.Err}
	if len(e.ResponseMetadata.Messages) > 0 {
		attrs = append(attrs, "block_path", strings.Join(e.ResponseMetadata.Messages, "; "))
	}
	if e.Needed != "" {
		attrs = append(attrs, "needed", e.Needed)
	}
	s.logger().Warn("slack refused a call", attrs...)
	return true
}

// StartStream opens a streamed message in t, its task cards shown as a
// timeline, and returns its ts. In a channel thread the stream names its
// recipient, as chat.startStream requires there.
func (s Slack) StartStream(ctx context.Context, t Thread) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionTS(t.TS), slack.MsgOptionTaskDisplayMode(slack.TaskDisplayModeTimeline)}
	opts = append(opts, t.As.options()...)
	if !t.DM {
		opts = append(opts, slack.MsgOptionRecipientUserID(t.User), slack.MsgOptionRecipientTeamID(t.Team))
	}
	var ts string
	err := s.Call(ctx, func() error {
		var err error
		_, ts, err = s.Client(ctx).StartStreamContext(ctx, t.Channel, opts...)
		return err
	})
	s.Refused("chat.startStream", err)
	return ts, err
}

// AppendStream adds c to the open stream ts.
func (s Slack) AppendStream(ctx context.Context, channel, ts string, c Chunk) error {
	err := s.Call(ctx, func() error {
		_, _, err := s.Client(ctx).AppendStreamContext(ctx, channel, ts, c.options()...)
		return err
	})
	s.Refused("chat.appendStream", err)
	return err
}

// StopStream closes the stream ts, with c added at its end.
func (s Slack) StopStream(ctx context.Context, channel, ts string, c Chunk) error {
	err := s.Call(ctx, func() error {
		_, _, err := s.Client(ctx).StopStreamContext(ctx, channel, ts, c.options()...)
		return err
	})
	s.Refused("chat.stopStream", err)
	return err
}

// SetStatus shows status as the assistant thread's status; "" clears it.
func (s Slack) SetStatus(ctx context.Context, channel, thread, status string) error {
	err := s.Call(ctx, func() error {
		return s.Client(ctx).SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
			ChannelID: channel, ThreadTS: thread, Status: status})
	})
	s.Refused("assistant.threads.setStatus", err)
	return err
}

// plain is m without blocks: the content Slack refused as plain text.
func (m Message) plain() Message {
	text := m.Plain
	if text == "" {
		text = m.Text
	}
	return Message{Text: text, Blocks: noBlocks, As: m.As}
}

// options converts m to slack-go's message options; the text is escaped
// for Slack (slackmd.EscapeText).
func (m Message) options() []slack.MsgOption {
	opts := []slack.MsgOption{slack.MsgOptionText(slackmd.EscapeText(m.Text), false)}
	if m.Blocks != nil {
		opts = append(opts, slack.MsgOptionBlocks(m.Blocks...))
	}
	return opts
}

// options converts c to slack-go's stream options.
func (c Chunk) options() []slack.MsgOption {
	var opts []slack.MsgOption
	if c.Markdown != "" {
		opts = append(opts, slack.MsgOptionMarkdownText(c.Markdown))
	}
	if c.Task != nil {
		opts = append(opts, slack.MsgOptionChunks(*c.Task))
	}
	if len(c.Blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(c.Blocks...))
	}
	return opts
}

// streamClosed reports whether err says the stream is no longer open:
// Slack closes a stream after about five minutes (and when a user presses
// the agent session's stop button).
func streamClosed(err error) bool {
	e, ok := errors.AsType[slack.SlackErrorResponse](err)
	return ok && e.Err == "message_not_in_streaming_state"
}

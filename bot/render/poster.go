package render

import (
	"context"

	"github.com/slack-go/slack"
)

// Poster is the Slack Web API as a reply uses it: the few calls it makes,
// each already retried after a rate limit. Slack implements it over
// slack-go; tests use a fake.
type Poster interface {
	// Post posts m in the thread of channel and returns its ts.
	Post(ctx context.Context, channel, thread string, m Message) (string, error)
	// Update replaces the content of the message ts with m.
	Update(ctx context.Context, channel, ts string, m Message) error
	// Delete deletes the message ts.
	Delete(ctx context.Context, channel, ts string) error
	// StartStream opens a streamed message in t and returns its ts.
	StartStream(ctx context.Context, t Thread) (string, error)
	// AppendStream adds c to the open stream ts.
	AppendStream(ctx context.Context, channel, ts string, c Chunk) error
	// StopStream closes the stream ts, with c added at its end.
	StopStream(ctx context.Context, channel, ts string, c Chunk) error
	// SetStatus shows status as the assistant thread's status; "" clears
	// it.
	SetStatus(ctx context.Context, channel, thread, status string) error
}

// Thread is where a reply goes, and for whom.
type Thread struct {
	Team, Channel string
	// TS is the thread's parent message.
	TS string
	// User is the person the turn answers; a stream in a channel thread
	// names them as its recipient.
	User string
	// DM is set in a direct message with the bot, where the assistant
	// thread status shows progress and Slack shows its own stop button.
	DM bool
	// As is the agent the reply speaks as: every message the reply
	// posts, and its stream, show its name and icon.
	As Author
}

// Author is the name and icon a message shows instead of the app's:
// chat.postMessage's username, icon_emoji and icon_url arguments, which
// need the chat:write.customize scope
// (https://docs.slack.dev/reference/methods/chat.postMessage, Authorship;
// without the scope Slack ignores them). chat.startStream takes the same
// three arguments (https://docs.slack.dev/reference/methods/chat.startStream),
// so a streamed answer shows its agent too. The zero Author is the app.
type Author struct {
	Username  string
	IconEmoji string // ":clipboard:"; overrides IconURL
	IconURL   string
}

// MsgOptions are slack-go's message options that show a's name and icon
// (none for the zero Author), for a message posted outside a Reply.
func (a Author) MsgOptions() []slack.MsgOption { return a.options() }

// options are slack-go's message options for a.
func (a Author) options() []slack.MsgOption {
	var opts []slack.MsgOption
	if a.Username != "" {
		opts = append(opts, slack.MsgOptionUsername(a.Username))
	}
	if a.IconEmoji != "" {
		opts = append(opts, slack.MsgOptionIconEmoji(a.IconEmoji))
	} else if a.IconURL != "" {
		opts = append(opts, slack.MsgOptionIconURL(a.IconURL))
	}
	return opts
}

// Message is the content of a posted or updated message. Text is the
// plain-text fallback (or the message itself, without blocks); it is plain
// text, escaped for Slack when converted (slackmd.EscapeText: only user
// and channel mentions stay markup). Blocks nil sends no blocks; an empty,
// non-nil Blocks clears a message's blocks on update. Plain, when set, is
// what the thread gets instead when Slack refuses the blocks (the whole
// content as plain text); otherwise Text is.
type Message struct {
	Text   string
	Blocks []slack.Block
	Plain  string
	// As is who a posted message shows as its author (an update keeps
	// the author the message was posted with).
	As Author
}

// Chunk is what a stream call adds: markdown text, a tool call's task
// card update, or (when a stream stops) blocks at its end. The zero Chunk
// adds nothing.
type Chunk struct {
	Markdown string
	Task     *slack.TaskUpdateChunk
	Blocks   []slack.Block
}

// noBlocks is Blocks that empty a message's blocks on update.
var noBlocks = []slack.Block{}

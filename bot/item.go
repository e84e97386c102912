package bot

import (
	"context"

	"agentbot/bot/keys"
	"agentbot/bot/workspace"
	"agentbot/engine"
	"agentbot/storage"
)

// item is one persisted unit of work for a thread, queued in its order
// (item.order) and handled under the thread's lease by its kind's handler.
type item struct {
	Kind itemKind `json:"kind"`
	Team string   `json:"team"`
	// Enterprise is the organization of Team (Enterprise Grid), so an
	// org-wide install answers the item; "" outside one.
	Enterprise string    `json:"enterprise,omitempty"`
	Channel    string    `json:"channel"`
	ThreadTS   string    `json:"thread_ts"`
	TS         string    `json:"ts,omitempty"`
	User       string    `json:"user"`
	Text       string    `json:"text,omitempty"`
	DM         bool      `json:"dm,omitempty"`
	Files      []fileRef `json:"files,omitempty"`
	AgentID    string    `json:"agent_id,omitempty"`
	// PickerTS is the picker message to close once an agent is picked.
	PickerTS string `json:"picker_ts,omitempty"`
	// CallID is the tool call an approval item decides (Text is the
	// decision).
	CallID string `json:"call_id,omitempty"`
	// At is when a click happened, by Slack's clock (its action_ts): a
	// click takes its place in the thread's queue by it, as a message by
	// its TS.
	At string `json:"at,omitempty"`
}

// order is the item's place in its thread's queue: Slack's time of the
// message (its ts) or click (action_ts), so one delivered late goes
// before later ones still queued; 0 (the time of admission) for an item
// without one.
func (it *item) order() int64 {
	if it.Kind == kindMessage && it.TS != "" {
		return storage.OrderOf(it.TS)
	}
	return storage.OrderOf(it.At)
}

// fileRef is a file a user shared with a message.
type fileRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url"`
	Size int    `json:"size"`
}

// workspace is the workspace the item is of.
func (it *item) workspace() workspace.ID {
	return workspace.ID{Team: it.Team, Enterprise: it.Enterprise}
}

// thread is the thread the item belongs to.
func (it *item) thread() keys.Thread {
	return keys.Thread{Team: it.Team, Channel: it.Channel, Thread: it.ThreadTS}
}

// itemKind is what a queued item asks of its thread; it is stored with the
// item, so its values never change.
type itemKind string

// The kinds of queued items. A stop request and the Home tab's events are
// not queued: they act at once, beside the queue.
const (
	// kindMessage is a user's message, or a menu button (its command typed).
	kindMessage itemKind = "message"
	// kindPick is an agent chosen in the picker (AgentID, PickerTS).
	kindPick itemKind = "pick"
	// kindFeedback is a click of an answer's feedback buttons (Text is the
	// value, TS the answer).
	kindFeedback itemKind = "feedback"
	// kindApproval is a decision on a pending call (CallID; Text is the
	// decision).
	kindApproval itemKind = "approval"
)

// job is one queued item being handled: the item, its queue seq, and the
// thread's conversation (nil for a handler that needs none).
type job struct {
	it  item
	seq uint64
	c   *engine.Conversation
}

// itemHandler handles one kind of queued item under the thread's lease
// (queued.Handle).
type itemHandler struct {
	// handle does the work.
	handle func(h *threadHandlers, ctx context.Context, j *job)
	// conversation: the thread's conversation is opened first (an item
	// handled and posted before a crash is skipped, a turn it started is
	// resumed), and the item is marked posted once handled.
	conversation bool
}

// itemHandlers is the handler of each kind of queued item.
var itemHandlers = map[itemKind]itemHandler{
	kindMessage:   {handle: (*threadHandlers).onMessage, conversation: true},
	kindPick:      {handle: (*threadHandlers).onPick, conversation: true},
	kindApproval:  {handle: (*threadHandlers).onDecision, conversation: true},
	kindFeedback:  {handle: (*threadHandlers).onFeedback},
	kindConnected: {handle: (*threadHandlers).onConnected, conversation: true},
}

package engine

import (
	"agentbot/engine/party"
	"agentbot/engine/transcript"
)

// EventKind says what an Event reports.
type EventKind string

// The events a turn emits.
const (
	EventText      EventKind = "text"       // a text delta of the answer
	EventToolStart EventKind = "tool_start" // a tool call began; again with a new Status as it progresses
	EventToolEnd   EventKind = "tool_end"   // a tool call finished
	EventOutput    EventKind = "output"     // a document was saved
	EventNotice    EventKind = "notice"     // something the user should be told
	EventApproval  EventKind = "approval"   // a tool call waits for a person's approval
	// EventThinking: the model is reasoning before it answers; at most once
	// per model call, before that call's text. It never carries the
	// reasoning: people see at most a short "thinking…".
	EventThinking EventKind = "thinking"
	// EventParty: party mode loaded; Party is its roster. From here on the
	// answer's turns are personas' ("📊 **Mary:** ...", party.Splitter).
	EventParty EventKind = "party"
)

// Event is progress reported by a turn.
type Event struct {
	Kind EventKind
	// Text is the delta for EventText and the message for EventNotice.
	Text string
	// Tool and CallID name the tool call; Status is a short human line such
	// as "reading instructions.md"; Err is set when the tool failed.
	Tool   string
	CallID string
	Status string
	Err    string
	// Output and HostPath describe a saved document.
	Output   *Output
	HostPath string
	// Approval is the pending call of an EventApproval.
	Approval *transcript.Approval
	// Party is the roster of an EventParty.
	Party *party.Roster
}

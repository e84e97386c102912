package fakeslack

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Call is one recorded request to the fake: a Web API method, or one of the
// pseudo-methods MethodUpload, MethodDownload and MethodResponseURL.
type Call struct {
	Method string          // "chat.postMessage", ...
	Form   url.Values      // query and form fields, without "token"
	JSON   json.RawMessage // the body when it was sent as JSON
	Token  string          // from the Authorization header or the token field
	Time   time.Time       // when the request arrived
	Status int             // HTTP status answered
	Error  string          // Slack error answered ("" when ok)
}

// MessageKind says what produced a Message.
type MessageKind string

// Message kinds.
const (
	KindPost        MessageKind = "post"         // chat.postMessage
	KindEphemeral   MessageKind = "ephemeral"    // chat.postEphemeral
	KindUpdate      MessageKind = "update"       // chat.update
	KindDelete      MessageKind = "delete"       // chat.delete
	KindStream      MessageKind = "stream"       // message created by chat.startStream
	KindResponseURL MessageKind = "response_url" // POST to a slash command's response_url
	KindUser        MessageKind = "user"         // a user message delivered with SendEvent
)

// Message is a message event in the log (Messages) or a message's current
// state (ThreadMessages, Message).
type Message struct {
	Kind     MessageKind
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	Blocks   json.RawMessage // the blocks JSON as sent; nil when none
	User     string          // ephemeral: the recipient; otherwise the author
	Time     time.Time
	Deleted  bool // current state only
	// As is the author shown instead of the app's name and icon
	// (chat:write.customize; see ScopeCustomize).
	As Author
	// SubType and Files are a user message's subtype ("file_share",
	// "thread_broadcast"; "" for a plain message) and the files it
	// shared, as its event carried them; conversations.replies shows
	// both (methods.go).
	SubType string
	Files   json.RawMessage
}

// Author is a message's customized author: the username, icon_emoji and
// icon_url arguments Slack honoured.
type Author struct {
	Username, IconEmoji, IconURL string
}

// MarkdownText joins the text of the message's markdown blocks with "\n".
func (m Message) MarkdownText() string {
	var parts []string
	for _, b := range m.blockList() {
		if b.Type == "markdown" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// BlockTypes lists the types of the message's blocks, in order.
func (m Message) BlockTypes() []string {
	var types []string
	for _, b := range m.blockList() {
		types = append(types, b.Type)
	}
	return types
}

type blockHead struct {
	Type string `json:"type"`
	Text string `json:"text"` // markdown blocks only; other blocks hold an object here
}

func (m Message) blockList() []blockHead {
	var raw []json.RawMessage
	if json.Unmarshal(m.Blocks, &raw) != nil {
		return nil
	}
	out := make([]blockHead, 0, len(raw))
	for _, r := range raw {
		var h struct {
			Type string          `json:"type"`
			Text json.RawMessage `json:"text"`
		}
		_ = json.Unmarshal(r, &h)
		b := blockHead{Type: h.Type}
		_ = json.Unmarshal(h.Text, &b.Text) // a string only for markdown blocks
		out = append(out, b)
	}
	return out
}

// StreamChunk is one chunk sent to chat.startStream/appendStream/stopStream.
type StreamChunk struct {
	Method string          // the method that carried it
	Type   string          // markdown_text, task_update, plan_update, blocks
	JSON   json.RawMessage // the chunk as sent
}

// Stream is a streamed message (chat.startStream ... chat.stopStream).
type Stream struct {
	Channel         string
	TS              string
	ThreadTS        string
	RecipientUserID string
	RecipientTeamID string
	TaskDisplayMode string
	As              Author        // the customized author Slack honoured
	Text            string        // markdown_text parameters and markdown_text chunks, concatenated
	Chunks          []StreamChunk // every chunk, in order
	Appends         int           // successful chat.appendStream calls
	StopBlocks      json.RawMessage
	Started         time.Time
	Stopped         bool
	StoppedAt       time.Time
	Expired         bool // set by ExpireStreams, CloseStream and ExpireStreamsAfterAppends
	Halted          bool // stopped by Slack's stop button (SendAgentSessionStopped)
}

// Upload is a file shared through the v2 upload flow
// (files.getUploadURLExternal, POST to the upload URL,
// files.completeUploadExternal).
type Upload struct {
	FileID         string
	Filename       string // as given to files.getUploadURLExternal
	Title          string // from files.completeUploadExternal
	Length         int    // declared length
	Content        []byte // bytes POSTed to the upload URL
	AltText        string
	SnippetType    string
	ChannelID      string
	Channels       string
	ThreadTS       string
	InitialComment string
	Blocks         json.RawMessage
	Time           time.Time // completion time
}

// Status is one assistant.threads.setStatus call.
type Status struct {
	Channel         string
	ThreadTS        string
	Status          string // "" clears the status
	LoadingMessages []string
	Time            time.Time
}

// Reaction is one reactions.add call that succeeded.
type Reaction struct {
	Channel   string
	Timestamp string
	Name      string
	Time      time.Time
}

// Envelope is a Socket Mode message pushed to the bot.
type Envelope struct {
	ID           string // envelope_id ("" for raw messages without one)
	Type         string // events_api, slash_commands, interactive, or the raw type
	EventID      string // events_api only
	RetryAttempt int
	JSON         json.RawMessage // the whole message as written
	Queued       time.Time
	Sent         time.Time // zero until written to a websocket
	Conn         int       // id of the websocket it went to

	target int // the websocket it must go to (EventOptions.Conn); 0: any
}

// Ack is one message the bot wrote on a websocket with an envelope_id.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage // nil when the ack had no payload
	Time       time.Time
	Latency    time.Duration // since the envelope was sent; 0 for unknown envelopes
	Known      bool          // the envelope id was sent by this fake
}

// Calls returns every recorded request, in arrival order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		c.Form = maps.Clone(c.Form)
		out[i] = c
	}
	return out
}

// CallsTo returns the recorded requests to one method.
func (s *Server) CallsTo(method string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Messages returns the message log: every post, ephemeral, update, delete and
// response_url message, in order. Streams are in Streams; user messages only
// in ThreadMessages.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.messages)
}

// Message returns the current state of the message channel/ts.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.current[msgKey(channel, ts)]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// ThreadMessages returns the current, undeleted, non-ephemeral messages of a
// thread (its parent and replies, bot and user messages, streams) sorted by ts.
func (s *Server) ThreadMessages(channel, threadTS string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threadLocked(channel, threadTS)
}

func (s *Server) threadLocked(channel, threadTS string) []Message {
	var out []Message
	for _, k := range s.order {
		m := s.current[k]
		if m.Channel != channel || m.Deleted || m.Kind == KindEphemeral {
			continue
		}
		if m.TS == threadTS || m.ThreadTS == threadTS {
			out = append(out, *m)
		}
	}
	slices.SortStableFunc(out, func(a, b Message) int { return strings.Compare(a.TS, b.TS) })
	return out
}

// Streams returns every stream started, in order.
func (s *Server) Streams() []Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Stream, len(s.streams))
	for i, st := range s.streams {
		out[i] = *st
		out[i].Chunks = slices.Clone(st.Chunks)
	}
	return out
}

// StoppedSince returns the streams chat.stopStream stopped after the first
// n stops, in the order they stopped, and the number of stops so far. A
// test that polls for answers under load reads each stop once, instead of
// copying every stream (and holding the server's lock) on each poll.
func (s *Server) StoppedSince(n int) ([]Stream, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n = max(0, min(n, len(s.stops)))
	out := make([]Stream, 0, len(s.stops)-n)
	for _, st := range s.stops[n:] {
		c := *st
		c.Chunks = slices.Clone(st.Chunks)
		out = append(out, c)
	}
	return out, len(s.stops)
}

// Uploads returns the completed uploads, in completion order.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.uploads)
}

// Statuses returns every assistant.threads.setStatus call, in order.
func (s *Server) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.statuses)
}

// Reactions returns every reaction added, in order.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions)
}

// Envelopes returns every Socket Mode message pushed, in order.
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Envelope, len(s.envs))
	for i, e := range s.envs {
		out[i] = *e
	}
	return out
}

// Acks returns every ack received, in arrival order.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acks)
}

func msgKey(channel, ts string) string { return channel + "/" + ts }

// storeLocked records m as the current state of channel/ts.
func (s *Server) storeLocked(m Message) {
	k := msgKey(m.Channel, m.TS)
	if _, ok := s.current[k]; !ok {
		s.order = append(s.order, k)
	}
	s.current[k] = &m
}

package window

import (
	"fmt"
	"hash/fnv"

	"agentbot/engine/transcript"
)

// A request's messages are put in the one form every provider accepts, in
// ProviderForm, the last step of Manager.Request. The stored transcript
// keeps what happened (ids as the model wrote them, runtime notes as user
// messages); only requests are rewritten, the same way each time, so every
// request still extends the previous one and the prefix cache holds.
//
// The rules, and the strictest provider behind each:
//   - Tool-call ids are 9 characters of a-z, A-Z, 0-9. Mistral refuses any
//     other id with 400 "Tool call id was call_menu_3_0 but must be a-z,
//     A-Z, 0-9, with a length of 9." (anomalyco/opencode#1680,
//     karthink/gptel#1203, langchain-ai/langchain#24668); the others take
//     any string. Ids of that form are kept; others get a stable
//     9-character id derived from their hash.
//   - Never a user message directly after tool results: Mistral answers 400
//     "Unexpected role 'user' after role 'tool'" (zed-industries/zed#37021,
//     datapizza-labs/datapizza-ai#98, NousResearch/hermes-agent#20154). The
//     runtime writes one there for its notes (a menu pick after the
//     preloaded workflow, the step limit, the budget) and for a new message
//     that denies pending approvals. An assistant message closes the tool
//     round instead (bridgeText), as the fix in hermes-agent#84944 does.
//     This was chosen over folding the note into the last tool result: the
//     note stays a user message (what the runtime says keeps a user's
//     weight with every provider), the tool results stay what the tools
//     returned (their sizes, audit and elision stubs), and a real user
//     message that denies approvals is not disguised as tool output.
//   - Never two assistant messages in a row: Mistral's chat templates
//     require alternating roles (charmbracelet/crush#279). A text-only
//     assistant message followed by another assistant message is merged
//     into it.
//   - No empty text where it is refused: an assistant message without text
//     nor tool calls gets emptyText, a tool result without text noOutput
//     (Anthropic behind OpenAI-compatible routes: 400 "messages: text
//     content blocks must be non-empty", HKUDS/nanobot#949,
//     BiFangKNT/mtga#68). An assistant message with tool calls and no text
//     is sent with null content by the chat adapter.
//   - Roles: the system prompt is sent as "system", which every provider
//     takes (OpenAI reads it as "developer" for its reasoning models),
//     while "developer" is refused by servers without that role
//     (aliou/pi-neuralwatt#12 names supportsDeveloperRole: false for
//     Mistral's). No message carries "name": the transcript has none to
//     send, so no provider's rule on it can be broken.
const (
	bridgeText = "(Tool results received.)"
	emptyText  = "(No answer.)"
	noOutput   = "(The tool returned no output.)"
)

// strictIDLen is the length of a tool-call id every provider accepts.
const strictIDLen = 9

// strictID reports whether id is 9 characters of a-z, A-Z, 0-9.
func strictID(id string) bool {
	if len(id) != strictIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// hashedID derives a strict id from seed and salt, deterministically.
func hashedID(seed string, salt int) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	if salt > 0 {
		_, _ = fmt.Fprintf(h, "#%d", salt)
	}
	v := h.Sum64()
	b := make([]byte, strictIDLen)
	for i := range b {
		b[i] = idAlphabet[v%uint64(len(idAlphabet))]
		v /= uint64(len(idAlphabet))
	}
	return string(b)
}

// NewCallID returns a strict tool-call id for call i of the message the
// runtime writes at position n of session's msgs, unique among their
// ids. It is deterministic: the same session state gives the same id.
func NewCallID(msgs []transcript.Message, session string, n, i int) string {
	used := map[string]bool{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			used[tc.ID] = true
		}
	}
	seed := fmt.Sprintf("%s/%d/%d", session, n, i)
	for salt := 0; ; salt++ {
		if id := hashedID(seed, salt); !used[id] {
			return id
		}
	}
}

// WireCallID returns the id a stored tool-call id is sent as: itself when
// it is strict, else its hashed strict form (unless two ids of one request
// collide, which a 62^9 space makes unlikely).
func WireCallID(id string) string {
	if strictID(id) {
		return id
	}
	return hashedID(id, 0)
}

// idMap gives each tool-call id of a request its strict form, the same one
// for a call and its result, and different ones for different ids.
type idMap struct {
	to   map[string]string // original -> sent
	from map[string]string // sent -> original
}

// of returns the strict form of id.
func (m *idMap) of(id string) string {
	if sent, ok := m.to[id]; ok {
		return sent
	}
	if m.to == nil {
		m.to, m.from = map[string]string{}, map[string]string{}
	}
	sent := id
	for salt := 0; !strictID(sent) || m.from[sent] != "" && m.from[sent] != id; salt++ {
		sent = hashedID(id, salt)
	}
	m.to[id], m.from[sent] = sent, id
	return sent
}

// remap gives m's tool-call ids their strict form (copying its calls
// first) and a tool result without text its placeholder.
func (ids *idMap) remap(m *transcript.Message) {
	if m.Role == transcript.RoleTool {
		m.ToolCallID = ids.of(m.ToolCallID)
		if m.Content == "" {
			m.Content = noOutput
		}
	}
	if len(m.ToolCalls) == 0 {
		return
	}
	calls := make([]transcript.ToolCall, len(m.ToolCalls))
	for j, tc := range m.ToolCalls {
		tc.ID = ids.of(tc.ID)
		calls[j] = tc
	}
	m.ToolCalls = calls
}

// ProviderForm returns msgs in the form every provider accepts (see the
// rules above). msgs is not changed; tool calls are copied before their
// ids change.
func ProviderForm(msgs []transcript.Message) []transcript.Message {
	var ids idMap
	out := make([]transcript.Message, 0, len(msgs)+2)
	for _, m := range msgs {
		ids.remap(&m)
		if n := len(out); n > 0 {
			prev := &out[n-1]
			switch {
			case m.Role == transcript.RoleUser && prev.Role == transcript.RoleTool:
				out = append(out, transcript.Message{Role: transcript.RoleAssistant, Content: bridgeText})
			case m.Role == transcript.RoleAssistant && prev.Role == transcript.RoleAssistant && len(prev.ToolCalls) == 0:
				out[n-1] = mergeAssistant(*prev, m)
				continue
			}
		}
		out = append(out, m)
	}
	for i := range out {
		if m := &out[i]; m.Role == transcript.RoleAssistant && m.Content == "" && m.Refusal == "" && len(m.ToolCalls) == 0 {
			m.Content = emptyText
		}
	}
	return out
}

// mergeAssistant joins a text-only assistant message and the assistant
// message after it. The later one's reasoning state is kept when it has
// any, since it goes with the tool calls the merged message carries.
func mergeAssistant(a, b transcript.Message) transcript.Message {
	switch {
	case a.Content == "":
		a.Content = b.Content
	case b.Content != "":
		a.Content += "\n\n" + b.Content
	}
	a.Refusal += b.Refusal
	a.ToolCalls = b.ToolCalls
	if b.HasReasoning() || len(b.ToolCalls) > 0 {
		a.ReasoningContent, a.ReasoningField, a.ReasoningDetails = b.ReasoningContent, b.ReasoningField, b.ReasoningDetails
	}
	// Responses reasoning items each stand before what they led to, so
	// both messages' items are kept, in order.
	a.ReasoningItems = append(append([]transcript.ReasoningItem(nil), a.ReasoningItems...), b.ReasoningItems...)
	return a
}

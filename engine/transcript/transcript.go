// Package transcript is agentbot's own session format: the messages, tool
// calls, usage and documents of a conversation, and the session record that
// stores persist. It depends on nothing but the standard library, so a store
// can keep sessions without compiling the engine, and the model client can
// change without a data migration: engine/model converts these types to and
// from its client library, and nothing else does.
//
// The JSON of a Message is the shape OpenAI-compatible APIs use for chat
// messages, so transcripts written before this package existed read as they
// are.
package transcript

import (
	"encoding/json"
	"time"
)

// Role says who wrote a message.
type Role = string

// The roles of a transcript.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolTypeFunction is the only kind of tool call.
const ToolTypeFunction = "function"

// Message is one message of a transcript.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// Refusal is the model's refusal text, when it refused.
	Refusal string `json:"refusal,omitempty"`
	// ToolCalls are the calls of an assistant message, in order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`

	// Reasoning state of an assistant message, kept so it can be sent back
	// exactly as the provider that wrote it requires; never shown to people.
	//
	// ReasoningContent is the model's reasoning text: reasoning_content
	// (DeepSeek, vLLM) or OpenRouter's reasoning. ReasoningField is the
	// wire name it came under when that is not reasoning_content.
	ReasoningContent string `json:"reasoning_content,omitempty"`
	ReasoningField   string `json:"reasoning_field,omitempty"`
	// ReasoningDetails is OpenRouter's reasoning_details array, verbatim.
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`

	// ReasoningItems are the encrypted reasoning items a Responses API
	// model returned with this assistant message. They are sent back, before
	// the message, on later calls, and never shown to people.
	ReasoningItems []ReasoningItem `json:"reasoning_items,omitempty"`
}

// HasReasoning reports whether m carries reasoning state of any kind.
func (m *Message) HasReasoning() bool {
	if m.ReasoningContent != "" || len(m.ReasoningDetails) > 0 || len(m.ReasoningItems) > 0 {
		return true
	}
	for _, tc := range m.ToolCalls {
		if tc.ThoughtSignature != "" {
			return true
		}
	}
	return false
}

// ReasoningBytes is the size of m's reasoning state as sent.
func (m *Message) ReasoningBytes() int {
	n := len(m.ReasoningContent) + len(m.ReasoningDetails)
	for _, r := range m.ReasoningItems {
		n += r.Bytes()
	}
	for _, tc := range m.ToolCalls {
		n += len(tc.ThoughtSignature)
	}
	return n
}

// DropReasoning removes m's reasoning state (for turns whose provider
// allows that).
func (m *Message) DropReasoning() {
	m.ReasoningContent, m.ReasoningField, m.ReasoningDetails, m.ReasoningItems = "", "", nil, nil
	if len(m.ToolCalls) == 0 {
		return
	}
	calls := append([]ToolCall(nil), m.ToolCalls...)
	for i := range calls {
		calls[i].ThoughtSignature = ""
	}
	m.ToolCalls = calls
}

// ReasoningItem is one Responses API reasoning item, kept as the provider
// sent it: its id, its encrypted content (opaque, sent back byte for byte)
// and the texts of its summary, if any.
type ReasoningItem struct {
	ID               string   `json:"id"`
	EncryptedContent string   `json:"encrypted_content,omitempty"`
	Summary          []string `json:"summary,omitempty"`
}

// Bytes is the size of the item's state as it is sent back.
func (r ReasoningItem) Bytes() int {
	n := len(r.ID) + len(r.EncryptedContent)
	for _, s := range r.Summary {
		n += len(s)
	}
	return n
}

// ToolCall is one tool call the model asked for.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
	// ThoughtSignature is Gemini's signature of the reasoning that led to
	// this call (extra_content.google.thought_signature), sent back on it.
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

// FunctionCall is the tool's name and its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage counts tokens and model calls.
type Usage struct {
	Prompt     int `json:"prompt"`
	Cached     int `json:"cached"`
	Completion int `json:"completion"`
	// Reasoning is the part of Completion the model spent reasoning.
	Reasoning int `json:"reasoning,omitempty"`
	Calls     int `json:"calls"`
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{Prompt: u.Prompt + v.Prompt, Cached: u.Cached + v.Cached, Completion: u.Completion + v.Completion,
		Reasoning: u.Reasoning + v.Reasoning, Calls: u.Calls + v.Calls}
}

// Output is one version of a document the agent saved.
type Output struct {
	// Path is relative to the session's output folder ("prd.md").
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	Version int       `json:"version"`
	Time    time.Time `json:"time"`
	// Internal marks a working file of the runtime's (a memlog), kept in
	// the store so another replica can go on with it, but not a document:
	// never uploaded, listed or exported.
	Internal bool `json:"internal,omitempty"`
	// Project, when set, is the project whose document version DocVersion
	// this output is: its bytes live there, once, and not among the
	// session's outputs. Outputs saved before projects have none.
	Project    string `json:"project,omitempty"`
	DocVersion int    `json:"doc_version,omitempty"`
}

// Shown is the version people and agents know the output by: the
// project's version of the document (DocVersion) when it is one, which
// counts every thread's saves, else the session's own count (Version).
func (o Output) Shown() int {
	if o.Project != "" && o.DocVersion > 0 {
		return o.DocVersion
	}
	return o.Version
}

// AgentSnapshot is what a session keeps of its agent: enough to name it and
// to find it again, and no host path. The agent itself is resolved from the
// catalog by id each time the session loads.
type AgentSnapshot struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Icon        string `json:"icon,omitempty"`
	Description string `json:"description,omitempty"`
	// Source ("bundle" or "module") and Module tell two agents of one id
	// apart when a later install takes the id.
	Source    string `json:"source,omitempty"`
	Module    string `json:"module,omitempty"`
	Format    string `json:"format,omitempty"`
	SkillName string `json:"skill_name,omitempty"`
}

// ActiveSkill is the skill a session runs: its name, its folder as the
// model sees it (/project/...) and the variables bound to it.
type ActiveSkill struct {
	Name string            `json:"name"`
	Root string            `json:"root"`
	Vars map[string]string `json:"vars,omitempty"`
}

// Compaction replaces the messages before Upto in requests by a summary.
type Compaction struct {
	Upto    int    `json:"upto"`
	Summary string `json:"summary"`
	// Kept is the active workflow's load (load_skill or preload_workflow)
	// from before Upto: the assistant message, the call's id and its result.
	Kept *KeptCall `json:"kept,omitempty"`
}

// KeptCall names one tool call and its result in the transcript.
type KeptCall struct {
	Assistant int    `json:"assistant"`
	CallID    string `json:"call_id"`
	Result    int    `json:"result"`
}

// Session is one conversation as stores keep it.
type Session struct {
	// ID is short and filesystem-safe; it names the session's folders.
	ID string `json:"id"`
	// Key is the caller's key (Slack uses team/channel/thread).
	Key     string `json:"key"`
	AgentID string `json:"agent_id"`
	// Agent is the snapshot of the agent the session started with.
	Agent *AgentSnapshot `json:"agent,omitempty"`
	// Date is fixed once per session, for {date}.
	Date string `json:"date"`
	// Vars are the session's variables, as the model sees them (folders
	// are virtual: /project, /outputs).
	Vars map[string]string `json:"vars"`
	// Messages is the transcript. It only grows; Messages[0] is the system
	// prompt.
	Messages []Message `json:"messages"`
	// Skill is the skill the session runs, set when a skill is loaded.
	Skill *ActiveSkill `json:"skill,omitempty"`
	// Compaction, when set, replaces the older messages in requests by a
	// summary.
	Compaction *Compaction `json:"compaction,omitempty"`
	// TokenRatio is the provider's prompt tokens per estimated token,
	// learned from reported usage (0: not yet known).
	TokenRatio float64 `json:"token_ratio,omitempty"`
	// PrefixBreaks counts the times context management changed earlier
	// content of requests; Compactions counts the compaction calls.
	PrefixBreaks int `json:"prefix_breaks,omitempty"`
	// Window is the provider's context window when it reported one smaller
	// than the configured budget.
	Window      int `json:"window,omitempty"`
	Compactions int `json:"compactions,omitempty"`
	// Elided is how many leading messages have their bulky tool results
	// replaced by a stub in requests.
	Elided  int      `json:"elided"`
	Outputs []Output `json:"outputs"`
	// Pending are tool calls waiting for a person's approval: the turn that
	// made them ended, and the next turn resumes once each is decided.
	Pending []Approval `json:"pending,omitempty"`
	// Held are the results of the other calls of the response that made
	// the pending calls, already run, kept until those are decided so
	// every result is appended in call order.
	Held []Message `json:"held,omitempty"`
	// Audit records every tool call of the session, in order.
	Audit []ToolRecord `json:"audit,omitempty"`
	// Handoff, set before activation when the thread's earlier session was
	// another agent's, tells the new agent what came before (see
	// engine.Handoff); activation puts it in the system prompt.
	Handoff string `json:"handoff,omitempty"`
	// Seen is the version of each project document the session has read
	// or written ("project\x00path" → version): a save based on an older
	// one is refused.
	Seen map[string]int `json:"doc_seen,omitempty"`
	// Wrote is the latest version of each project document the session
	// wrote (same keys as Seen), so a call cut short by a crash after its
	// version landed is not applied twice when the model calls it again.
	Wrote map[string]int `json:"doc_wrote,omitempty"`
	// Owner is the person the session belongs to: who started it (a Slack
	// user id), set by the front end. The stores index sessions by it
	// (storage.SessionIndex), so a person's sessions are found without
	// reading every session.
	Owner string `json:"owner,omitempty"`
	// Meta holds small facts of the caller's own.
	Meta    map[string]string `json:"meta,omitempty"`
	Usage   Usage             `json:"usage"`
	Created time.Time         `json:"created"`
	Updated time.Time         `json:"updated"`
}

// SetMeta sets one entry of the session's Meta; an empty value deletes it.
func (s *Session) SetMeta(name, value string) {
	if value == "" {
		delete(s.Meta, name)
		return
	}
	if s.Meta == nil {
		s.Meta = map[string]string{}
	}
	s.Meta[name] = value
}

// Unfinished reports whether the session's last turn was cut short: its
// transcript does not end with the agent's answer.
func (s *Session) Unfinished() bool {
	if s == nil || len(s.Messages) < 2 {
		return false
	}
	last := s.Messages[len(s.Messages)-1]
	return !(last.Role == RoleAssistant && len(last.ToolCalls) == 0)
}

// InputPrefix starts the Path of an internal output that is a file people
// shared into the session (the model's /inputs), kept in the store so that
// another replica has it too; document paths never start with "/".
const InputPrefix = "/inputs/"

// Documents returns the newest version of each document, in the order each
// path was first saved, leaving out the runtime's internal files.
func Documents(outputs []Output) []Output {
	var out []Output
	for _, o := range Latest(outputs) {
		if !o.Internal {
			out = append(out, o)
		}
	}
	return out
}

// Latest returns the newest version of each saved file, internal ones
// included, in the order each path was first saved.
func Latest(outputs []Output) []Output {
	index := map[string]int{}
	var out []Output
	for _, o := range outputs {
		if i, ok := index[o.Path]; ok {
			if o.Version >= out[i].Version {
				out[i] = o
			}
			continue
		}
		index[o.Path] = len(out)
		out = append(out, o)
	}
	return out
}

// NextVersion returns the version a new save of path gets: one more than
// the highest version of path in outputs, 1 for a new path.
func NextVersion(outputs []Output, path string) int {
	version := 1
	for _, o := range outputs {
		if o.Path == path && o.Version >= version {
			version = o.Version + 1
		}
	}
	return version
}

// Tokens is the prompt plus completion tokens.
func (u Usage) Tokens() int { return u.Prompt + u.Completion }

// Decisions on a tool call that needs approval.
const (
	DecisionApproved = "approved"
	DecisionDenied   = "denied"
	DecisionExpired  = "expired" // no answer in time
	// DecisionConnected ends a connect gate: the person connected their
	// account at the call's server. A call whose tool also asks for
	// approval then waits for that; else it runs.
	DecisionConnected = "connected"
)

// Kinds of a wait on a tool call.
const (
	// GateApproval (the zero value): a person approves or denies the call.
	GateApproval = ""
	// GateConnect: the person the call acts as must first connect their
	// account at the call's server (MCP authorization); they connect or
	// decline, or the wait expires.
	GateConnect = "connect"
)

// Approval is one tool call that waits for, or got, a person's decision.
type Approval struct {
	CallID string `json:"call_id"`
	// Tool is the name the model called ("server__tool"); Server is the
	// MCP server it belongs to ("" for a built-in tool).
	Tool   string `json:"tool"`
	Server string `json:"server,omitempty"`
	// Args are the call's arguments as JSON text.
	Args  string    `json:"args"`
	Asked time.Time `json:"asked"`
	// Kind is what the call waits for: GateApproval or GateConnect.
	Kind string `json:"kind,omitempty"`
	// Person is who the call acts as: the person whose message started
	// the turn (never who decides). A resumed turn acts as them.
	Person string `json:"person,omitempty"`
	// Ask is set on a connect gate whose tool also asks for approval: once
	// connected, the call waits for approval.
	Ask bool `json:"ask,omitempty"`
	// Decision is "" while pending, else one of the Decision constants;
	// By is the user who decided ("" when it expired).
	Decision string    `json:"decision,omitempty"`
	By       string    `json:"by,omitempty"`
	Decided  time.Time `json:"decided,omitempty"`
}

// Outcomes of a tool call in the audit trail.
const (
	OutcomeOK      = "ok"
	OutcomeError   = "error"
	OutcomeDenied  = "denied"
	OutcomeExpired = "expired"
)

// ToolRecord is one tool call in a session's audit trail: what ran, when,
// for how long, with what outcome, and who approved it. Arguments and
// results are never kept here, only a digest and a size.
type ToolRecord struct {
	Time   time.Time `json:"time"`
	Tool   string    `json:"tool"`
	Server string    `json:"server,omitempty"`
	CallID string    `json:"call_id"`
	// ArgsDigest is "sha256:" and the hex SHA-256 of the arguments text.
	ArgsDigest  string `json:"args_digest"`
	ResultBytes int    `json:"result_bytes"`
	// DurationMS is how long the tool ran, in milliseconds.
	DurationMS int64  `json:"duration_ms"`
	Outcome    string `json:"outcome"`
	Approver   string `json:"approver,omitempty"`
}

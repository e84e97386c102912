package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"

	"agentbot/engine/llm"
	"agentbot/engine/party"
	"agentbot/engine/project"
	"agentbot/engine/prompt"
	"agentbot/engine/sandbox"
	"agentbot/engine/text"
	"agentbot/engine/transcript"
)

// Tool is one capability offered to the model, whole: its name, description
// and JSON schema, the rule the system prompt gives for it, the status line
// people see while it runs, what it does, and how a stored call of it reads
// in an export or an elision stub. Each built-in tool is defined in a file
// of its own, tool_<name>.go, and listed in builtinTools; nothing else
// names it.
type Tool struct {
	// Name is what the model calls; Description and Schema are sent with
	// every request.
	Name        string
	Description string
	Schema      string
	// Rule is the tool's line in the system prompt's tool rules ("" for none).
	Rule string
	// Offered reports whether a session is offered the tool (nil: always).
	Offered func(o Offer) bool
	// Status is the short human line for a call, such as "reading prd.md".
	Status func(args string) string
	// Run executes a call. Bad arguments become an error result.
	Run func(ctx context.Context, env *toolEnv, args string) ToolResult
	// Summary describes a stored call and its result in a few words, for
	// exports and elision stubs ("saved prd.md (2.1 KiB)").
	Summary func(args, result string) string
}

// ToolResult is what a tool returns to the model. Every tool has result types of
// its own; they are encoded as JSON objects in the transcript, never empty.
type ToolResult interface {
	// Failure is the error text of a failed call, or "".
	Failure() string
}

// ErrorResult is the result of a failed call: the message tells the model
// what went wrong and what to do instead.
type ErrorResult struct {
	Error string `json:"error"`
	// Raw keeps arguments that were not valid JSON, so the model sees what
	// it sent.
	Raw string `json:"raw_arguments,omitempty"`
}

// Failure returns the error text.
func (r ErrorResult) Failure() string { return r.Error }

// errResult builds an ErrorResult from a format.
func errResult(format string, args ...any) ErrorResult {
	return ErrorResult{Error: fmt.Sprintf(format, args...)}
}

// failure turns an error into an ErrorResult.
func failure(err error) ErrorResult { return ErrorResult{Error: err.Error()} }

// encodeResult renders a result as the JSON the model reads.
func encodeResult(r ToolResult) string {
	b, err := json.Marshal(r)
	if err != nil || len(b) == 0 || string(b) == "null" || string(b) == "{}" {
		return `{"error":"tool result could not be encoded"}`
	}
	return string(b)
}

// toolEnv is what the tool calls of one turn share: the engine, the session
// and its sandbox, and how a saved output is recorded.
type toolEnv struct {
	e  *Engine
	s  *Session
	sb *sandbox.Sandbox
	// out records the documents the calls write (outputs.go).
	out *outputs
	// mu guards session fields tools change while calls run in parallel;
	// editMu serializes read-modify-write edits of documents.
	mu     sync.Mutex
	editMu sync.Mutex
	// sub is the usage of the model calls tools made (party_round's
	// sub-turns), added to the turn's after the calls; turnUsage is the
	// turn's usage before them.
	subMu     sync.Mutex
	sub       Usage
	turnUsage Usage
	// ext are the session's external tools this turn (external_offer.go).
	ext externals
	// emit reports the turn's events (a call's progress); nil in tests.
	emit func(Event)
	// docs are the project's documents, nil outside a project.
	docs *project.Docs
}

// define builds a Tool from typed pieces: args of type A are decoded from
// the call's JSON (an error result explains bad JSON with example), run
// returns a typed result or an error, status and summary read the typed
// args. example is a valid argument object shown when decoding fails.
func define[A any](t Tool, example string, status func(A) string,
	run func(ctx context.Context, env *toolEnv, a A) (ToolResult, error)) Tool {
	t.Status = func(args string) string {
		var a A
		_ = json.Unmarshal([]byte(args), &a)
		return status(a)
	}
	t.Run = func(ctx context.Context, env *toolEnv, args string) ToolResult {
		var a A
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return ErrorResult{Error: fmt.Sprintf("invalid JSON arguments for %s (%v); expected e.g. %s", t.Name, err, example), Raw: text.Cut(args, 2000, "…")}
		}
		r, err := run(ctx, env, a)
		if err != nil {
			return failure(err)
		}
		return r
	}
	return t
}

// builtinTools are the engine's own tools, sorted by name, so requests
// stay byte-stable; each is defined in a file of its own. TestToolsAreWhole
// checks the order and that no name is used twice.
var builtinTools = []Tool{
	editOutputTool, // edit_output: tool_editoutput.go
	findSkillsTool, // find_skills: tool_findskills.go
	listFilesTool,  // list_files: tool_listfiles.go
	loadSkillTool,  // load_skill: tool_loadskill.go
	memlogTool,     // memlog: tool_memlog.go
	partyRoundTool, // party_round: tool_partyround.go
	preloadTool,    // preload_workflow: tool_preload.go
	readFileTool,   // read_file: tool_readfile.go
	saveOutputTool, // save_output: tool_saveoutput.go
}

// allTools returns every built-in tool sorted by name.
func allTools() []Tool { return builtinTools }

// lookupTool returns the built-in tool named name.
func lookupTool(name string) (Tool, bool) {
	for _, t := range builtinTools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Offer is what decides which tools a session is offered.
type Offer struct {
	// SkillFormat is set for a skill-format agent (BMAD 6.4+, Agent Skills).
	SkillFormat bool
	// Skills is set when the agent may load skills; ManySkills when they
	// are more than the system prompt lists.
	Skills, ManySkills bool
	// Party is set while the session runs party mode.
	Party bool
}

// offer returns what decides the tools of a session.
func (e *Engine) offer(s *Session) Offer {
	skills := e.catalog().SkillsFor(s.AgentDef)
	return Offer{SkillFormat: s.skillMode(), Skills: len(skills) > 0, ManySkills: prompt.SkillsOverBudget(skills),
		Party: s.Skill != nil && s.Skill.Name == party.SkillName}
}

// toolsFor returns the tools a session is offered, sorted by name.
func (e *Engine) toolsFor(s *Session) []Tool {
	o := e.offer(s)
	var out []Tool
	for _, t := range allTools() {
		if t.Offered == nil || t.Offered(o) {
			out = append(out, t)
		}
	}
	return out
}

// definitions converts tools to the request's tool definitions.
func definitions(tools []Tool) []llm.Tool {
	out := make([]llm.Tool, len(tools))
	for i, t := range tools {
		out[i] = llm.Tool{Name: t.Name, Description: t.Description, Parameters: json.RawMessage(t.Schema)}
	}
	return out
}

// ToolDefinitions returns the definitions of every tool, in request order.
func ToolDefinitions() []llm.Tool { return definitions(allTools()) }

// ToolNames returns the names of the tools a session is offered.
func (e *Engine) ToolNames(s *Session) []string {
	var out []string
	for _, t := range e.toolsFor(s) {
		out = append(out, t.Name)
	}
	return out
}

// toolNames are the names of every tool of the turn, external ones last.
func (env *toolEnv) toolNames() string {
	names := env.e.ToolNames(env.s)
	for _, t := range env.ext.offered() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

// definitions are the request's tool definitions of the turn: the built-in
// tools, then the external ones in their order.
func (env *toolEnv) definitions() []llm.Tool {
	out := definitions(env.e.toolsFor(env.s))
	for _, t := range env.ext.offered() {
		out = append(out, llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Schema})
	}
	return out
}

// runCall runs one tool call. It never panics on bad input: malformed JSON
// and unknown tools become error results the model can recover from.
func (env *toolEnv) runCall(ctx context.Context, tc transcript.ToolCall) ToolResult {
	if strings.TrimSpace(tc.Function.Name) == "" {
		return errResult("this tool call has no name; call one of the tools by its name: %s", env.toolNames())
	}
	args := strings.TrimSpace(tc.Function.Arguments)
	if args == "" {
		args = "{}"
	}
	if x, ok := env.ext.lookup(tc.Function.Name); ok {
		return env.runExternal(ctx, x, tc, args)
	}
	t, ok := lookupTool(tc.Function.Name)
	if !ok || (t.Offered != nil && !t.Offered(env.e.offer(env.s))) {
		return errResult("unknown tool %q; the tools are %s", tc.Function.Name, env.toolNames())
	}
	return t.Run(ctx, env, args)
}

// callStatus is the short human line for a tool call.
func callStatus(tc transcript.ToolCall) string {
	if t, ok := lookupTool(tc.Function.Name); ok && t.Status != nil {
		return t.Status(tc.Function.Arguments)
	}
	return "running " + tc.Function.Name
}

// callSummary describes a stored call and its result in a few words.
func callSummary(tc transcript.ToolCall, result string) string {
	if t, ok := lookupTool(tc.Function.Name); ok && t.Summary != nil {
		return t.Summary(tc.Function.Arguments, result)
	}
	var r ErrorResult
	if json.Unmarshal([]byte(result), &r) == nil && r.Error != "" {
		return "error: " + r.Error
	}
	return fmt.Sprintf("%s (%d bytes)", tc.Function.Name, len(result))
}

// summarize builds a Tool.Summary from a summary of the tool's typed
// result: a stored error reads "error: ...", an undecodable result by size.
func summarize[R any](f func(r R, size int) string) func(args, result string) string {
	return func(_, result string) string {
		var e ErrorResult
		if json.Unmarshal([]byte(result), &e) == nil && e.Error != "" {
			return "error: " + e.Error
		}
		var r R
		if json.Unmarshal([]byte(result), &r) != nil {
			return fmt.Sprintf("%d bytes", len(result))
		}
		return f(r, len(result))
	}
}

// newCall builds a tool call the runtime makes itself (the menu shortcut).
func newCall(tool string, args any) transcript.ToolCall {
	b, _ := json.Marshal(args)
	return transcript.ToolCall{Type: transcript.ToolTypeFunction, Function: transcript.FunctionCall{Name: tool, Arguments: string(b)}}
}

// baseName is the last element of a slash or backslash path, or "a file".
func baseName(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	if p == "" {
		return "a file"
	}
	return path.Base(p)
}

// toolRules are the tools' lines in the system prompt's tool rules, in
// order.
func toolRules(tools []Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Rule
	}
	return out
}

package window

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"agentbot/engine/llm"
	"agentbot/engine/sandbox"
	"agentbot/engine/text"
	"agentbot/engine/transcript"
)

// Context management keeps every request under the model's window, for
// sessions of any length, in two steps that each move rarely, so the
// provider's cached prefix breaks rarely too:
//
//  1. Elision. When a request nears the budget, everything bulky before a
//     mark is replaced, in requests only, by a short stub that says how to
//     get it back: tool results, the documents carried in tool-call
//     arguments (save_output's content), and long user or agent messages,
//     which are kept as files under /inputs/context. The mark moves in one
//     large step, down to well under the budget.
//  2. Compaction. When stubs are not enough, the older turns are summarized
//     by one model call. Requests then carry the system prompt, the
//     summary, the active workflow's load (its instructions) and the last
//     turns verbatim. A provider's context_length_exceeded triggers the
//     same compaction and one retry.
//
// The stored transcript never changes: elision and compaction are views.
const (
	// elideAt is the share of the budget at which the elision mark moves;
	// elideTo the share it aims to get under, and elideDone the share it
	// must reach to be worth a move (else the turns are compacted).
	elideAt   = 0.70
	elideTo   = 0.45
	elideDone = 0.55
	// compactAt is the share at which, after elision, the transcript is
	// compacted; compactTail the share the verbatim tail may keep.
	compactAt   = 0.80
	compactTail = 0.25
	// keepRecent messages at the end are never elided.
	keepRecent = 12
	// bulky is the size above which a tool result or a string argument is
	// elided; bulkyText the size of a user or agent message that is.
	bulky     = 1024
	bulkyText = 4096
	// summaryInput caps, as a share of the budget, the transcript text a
	// compaction call reads; minCompact is the least share a compaction
	// must be able to remove to be worth its call.
	summaryInput = 0.5
	minCompact   = 0.15
)

// Model is what context management needs of a model client: one call,
// for a compaction's summary.
type Model interface {
	Complete(ctx context.Context, req llm.Request, onText func(delta string)) (*llm.Response, error)
}

// Manager keeps the requests of sessions under the model's window.
type Manager struct {
	// Budget is the model's context in tokens.
	Budget int
	// Model makes the compaction call.
	Model  Model
	Logger *slog.Logger
	// Summary describes a stored call and its result in a few words (an
	// elision stub, a compaction's transcript); Status is a call's short
	// human line.
	Summary func(tc transcript.ToolCall, result string) string
	Status  func(tc transcript.ToolCall) string
	// Loads are the tools that load a skill or workflow: the last
	// successful load stays in requests after a compaction.
	Loads []string
}

// Stubs caches the elided form of a session's messages by index (nil:
// unchanged), so requests do not rebuild them; stubs depend only on the
// message. The zero value is empty.
type Stubs struct{ m map[int]*transcript.Message }

// Session is a session as context management sees it: its record and
// the cache of its stubs.
type Session struct {
	*transcript.Session
	cache *Stubs
}

// Of returns the view of record rec with its stubs cache c.
func Of(rec *transcript.Session, c *Stubs) *Session { return &Session{Session: rec, cache: c} }

// loads reports whether tool loads a skill or a workflow.
func (w *Manager) loads(tool string) bool {
	return slices.Contains(w.Loads, tool)
}

// Window is the session's context budget in tokens: the configured one, or
// the provider's window when it said that is smaller.
func (w *Manager) Window(s *Session) int {
	if s.Window > 0 && s.Window < w.Budget {
		return s.Window
	}
	return w.Budget
}

// Request returns the transcript as sent: after a compaction the summary
// and the kept workflow load replace the older messages, and bulky content
// before the elision mark is replaced by stubs.
//
// The result is in the form every provider accepts (ProviderForm).
func (w *Manager) Request(s *Session) []transcript.Message {
	out := make([]transcript.Message, 0, len(s.Messages)+3)
	w.eachSent(s, func(m *transcript.Message) { out = append(out, *m) })
	return ProviderForm(out)
}

// requestTokens is RawTokens of Request, without building them.
func (w *Manager) requestTokens(s *Session) int {
	n := 0
	w.eachSent(s, func(m *transcript.Message) { n += msgBytes(m) })
	return n / 4
}

// eachSent calls fn with each message a request carries, in order. fn must
// not keep or change the message.
func (w *Manager) eachSent(s *Session, fn func(m *transcript.Message)) {
	msgs := s.Messages
	if len(msgs) == 0 {
		return
	}
	fn(&msgs[0])
	first, kept := sentCompaction(s, fn)
	if s.Elided > first && s.cache.m == nil {
		s.cache.m = map[int]*transcript.Message{}
	}
	var calls map[string]transcript.ToolCall // built only when a stub is new
	for i := first; i < len(msgs); i++ {
		if i >= s.Elided || i == kept[0] || i == kept[1] {
			fn(&msgs[i])
			continue
		}
		st, cached := s.cache.m[i]
		if !cached {
			if calls == nil {
				calls = callsBefore(msgs, s.Elided)
			}
			st = w.stubOf(msgs, i, calls)
			s.cache.m[i] = st // nil: the message is sent as it is
		}
		if st != nil {
			fn(st)
		} else {
			fn(&msgs[i])
		}
	}
}

// sentCompaction calls fn with what a compaction puts in place of the
// messages before its Upto: the summary, and the active workflow's load
// it kept. It returns the first message sent after them, and the indexes
// of the kept call's assistant message and result (0, 0 for none).
func sentCompaction(s *Session, fn func(m *transcript.Message)) (first int, kept [2]int) {
	msgs := s.Messages
	c := s.Compaction
	if c == nil || c.Upto <= 1 || c.Upto > len(msgs) {
		return 1, kept
	}
	sum := transcript.Message{Role: transcript.RoleUser, Content: SummaryMessage(c)}
	fn(&sum)
	k := c.Kept
	if k == nil || k.Assistant >= len(msgs) || k.Result >= len(msgs) {
		return c.Upto, kept
	}
	a := msgs[k.Assistant]
	for _, tc := range a.ToolCalls {
		if tc.ID == k.CallID {
			a.Content, a.ToolCalls = "", []transcript.ToolCall{tc}
			fn(&a)
			fn(&msgs[k.Result])
			return c.Upto, [2]int{k.Assistant, k.Result}
		}
	}
	return c.Upto, kept
}

// callsBefore maps the ids of the tool calls in msgs[:n] to the calls.
func callsBefore(msgs []transcript.Message, n int) map[string]transcript.ToolCall {
	calls := map[string]transcript.ToolCall{}
	for _, m := range msgs[:n] {
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = tc
		}
	}
	return calls
}

// stubOf returns the elided form of message i, or nil when it is sent as
// it is: bulky content stubbed (elide), reasoning state left out where
// allowed (reasoningDroppable).
func (w *Manager) stubOf(msgs []transcript.Message, i int, calls map[string]transcript.ToolCall) *transcript.Message {
	m, ok := w.elide(i, msgs[i], calls)
	if reasoningDroppable(msgs, i) {
		m.DropReasoning()
		ok = true
	}
	if !ok {
		return nil
	}
	return &m
}

// reasoningDroppable reports whether message i's reasoning state may be
// left out of requests: it has some, its turn (the messages between two
// user messages) is over, and the provider allows it for that turn.
// DeepSeek's reasoning_content must be sent again in every later request
// when its turn made tool calls, and is ignored when it did not
// (https://api-docs.deepseek.com/guides/thinking_mode); Gemini validates
// thought signatures only in the current turn
// (https://ai.google.dev/gemini-api/docs/thought-signatures), and
// OpenRouter's reasoning_details stand for them.
func reasoningDroppable(msgs []transcript.Message, i int) bool {
	m := &msgs[i]
	if m.Role != transcript.RoleAssistant || !m.HasReasoning() {
		return false
	}
	start, end := i, i
	for start > 0 && msgs[start-1].Role != transcript.RoleUser {
		start--
	}
	for end < len(msgs) && msgs[end].Role != transcript.RoleUser {
		end++
	}
	if end == len(msgs) {
		return false // the current turn
	}
	for _, t := range msgs[start:end] {
		if len(t.ToolCalls) > 0 && t.ReasoningContent != "" && t.ReasoningField == "" {
			return false // DeepSeek's rule for turns with tool calls
		}
	}
	return true
}

// msgBytes is the size estimate of one message in bytes.
func msgBytes(m *transcript.Message) int {
	n := len(m.Content) + 16 + m.ReasoningBytes()
	for _, tc := range m.ToolCalls {
		n += len(tc.Function.Arguments) + len(tc.Function.Name) + 24
	}
	return n + 40*len(m.ReasoningItems) // each reasoning item's JSON framing
}

// elide returns the stubbed form of message i, and whether it changed.
func (w *Manager) elide(i int, m transcript.Message, calls map[string]transcript.ToolCall) (transcript.Message, bool) {
	switch m.Role {
	case transcript.RoleTool:
		if len(m.Content) > bulky {
			m.Content = w.stub(calls[m.ToolCallID], m.Content)
			return m, true
		}
	case transcript.RoleUser, transcript.RoleAssistant:
		changed := false
		if len(m.Content) > bulkyText {
			m.Content = fmt.Sprintf("(An earlier message of %s was elided to save context; read_file %s to see it.)", sandbox.SizeText(int64(len(m.Content))), elidedPath(i))
			changed = true
		}
		if len(m.ToolCalls) > 0 {
			var tcs []transcript.ToolCall
			for k, tc := range m.ToolCalls {
				if args, ok := elideArgs(tc.Function.Arguments); ok {
					if tcs == nil {
						tcs = append([]transcript.ToolCall(nil), m.ToolCalls...)
					}
					tcs[k].Function.Arguments = args
				}
			}
			if tcs != nil {
				m.ToolCalls, changed = tcs, true
			}
		}
		return m, changed
	}
	return m, false
}

// elideArgs replaces the bulky string values of a call's arguments (the
// document of a save_output) by a note saying where the document is now.
func elideArgs(args string) (string, bool) {
	if len(args) <= bulky {
		return args, false
	}
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) != nil {
		return args, false
	}
	where := "the document"
	if p, ok := obj["path"].(string); ok && len(p) < 512 {
		where = p
	}
	changed := false
	for k, v := range obj {
		if str, ok := v.(string); ok && len(str) > bulky/2 {
			obj[k] = fmt.Sprintf("(%s elided to save context; read_file %s for the document as it is now)", sandbox.SizeText(int64(len(str))), where)
			changed = true
		}
	}
	if !changed {
		return args, false
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return args, false
	}
	return string(b), true
}

// stub is the one-line replacement of an elided tool result: what the call
// was, and how to get it back.
func (w *Manager) stub(tc transcript.ToolCall, content string) string {
	what := "an earlier tool result"
	if tc.Function.Name != "" {
		what = "the earlier result of " + tc.Function.Name + ": " + w.Summary(tc, content) + ","
	}
	out, _ := json.Marshal(map[string]string{"elided": fmt.Sprintf("%s removed to save context; call the tool again if you need it", what)})
	return string(out)
}

// elidedPath is where an elided message's text is kept for the model.
func elidedPath(i int) string {
	return fmt.Sprintf("%s/context/message-%d.md", sandbox.InputDir, i)
}

// Estimate is the calibrated token estimate of the request s would send
// now, with tools.
func (w *Manager) Estimate(s *Session, tools int) int {
	return Calibrated(s.Session, w.requestTokens(s)+tools)
}

// RawTokens is the uncalibrated estimate of messages: about four bytes a
// token, plus a little per message and call.
func RawTokens(msgs []transcript.Message) int {
	n := 0
	for i := range msgs {
		n += msgBytes(&msgs[i])
	}
	return n / 4
}

// Calibrated scales an estimate by the session's measured ratio of the
// provider's prompt tokens to the estimate.
func Calibrated(s *transcript.Session, raw int) int {
	r := s.TokenRatio
	if r <= 0 {
		r = 1
	}
	return int(float64(raw) * r)
}

// Calibrate learns from a call's reported prompt tokens how the estimate
// compares, smoothing over calls, and reports whether the provider counted
// far fewer tokens than were sent (llm.PromptTruncated). A reply without usage
// (prompt 0) teaches nothing and changes nothing, so context management
// goes on with what it knew. The ratio stays within [0.25, 4]: no tokenizer
// is that far from bytes/4, so a ratio outside says the count is not of
// what was sent, and learning it would switch management off (a tiny
// ratio) or compact at once (a huge one).
func Calibrate(s *transcript.Session, rawSent int, prompt int) (truncated bool) {
	if prompt <= 0 || rawSent <= 0 {
		return false
	}
	if llm.PromptTruncated(Calibrated(s, rawSent), prompt) {
		return true // not a ratio to learn: the provider dropped part of the prompt
	}
	r := float64(prompt) / float64(rawSent)
	r = min(max(r, 0.25), 4)
	if s.TokenRatio <= 0 {
		s.TokenRatio = r
		return
	}
	s.TokenRatio = 0.7*s.TokenRatio + 0.3*r
	return false
}

// Fit keeps the next request under the budget. When a request nears
// the budget (elideAt), the elision mark moves in one large step if that
// brings the request well under (elideDone); otherwise the older turns are
// compacted, so the prefix never shifts a little on every turn. force
// compacts at once (the provider said the context is too long). tools is
// the estimate of the tool definitions.
func (w *Manager) Fit(ctx context.Context, s *Session, sb *sandbox.Sandbox, tools int, force bool) error {
	budget := float64(w.Window(s))
	if !force && float64(w.Estimate(s, tools)) < elideAt*budget {
		return nil
	}
	mark, after := w.planElision(s, tools)
	if !force && mark > s.Elided && after <= elideDone*budget {
		w.applyElision(s, sb, mark, after)
		return nil
	}
	return w.compact(ctx, s, tools, force)
}

// planElision finds how far the elision mark must move to get under
// elideTo of the budget, keeping the last keepRecent messages whole, and
// the estimate after that move.
func (w *Manager) planElision(s *Session, tools int) (mark int, after float64) {
	total := float64(w.Estimate(s, tools))
	floor := len(s.Messages) - keepRecent
	mark = s.Elided
	if floor <= s.Elided {
		return mark, total
	}
	target := elideTo * float64(w.Window(s))
	calls := map[string]transcript.ToolCall{}
	for i := 0; i < s.Elided && i < len(s.Messages); i++ {
		for _, tc := range s.Messages[i].ToolCalls {
			calls[tc.ID] = tc
		}
	}
	ratio := s.TokenRatio
	if ratio <= 0 {
		ratio = 1
	}
	start := s.Elided
	if c := s.Compaction; c != nil && c.Upto > start {
		start = c.Upto // what is compacted is not sent anyway
	}
	for i := max(start, 1); i < floor; i++ {
		m := s.Messages[i]
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = tc
		}
		if st, ok := w.elide(i, m, calls); ok {
			total -= float64(RawTokens([]transcript.Message{m})-RawTokens([]transcript.Message{st})) * ratio
		}
		mark = i + 1
		if total <= target {
			break
		}
	}
	return mark, total
}

// applyElision moves the elision mark and keeps the texts of elided long
// messages under /inputs/context, where their stubs point.
func (w *Manager) applyElision(s *Session, sb *sandbox.Sandbox, mark int, after float64) {
	for i := max(s.Elided, 1); i < mark && i < len(s.Messages); i++ {
		if m := s.Messages[i]; len(m.Content) > bulkyText && m.Role != transcript.RoleTool {
			w.keepText(sb, s.ID, i, m.Content)
		}
	}
	s.Elided = mark
	s.PrefixBreaks++
	w.Logger.Info("context: elided bulky content", "session", s.ID, "mark", mark, "tokens", int(after))
}

// keepText saves an elided message's text where its stub says it is.
func (w *Manager) keepText(sb *sandbox.Sandbox, session string, i int, text string) {
	if sb == nil {
		return
	}
	host, err := sb.HostPath(elidedPath(i))
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(host), 0o755); err == nil {
			err = os.WriteFile(host, []byte(text), 0o644)
		}
	}
	if err != nil {
		w.Logger.Warn("context: keep elided message", "session", session, "err", err)
	}
}

// compactPrompt instructs the compaction call.
const compactPrompt = `You compact a long chat between a user and an AI agent so the agent can continue without the older messages. Write a summary the agent will read as its memory. Keep, concretely:
- what the user wants and the decisions made, with their reasons;
- the active workflow or skill, the step it is at, and what comes next;
- every document written (path) and what it holds;
- facts, names, numbers and preferences the user gave;
- open questions and anything promised but not done.
Write in the conversation's language, as compact notes, no preamble. Do not invent anything.`

// compact summarizes the transcript before a cut with one model call: the
// cut keeps the last turns verbatim, at most compactTail of the budget
// and at least the current turn.
func (w *Manager) compact(ctx context.Context, s *Session, tools int, force bool) error {
	from := 1
	var prev string
	if c := s.Compaction; c != nil {
		from, prev = c.Upto, c.Summary
	}
	cut := w.cutPoint(s, from, tools)
	if cut <= from {
		return fmt.Errorf("context: nothing older than the current turn to compact (%d messages)", len(s.Messages))
	}
	if older := Calibrated(s.Session, w.requestTokens(s)) - Calibrated(s.Session, RawTokens(s.Messages[cut:])); !force && float64(older) < minCompact*float64(w.Window(s)) {
		return nil // too little to gain: the request is large for other reasons
	}
	text := w.transcriptText(s, from, cut, prev, int(summaryInput*float64(w.Window(s)))*4)
	resp, err := w.Model.Complete(ctx, llm.Request{Messages: []transcript.Message{
		{Role: transcript.RoleSystem, Content: compactPrompt},
		{Role: transcript.RoleUser, Content: text},
	}}, nil)
	if err != nil {
		return fmt.Errorf("context: compaction call: %w", err)
	}
	u := resp.Usage
	u.Calls = 1
	s.Usage = s.Usage.Add(u)
	s.Compactions++
	summary := strings.TrimSpace(resp.Message.Content)
	if summary == "" {
		return fmt.Errorf("context: the compaction call returned no summary")
	}
	s.Compaction = &transcript.Compaction{Upto: cut, Summary: summary + documentsLine(s), Kept: w.activeLoad(s, cut)}
	s.PrefixBreaks++
	w.Logger.Info("context: compacted", "session", s.ID, "upto", cut, "summary_bytes", len(summary))
	return nil
}

// cutPoint is the first message kept verbatim after a compaction: the start
// of a user turn, as early as the tail fits compactTail of the budget, and
// never after the current turn's start.
func (w *Manager) cutPoint(s *Session, from, tools int) int {
	limit := compactTail * float64(w.Window(s))
	ratio := s.TokenRatio
	if ratio <= 0 {
		ratio = 1
	}
	last := -1
	for i := len(s.Messages) - 1; i > from; i-- {
		if s.Messages[i].Role == transcript.RoleUser {
			last = i
			break
		}
	}
	if last < 0 {
		return from
	}
	cut := last
	tail := float64(RawTokens(s.Messages[last:])) * ratio
	for i := last - 1; i > from; i-- {
		tail += float64(RawTokens(s.Messages[i:i+1])) * ratio
		if tail > limit {
			break
		}
		if s.Messages[i].Role == transcript.RoleUser {
			cut = i
		}
	}
	return cut
}

// activeLoad finds the last successful load of a skill or workflow before
// cut, so its instructions stay in requests after a compaction.
func (w *Manager) activeLoad(s *Session, cut int) *transcript.KeptCall {
	for i := cut - 1; i > 0; i-- {
		m := s.Messages[i]
		if m.Role != transcript.RoleTool {
			continue
		}
		if strings.HasPrefix(m.Content, `{"error"`) {
			continue
		}
		for j := i - 1; j > 0; j-- {
			a := s.Messages[j]
			if a.Role != transcript.RoleAssistant {
				continue
			}
			for _, tc := range a.ToolCalls {
				if tc.ID == m.ToolCallID && w.loads(tc.Function.Name) {
					return &transcript.KeptCall{Assistant: j, CallID: tc.ID, Result: i}
				}
			}
			break
		}
	}
	return nil
}

// transcriptText renders messages [from, to) for the compaction call: the
// earlier summary, the words of user and agent, and one line per tool
// call, newest kept when over limit bytes.
func (w *Manager) transcriptText(s *Session, from, to int, prev string, limit int) string {
	calls := map[string]transcript.ToolCall{}
	var lines []string
	for i := from; i < to && i < len(s.Messages); i++ {
		m := s.Messages[i]
		switch m.Role {
		case transcript.RoleUser:
			lines = append(lines, "User: "+text.CutBytes(m.Content, bulkyText, " …(cut)"))
		case transcript.RoleAssistant:
			if c := strings.TrimSpace(m.Content); c != "" {
				lines = append(lines, "Agent: "+text.CutBytes(c, bulkyText, " …(cut)"))
			}
			for _, tc := range m.ToolCalls {
				calls[tc.ID] = tc
			}
		case transcript.RoleTool:
			tc := calls[m.ToolCallID]
			lines = append(lines, fmt.Sprintf("Tool %s (%s): %s", tc.Function.Name, w.Status(tc), w.Summary(tc, m.Content)))
		}
	}
	head := "The conversation to summarize:\n\n"
	if prev != "" {
		head = "The summary of the conversation before this part:\n\n" + prev + "\n\nThe conversation that followed:\n\n"
	}
	size := len(head)
	start := len(lines)
	for start > 0 && size+len(lines[start-1])+2 < limit {
		start--
		size += len(lines[start]) + 2
	}
	if start > 0 {
		head += fmt.Sprintf("(%d older lines left out)\n\n", start)
	}
	return head + strings.Join(lines[start:], "\n\n")
}

// SummaryMessage is the message that stands for the compacted messages.
func SummaryMessage(c *transcript.Compaction) string {
	return "[The runtime summarized the earlier conversation to stay within the model's context. The full transcript is kept; documents are under /outputs.]\n\n" + c.Summary
}

// documentsLine lists the documents saved so far, fixed at compaction so
// later requests extend each other.
func documentsLine(s *Session) string {
	latest := transcript.Documents(s.Outputs)
	if len(latest) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nDocuments saved so far (read_file /outputs/<path> for the current text):")
	for _, o := range latest {
		fmt.Fprintf(&b, "\n- %s (v%d)", o.Path, o.Version)
	}
	return b.String()
}

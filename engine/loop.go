package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"agentbot/engine/llm"
	"agentbot/engine/menu"
	"agentbot/engine/project"
	"agentbot/engine/prompt"
	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
	"agentbot/engine/window"
)

// Result sums up one turn.
type Result struct {
	// Text is the final answer shown to the user.
	Text string
	// Iterations counts model calls; Tools counts tool calls (shortcut
	// calls included).
	Iterations int
	Tools      int
	// Usage is this turn's tokens.
	Usage Usage
	// LimitReached is set when the iteration limit cut the turn short;
	// BudgetNear when a token cap did.
	LimitReached bool
	BudgetNear   bool
	Duration     time.Duration
	// Pending are the calls of this turn waiting for a person's approval:
	// the turn ended there and resumes once each is decided (Decide).
	Pending []transcript.Approval
}

// ErrNotActive is returned by Turn for a session that has no agent.
var ErrNotActive = errors.New("session has no agent; activate it first")

const (
	limitNote   = "(Runtime: the limit of tool iterations for this turn is reached. Answer now without tools: say what is done, what is saved, and what the next step is.)"
	interrupted = "interrupted: the process stopped before this tool finished; call it again if it is still needed"
)

// Turn runs the agentic loop for one user input: it calls the model, runs
// the tools it asks for, appends their results, and repeats until the model
// answers without tools. An empty input resumes a turn cut short by a crash:
// the transcript already holds its input. Progress goes to emit (which may be nil). The
// session is saved after every iteration, so a crash loses at most the
// iteration in flight.
func (e *Engine) Turn(ctx context.Context, s *Session, input string, emit func(Event)) (*Result, error) {
	start := time.Now()
	if s.AgentDef == nil || len(s.Messages) == 0 {
		return nil, ErrNotActive
	}
	if emit == nil {
		emit = func(Event) {}
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.TurnTimeout)
	defer cancel()

	actAsWaiting(s, input)
	sb, err := e.openSandbox(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("turn %s: %w", s.ID, err)
	}
	defer sb.Close()
	res := &Result{}
	tr := e.newToolEnv(s, sb, emit)
	tr.loadExternal(ctx, input, emit)
	l := &turnLoop{e: e, s: s, tr: tr, res: res, start: start, emit: emit}
	if len(s.Pending) > 0 {
		// The last response holds calls waiting for approval. An empty
		// input resumes once each is decided; a new message denies the
		// ones still undecided (the person moved on instead of answering).
		if und := undecided(s); input == "" && len(und) > 0 {
			res.Pending = und
			res.Duration = time.Since(start)
			return res, nil
		}
		res.Tools += e.endApprovalWait(ctx, s, tr, emit, input != "")
		// The approved calls ran: their results are kept even when the
		// turn was cancelled meanwhile, so a resume does not run them again.
		if err := e.save(context.WithoutCancel(ctx), s); err != nil {
			return nil, fmt.Errorf("turn %s: save: %w", s.ID, err)
		}
	}
	repairDangling(s)
	repairCalls(s)
	if b := e.budget(ctx, s, Usage{}); b.Over() {
		res.Duration = time.Since(start)
		return res, &BudgetError{Budget: b}
	}

	if input == "" {
		// Resume: the input is already in the transcript (a crash cut the
		// turn short). Nothing to do if the last word was the agent's.
		if last := s.Messages[len(s.Messages)-1]; last.Role == transcript.RoleAssistant && len(last.ToolCalls) == 0 {
			res.Text = last.Content
			res.Duration = time.Since(start)
			return res, nil
		}
		return l.run(ctx)
	}

	userMsg, answered := l.menuPick(ctx, input)
	if answered {
		res.Duration = time.Since(start)
		return res, e.save(ctx, s)
	}
	s.Messages = append(s.Messages, transcript.Message{Role: transcript.RoleUser, Content: roomMessage(ctx, s, userMsg)})
	if err := e.save(ctx, s); err != nil {
		return nil, fmt.Errorf("turn %s: save: %w", s.ID, err)
	}
	return l.run(ctx)
}

// actAsWaiting makes a resumed turn (no input) act as the person whose
// message started it, as its waiting calls record, whoever decided them.
func actAsWaiting(s *Session, input string) {
	if input != "" {
		return
	}
	for _, p := range s.Pending {
		if p.Person != "" {
			s.Person = p.Person
			return
		}
	}
}

// newToolEnv returns the tools' environment of one turn of s, whose saves
// are recorded as the session's outputs.
func (e *Engine) newToolEnv(s *Session, sb *sandbox.Sandbox, emit func(Event)) *toolEnv {
	tr := &toolEnv{e: e, s: s, sb: sb, emit: emit}
	tr.out = &outputs{e: e, s: s, sb: sb, emit: emit, mu: &tr.mu, thisTurn: map[string]int{}}
	if pf := s.project; pf != nil {
		tr.docs = &project.Docs{Folder: pf, Store: e.cfg.Projects.Store, Sandbox: sb, Session: &s.Session, Person: s.Person, Name: s.Names,
			Mu: &tr.mu, MaxWrite: e.cfg.MaxWrite, Logger: e.cfg.Logger,
			Record: func(ctx context.Context, virtual string, data []byte, v *transcript.DocVersion, internal bool) error {
				return tr.out.record(ctx, savedFile{virtual, data, internal, v, pf.Name()})
			}}
	}
	return tr
}

// menuPick applies the menu shortcut to input: a picked workflow is
// preloaded before the first model call, and the user's message becomes
// the pick's note (userMsg). A plain *help is answered with the menu
// itself, without a model call: answered is set, and the greeting is the
// turn's text.
func (l *turnLoop) menuPick(ctx context.Context, input string) (userMsg string, answered bool) {
	e, s, tr, res, emit := l.e, l.s, l.tr, l.res, l.emit
	if calls := partyCalls(e.catalog(), s, input); len(calls) > 0 {
		l.runShortcut(ctx, calls)
		return input, false
	}
	idx, rest, ok := MatchMenu(s.AgentDef.Menu, input)
	if !ok && s.skillMode() && firstTurn(s) {
		// A first message that clearly names a menu item is dispatched at
		// once, as a skill agent's activation asks.
		if i, hit := MatchIntent(s.AgentDef.Menu, input); hit {
			idx, rest, ok = i, "", true
		}
	}
	it, idx, ok := picked(e.catalog(), s, idx, ok, input)
	if !ok {
		return input, false
	}
	if IsPlainHelp(it) {
		g := prompt.Greet(s.AgentDef, s.Vars)
		s.Messages = append(s.Messages,
			transcript.Message{Role: transcript.RoleUser, Content: input},
			transcript.Message{Role: transcript.RoleAssistant, Content: g.Text})
		res.Text = g.Text
		emit(Event{Kind: EventText, Text: g.Text})
		return "", true
	}
	calls := shortcutCalls(s.AgentDef, it, tr.sb.Exists)
	l.runShortcut(ctx, calls)
	return menu.PickNote(s.AgentDef, idx, it, input, rest, len(calls) > 0), false
}

// runShortcut runs the tool calls the engine makes itself before the first
// model call, as if the model had made them.
func (l *turnLoop) runShortcut(ctx context.Context, calls []transcript.ToolCall) {
	if len(calls) == 0 {
		return
	}
	s := l.s
	for i := range calls {
		calls[i].ID = window.NewCallID(s.Messages, s.ID, len(s.Messages), i)
	}
	s.Messages = append(s.Messages, transcript.Message{Role: transcript.RoleAssistant, ToolCalls: calls})
	s.Messages = append(s.Messages, l.e.runTools(ctx, l.tr, calls, l.emit, nil)...)
	l.addSubUsage()
	l.res.Tools += len(calls)
}

// addSubUsage adds the usage of the model calls the tools made (a party's
// sub-turns) to the turn's and the session's: budgets count them.
func (l *turnLoop) addSubUsage() {
	u := l.tr.takeSubUsage()
	l.res.Usage = l.res.Usage.Add(u)
	l.s.Usage = l.s.Usage.Add(u)
}

// toolsTokens estimates the tokens of tool definitions.
func toolsTokens(tools []llm.Tool) int {
	n := 0
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + 40 + len(t.Parameters)
	}
	return n / 4
}

// firstTurn reports whether the session has had no user message since
// activation.
func firstTurn(s *Session) bool {
	users := 0
	for _, m := range s.Messages {
		if m.Role == transcript.RoleUser {
			users++
		}
	}
	return users <= 1
}

// run calls the model and runs tools until the model answers without tools.
func (l *turnLoop) run(ctx context.Context) (*Result, error) {
	e, s, res, start, emit := l.e, l.s, l.res, l.start, l.emit
	for iter := 0; ; iter++ {
		final := l.lastCall(ctx, iter)
		resp, reqTokens, err := l.call(ctx, final)
		if err != nil {
			_ = e.save(ctx, s)
			res.Duration = time.Since(start)
			return res, fmt.Errorf("turn %s: step %d: %w", s.ID, iter+1, err) // err says "model call"
		}
		u := resp.Usage
		u.Calls = 1
		res.Usage = res.Usage.Add(u)
		s.Usage = s.Usage.Add(u)
		l.learnUsage(reqTokens, resp.Usage.Prompt)
		msg := resp.Message
		msg.Role = transcript.RoleAssistant
		if final {
			msg.ToolCalls = nil
		}
		// What is stored must be what every provider accepts; the calls as
		// the model sent them are run, so bad arguments get the tool's own
		// error with what was sent.
		var sent []transcript.ToolCall
		msg, sent = l.storable(msg, resp.FinishReason)
		if len(msg.ToolCalls) == 0 && strings.TrimSpace(msg.Content) == "" {
			if !l.emptyRetry && !final {
				l.emptyRetry = true // ask once more, with the identical request
				continue
			}
			msg.Content = "(The model returned an empty answer. Please rephrase or try again.)"
			emit(Event{Kind: EventNotice, Text: msg.Content})
		}
		if done, err := l.step(ctx, msg, sent); done || err != nil {
			return res, err
		}
	}
}

// turnLoop is the state of one turn's loop: the retries it has spent and
// whether the budget note was given.
type turnLoop struct {
	e     *Engine
	s     *Session
	tr    *toolEnv
	res   *Result
	start time.Time
	emit  func(Event)

	emptyRetry, ctxRetry, budgetNoted bool
}

// lastCall reports whether call iter is the turn's last, made without
// tools: the iteration limit is reached, or a token cap is near. It adds
// the runtime's note the first time.
func (l *turnLoop) lastCall(ctx context.Context, iter int) bool {
	e, s := l.e, l.s
	if iter >= e.cfg.MaxIterations {
		l.res.LimitReached = true
		l.emit(Event{Kind: EventNotice, Text: fmt.Sprintf("I hit the limit of %d steps for one message, so I'm stopping here with a summary.", e.cfg.MaxIterations)})
		s.Messages = append(s.Messages, transcript.Message{Role: transcript.RoleUser, Content: limitNote})
		return true
	}
	b := e.budget(ctx, s, l.res.Usage)
	if iter == 0 || !b.Near() {
		return false
	}
	if !l.budgetNoted {
		l.budgetNoted = true
		l.res.BudgetNear = true
		l.emit(Event{Kind: EventNotice, Text: fmt.Sprintf("I'm close to the %s (%d of %d tokens), so I'm wrapping up this turn.", b.Name, b.Used, b.Limit)})
		s.Messages = append(s.Messages, transcript.Message{Role: transcript.RoleUser, Content: budgetNote})
	}
	return true
}

// call makes the model call of one iteration, fitting the context first;
// a provider's context-length refusal is learned from, compacted for and
// retried once a turn. It returns the estimated tokens the request sent.
func (l *turnLoop) call(ctx context.Context, final bool) (*llm.Response, int, error) {
	e, s := l.e, l.s
	var tools []llm.Tool
	if !final {
		tools = l.tr.definitions()
	}
	toolTokens := toolsTokens(tools)
	if err := e.win.Fit(ctx, view(s), l.tr.sb, toolTokens, false); err != nil {
		e.cfg.Logger.Warn("context management", "session", s.ID, "err", err)
	}
	req := llm.Request{Messages: e.win.Request(view(s)), Tools: tools}
	resp, err := l.complete(ctx, req)
	l.res.Iterations++
	if err != nil && llm.IsContextLength(err) && !l.ctxRetry {
		// The estimate was short: learn that, compact, and retry once.
		l.ctxRetry = true
		if n, ok := llm.ContextWindow(err); ok {
			s.Window = n
		} else {
			s.TokenRatio = max(s.TokenRatio, 1) * 1.3
		}
		if cerr := e.win.Fit(ctx, view(s), l.tr.sb, toolTokens, true); cerr == nil {
			req = llm.Request{Messages: e.win.Request(view(s)), Tools: tools}
			resp, err = l.complete(ctx, req)
			l.res.Iterations++
		} else {
			e.cfg.Logger.Warn("context management", "session", s.ID, "err", cerr)
		}
	}
	return resp, window.RawTokens(req.Messages) + toolTokens, err
}

// step stores the model's reply msg and runs the calls it sent (or pauses
// for approvals); done is set when the turn ends here, with the answer in
// res, or with err.
func (l *turnLoop) step(ctx context.Context, msg transcript.Message, sent []transcript.ToolCall) (done bool, err error) {
	e, s, res := l.e, l.s, l.res
	s.Messages = append(s.Messages, msg)
	if len(msg.ToolCalls) == 0 {
		res.Text = msg.Content
		res.Duration = time.Since(l.start)
		return true, e.save(ctx, s)
	}
	// Keep the model's reply even if the process dies while tools run;
	// the next turn gives unfinished calls an error result.
	if err := e.save(ctx, s); err != nil {
		return true, fmt.Errorf("turn %s: save: %w", s.ID, err)
	}
	if gates := l.tr.ext.gates(ctx, sent); len(gates) > 0 {
		_, err := e.pause(ctx, s, l.tr, res, msg.ToolCalls, sent, gates, l.start, l.emit)
		return true, err
	}
	l.tr.turnUsage = res.Usage
	s.Messages = append(s.Messages, e.runTools(ctx, l.tr, sent, l.emit, nil)...)
	l.addSubUsage()
	res.Tools += len(msg.ToolCalls)
	// The tools ran: their results are kept even when the turn was
	// cancelled meanwhile, so a resume does not run them again.
	if err := e.save(context.WithoutCancel(ctx), s); err != nil {
		return true, fmt.Errorf("turn %s: save: %w", s.ID, err)
	}
	if ctx.Err() != nil {
		res.Duration = time.Since(l.start)
		return true, fmt.Errorf("turn %s: %w", s.ID, ctx.Err())
	}
	return false, nil
}

// invalidCallName names a stored tool call that came without a name.
const invalidCallName = "unnamed_tool_call"

// sanitizeCalls makes a model's tool calls storable as the strictest
// providers accept them: every call has a unique id, a type, a name and
// arguments that are a JSON object. It returns the calls to store and the
// calls to run: the same ids, with the names and arguments as sent, so the
// tool's error result shows the model what went wrong. A call without an
// id, or with one an earlier call has, gets a new strict id (window.NewCallID).
func sanitizeCalls(calls []transcript.ToolCall, s *Session) (stored, sent []transcript.ToolCall) {
	if len(calls) == 0 {
		return nil, nil
	}
	n := len(s.Messages)
	stored = make([]transcript.ToolCall, len(calls))
	sent = make([]transcript.ToolCall, len(calls))
	ids := map[string]bool{}
	for i, tc := range calls {
		if tc.ID == "" || ids[tc.ID] || usedID(s, tc.ID) {
			tc.ID = window.NewCallID(s.Messages, s.ID, n, i)
		}
		ids[tc.ID] = true
		tc.Type = transcript.ToolTypeFunction
		sent[i] = tc
		args := strings.TrimSpace(tc.Function.Arguments)
		var obj map[string]any
		if args == "" || json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
			tc.Function.Arguments = "{}"
		}
		if tc.Function.Name == "" {
			tc.Function.Name = invalidCallName
		}
		stored[i] = tc
	}
	return stored, sent
}

// usedID reports whether an earlier message of s has a call with id.
func usedID(s *Session, id string) bool {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		for _, tc := range s.Messages[i].ToolCalls {
			if tc.ID == id {
				return true
			}
		}
	}
	return false
}

// storable returns the reply as it is stored and the calls to run: the
// calls sanitized (sanitizeCalls), and a reply cut by the output limit
// kept as text only (truncated).
func (l *turnLoop) storable(msg transcript.Message, finish string) (transcript.Message, []transcript.ToolCall) {
	var sent []transcript.ToolCall
	msg.ToolCalls, sent = sanitizeCalls(msg.ToolCalls, l.s)
	if finish == "length" {
		return l.truncated(msg)
	}
	return msg, sent
}

// learnUsage calibrates the session's estimate from a call's reported
// prompt tokens, and warns when the provider seems to cut the prompt.
func (l *turnLoop) learnUsage(rawSent, prompt int) {
	e, s := l.e, l.s
	if window.Calibrate(&s.Session, rawSent, prompt) {
		e.cfg.Logger.Warn("the provider counted far fewer prompt tokens than were sent: it may be cutting the prompt (Ollama truncates at its context length; set OLLAMA_CONTEXT_LENGTH)",
			"session", s.ID, "sent_estimate", window.Calibrated(&s.Session, rawSent), "reported", prompt)
	}
}

// complete makes one model call, passing its text on as EventText and
// saying once, before any text, that the model is thinking
// (EventThinking). The adapter calls both callbacks from one goroutine.
func (l *turnLoop) complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	emit := l.emit
	told := false // thinking was told, or the answer began
	req.OnReasoning = func() {
		if !told {
			told = true
			emit(Event{Kind: EventThinking})
		}
	}
	return l.e.cfg.Model.Complete(ctx, req, func(d string) {
		told = true
		emit(Event{Kind: EventText, Text: d})
	})
}

// truncatedNote ends an answer the model's output limit cut off.
const truncatedNote = "\n\n(This answer was cut off: the model reached its output token limit.)"

// truncated handles a reply cut by the output limit (finish_reason
// "length"): its text is kept, marked as cut, and its tool calls are
// dropped, never run, since their arguments may be cut too.
func (l *turnLoop) truncated(msg transcript.Message) (transcript.Message, []transcript.ToolCall) {
	e, s, emit := l.e, l.s, l.emit
	e.cfg.Logger.Warn("the model's answer was cut at its output token limit", "session", s.ID, "dropped_calls", len(msg.ToolCalls))
	emit(Event{Kind: EventNotice, Text: "The model's answer was cut off at its output token limit (AGENTBOT_MAX_TOKENS); its tool calls were not run."})
	msg.ToolCalls = nil
	msg.Content = strings.TrimRight(msg.Content, "\n") + truncatedNote
	return msg, nil
}

// runTools runs the tool calls of one response in parallel, bounded, and
// returns their results in call order. Each call is added to the audit
// trail, with its approver from approvers (by call id; nil for none).
func (e *Engine) runTools(ctx context.Context, tr *toolEnv, calls []transcript.ToolCall, emit func(Event), approvers map[string]string) []transcript.Message {
	out := make([]transcript.Message, len(calls))
	recs := make([]transcript.ToolRecord, len(calls))
	sem := make(chan struct{}, e.cfg.ToolParallelism)
	var wg sync.WaitGroup
	for i, tc := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			status := callStatus(tc)
			emit(Event{Kind: EventToolStart, Tool: tc.Function.Name, CallID: tc.ID, Status: status})
			var r ToolResult
			began := time.Now()
			if ctx.Err() != nil {
				r = errResult("cancelled: %v", ctx.Err())
			} else {
				r = tr.runCall(ctx, tc)
			}
			failed := r.Failure()
			content := encodeResult(r)
			outcome := transcript.OutcomeOK
			if failed != "" {
				outcome = transcript.OutcomeError
			}
			recs[i] = tr.record(tc, outcome, approvers[tc.ID], len(content), time.Since(began))
			ev := Event{Kind: EventToolEnd, Tool: tc.Function.Name, CallID: tc.ID, Status: status, Err: failed}
			emit(ev)
			out[i] = transcript.Message{Role: transcript.RoleTool, ToolCallID: tc.ID, Content: content}
		}()
	}
	wg.Wait()
	e.audit.add(tr.s, recs...)
	return out
}

// repairCalls makes stored tool calls valid for strict providers: a
// session written before calls were sanitized may hold arguments that are
// not JSON or calls without a name. Ids are kept, so results still match.
func repairCalls(s *Session) {
	for i := range s.Messages {
		for j, tc := range s.Messages[i].ToolCalls {
			var obj map[string]any
			if tc.Function.Name == "" {
				s.Messages[i].ToolCalls[j].Function.Name = invalidCallName
			}
			if json.Unmarshal([]byte(tc.Function.Arguments), &obj) != nil || obj == nil {
				s.Messages[i].ToolCalls[j].Function.Arguments = "{}"
			}
		}
	}
}

// repairDangling gives every tool call left without a result (a crash in the
// middle of an iteration) an error result, so the transcript is valid again.
func repairDangling(s *Session) {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != transcript.RoleAssistant {
			continue
		}
		if len(m.ToolCalls) == 0 {
			return
		}
		have := answered(s.Messages[i+1:])
		for _, tc := range m.ToolCalls {
			if !have[tc.ID] {
				s.Messages = append(s.Messages, transcript.Message{
					Role: transcript.RoleTool, ToolCallID: tc.ID,
					Content: encodeResult(errResult(interrupted)),
				})
			}
		}
		return
	}
}

// answered returns the ids of the tool calls msgs hold a result of.
func answered(msgs []transcript.Message) map[string]bool {
	have := map[string]bool{}
	for _, r := range msgs {
		if r.Role == transcript.RoleTool {
			have[r.ToolCallID] = true
		}
	}
	return have
}

// Interrupt ends a turn the user stopped: tool calls left without a result
// get one saying so, and note (such as "(The user stopped this turn.)") is
// recorded as the agent's last word, so the transcript is valid and the
// next message continues from what was said so far. It saves the session.
func (e *Engine) Interrupt(ctx context.Context, s *Session, note string) error {
	if s == nil || len(s.Messages) == 0 {
		return nil
	}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != transcript.RoleAssistant {
			continue
		}
		have := answered(s.Messages[i+1:])
		held := heldResults(s)
		waiting := map[string]transcript.Approval{}
		for _, p := range s.Pending {
			waiting[p.CallID] = p
		}
		for _, tc := range m.ToolCalls {
			if have[tc.ID] {
				continue
			}
			if h, ok := held[tc.ID]; ok {
				s.Messages = append(s.Messages, h)
				continue
			}
			content := encodeResult(errResult("stopped by the user before this tool finished"))
			s.Messages = append(s.Messages, transcript.Message{Role: transcript.RoleTool, ToolCallID: tc.ID, Content: content})
			if p, ok := waiting[tc.ID]; ok {
				e.audit.add(s, e.audit.record(tc, p.Server, transcript.OutcomeDenied, p.By, len(content), 0))
			}
		}
		break
	}
	s.Pending, s.Held = nil, nil
	s.Messages = append(s.Messages, transcript.Message{Role: transcript.RoleAssistant, Content: note})
	return e.save(ctx, s)
}

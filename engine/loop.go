package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/model"
	"agentbot/engine/sandbox"
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
	// LimitReached is set when the iteration limit cut the turn short.
	LimitReached bool
	Duration     time.Duration
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
	if s.Agent == nil || len(s.Messages) == 0 {
		return nil, ErrNotActive
	}
	if emit == nil {
		emit = func(Event) {}
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.TurnTimeout)
	defer cancel()

	sb, err := e.openSandbox(s)
	if err != nil {
		return nil, fmt.Errorf("turn %s: %w", s.ID, err)
	}
	defer sb.Close()
	res := &Result{}
	tr := &toolEnv{e: e, s: s, sb: sb}
	thisTurn := map[string]int{} // output path -> index in s.Outputs, saved this turn
	tr.saved = func(virtual string, size int64) *Output {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return e.recordOutput(s, sb, virtual, size, thisTurn, emit)
	}

	repairDangling(s)

	if input == "" {
		// Resume: the input is already in the transcript (a crash cut the
		// turn short). Nothing to do if the last word was the agent's.
		if last := s.Messages[len(s.Messages)-1]; last.Role == openai.ChatMessageRoleAssistant && len(last.ToolCalls) == 0 {
			res.Text = last.Content
			res.Duration = time.Since(start)
			return res, nil
		}
		return e.loop(ctx, s, tr, res, start, emit)
	}

	// The menu shortcut: a picked workflow is preloaded before the first
	// model call.
	userMsg := input
	idx, rest, ok := MatchMenu(s.Agent.Menu, input)
	if !ok && s.skillMode() && firstTurn(s) {
		// A first message that clearly names a menu item is dispatched at
		// once, as a skill agent's activation asks.
		if i, hit := MatchIntent(s.Agent.Menu, input); hit {
			idx, rest, ok = i, "", true
		}
	}
	if ok {
		it := s.Agent.Menu[idx]
		if IsPlainHelp(it) {
			g := greeting(s.Agent, s.Vars)
			s.Messages = append(s.Messages,
				openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: input},
				openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: g.Text})
			res.Text = g.Text
			res.Duration = time.Since(start)
			emit(Event{Kind: EventText, Text: g.Text})
			return res, e.save(s)
		}
		calls := shortcutCalls(it, sb.Exists)
		if len(calls) > 0 {
			for i := range calls {
				calls[i].ID = fmt.Sprintf("call_menu_%d_%d", len(s.Messages), i)
			}
			s.Messages = append(s.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: calls})
			s.Messages = append(s.Messages, e.runTools(ctx, tr, calls, emit)...)
			res.Tools += len(calls)
		}
		userMsg = pickNote(s.Agent, idx, it, input, rest, len(calls) > 0)
	}
	s.Messages = append(s.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: userMsg})
	if err := e.save(s); err != nil {
		return nil, fmt.Errorf("turn %s: save: %w", s.ID, err)
	}
	return e.loop(ctx, s, tr, res, start, emit)
}

// firstTurn reports whether the session has had no user message since
// activation.
func firstTurn(s *Session) bool {
	users := 0
	for _, m := range s.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			users++
		}
	}
	return users <= 1
}

// loop calls the model and runs tools until the model answers without tools.
func (e *Engine) loop(ctx context.Context, s *Session, tr *toolEnv, res *Result, start time.Time, emit func(Event)) (*Result, error) {
	emptyRetry := false
	for iter := 0; ; iter++ {
		final := iter >= e.cfg.MaxIterations
		if final {
			res.LimitReached = true
			emit(Event{Kind: EventNotice, Text: fmt.Sprintf("I hit the limit of %d steps for one message, so I'm stopping here with a summary.", e.cfg.MaxIterations)})
			s.Messages = append(s.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: limitNote})
		}
		e.maybeElide(s)
		req := model.Request{Messages: requestMessages(s)}
		if !final {
			req.Tools = definitions(e.toolsFor(s))
		}
		resp, err := e.cfg.Model.Complete(ctx, req, func(d string) { emit(Event{Kind: EventText, Text: d}) })
		res.Iterations++
		if err != nil {
			_ = e.save(s)
			res.Duration = time.Since(start)
			return res, fmt.Errorf("turn %s: model call %d: %w", s.ID, iter+1, err)
		}
		u := Usage{Usage: resp.Usage, Calls: 1}
		res.Usage.add(u)
		s.Usage.add(u)
		msg := resp.Message
		msg.Role = openai.ChatMessageRoleAssistant
		if final {
			msg.ToolCalls = nil
		}
		if len(msg.ToolCalls) == 0 && strings.TrimSpace(msg.Content) == "" {
			if !emptyRetry && !final {
				emptyRetry = true // ask once more, with the identical request
				continue
			}
			msg.Content = "(The model returned an empty answer. Please rephrase or try again.)"
			emit(Event{Kind: EventNotice, Text: msg.Content})
		}
		s.Messages = append(s.Messages, msg)
		if len(msg.ToolCalls) == 0 {
			res.Text = msg.Content
			res.Duration = time.Since(start)
			return res, e.save(s)
		}
		// Keep the model's reply even if the process dies while tools run;
		// the next turn gives unfinished calls an error result.
		if err := e.save(s); err != nil {
			return res, fmt.Errorf("turn %s: save: %w", s.ID, err)
		}
		s.Messages = append(s.Messages, e.runTools(ctx, tr, msg.ToolCalls, emit)...)
		res.Tools += len(msg.ToolCalls)
		if err := e.save(s); err != nil {
			return res, fmt.Errorf("turn %s: save: %w", s.ID, err)
		}
		if ctx.Err() != nil {
			res.Duration = time.Since(start)
			return res, fmt.Errorf("turn %s: %w", s.ID, ctx.Err())
		}
	}
}

// runTools runs the tool calls of one response in parallel, bounded, and
// returns their results in call order.
func (e *Engine) runTools(ctx context.Context, tr *toolEnv, calls []openai.ToolCall, emit func(Event)) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(calls))
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
			if ctx.Err() != nil {
				r = errResult("cancelled: %v", ctx.Err())
			} else {
				r = tr.runCall(ctx, tc)
			}
			failed := r.Failure()
			ev := Event{Kind: EventToolEnd, Tool: tc.Function.Name, CallID: tc.ID, Status: status, Err: failed}
			if e.cfg.OnToolCall != nil {
				e.cfg.OnToolCall(tc.Function.Name, failed != "")
			}
			emit(ev)
			out[i] = openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: encodeResult(r)}
		}()
	}
	wg.Wait()
	return out
}

// recordOutput adds a saved document to the session and reports it. A
// document written several times in one turn is one version: the later
// writes update it, so it is shared once, with its final bytes.
func (e *Engine) recordOutput(s *Session, sb *sandbox.Sandbox, virtual string, size int64, thisTurn map[string]int, emit func(Event)) *Output {
	rel := outputRel(virtual)
	var out Output
	if i, ok := thisTurn[rel]; ok {
		s.Outputs[i].Size, s.Outputs[i].Time = size, e.cfg.Now()
		out = s.Outputs[i]
	} else {
		version := 1
		for _, o := range s.Outputs {
			if o.Path == rel && o.Version >= version {
				version = o.Version + 1
			}
		}
		out = Output{Path: rel, Size: size, Version: version, Time: e.cfg.Now()}
		thisTurn[rel] = len(s.Outputs)
		s.Outputs = append(s.Outputs, out)
	}
	host, _ := sb.HostPath(virtual)
	emit(Event{Kind: EventOutput, Output: &out, HostPath: host, Status: "saved " + rel})
	return &out
}

// repairDangling gives every tool call left without a result (a crash in the
// middle of an iteration) an error result, so the transcript is valid again.
func repairDangling(s *Session) {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != openai.ChatMessageRoleAssistant {
			continue
		}
		if len(m.ToolCalls) == 0 {
			return
		}
		have := map[string]bool{}
		for _, r := range s.Messages[i+1:] {
			if r.Role == openai.ChatMessageRoleTool {
				have[r.ToolCallID] = true
			}
		}
		for _, tc := range m.ToolCalls {
			if !have[tc.ID] {
				s.Messages = append(s.Messages, openai.ChatCompletionMessage{
					Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID,
					Content: encodeResult(errResult(interrupted)),
				})
			}
		}
		return
	}
}

func (u *Usage) add(o Usage) {
	u.Prompt += o.Prompt
	u.Cached += o.Cached
	u.Completion += o.Completion
	u.Calls += o.Calls
}

package bot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/transcript"
)

// resume turns a stored session into a live one, its agent resolved from
// the current catalog (see engine.Engine.Resume).
func (b *Bot) resume(rec *transcript.Session) (*engine.Session, error) {
	return b.cfg.Engine.Resume(rec)
}

// upperFirst capitalizes the first letter of an ASCII sentence.
func upperFirst(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// metaSeq is the session meta key holding the queue seq of the last message
// handed to a turn, so a replay after a crash resumes instead of repeating.
const metaSeq = "bot.seq"

// metaPending holds the text of a first message that waits for the picker.
const metaPending = "bot.pending"

// metaOwner is the user who started the thread's session; others' messages
// are attributed, so the agent can tell people apart.
const metaOwner = "bot.owner"

// process handles one queued item of a thread; ctx ends at shutdown or
// when the thread's lease is lost.
func (b *Bot) process(ctx context.Context, seq uint64, it item) {
	if it.Kind == kindFeedback {
		b.recordFeedback(it) // feedback.go
		return
	}
	key := it.key()
	rec, err := b.cfg.Store.FindSession(key)
	if err == nil && rec == nil {
		rec, err = b.cfg.Store.NewSession(key)
	}
	var s *engine.Session
	if err == nil {
		s, err = b.resume(rec)
	}
	var gone *engine.AgentGoneError
	if errors.As(err, &gone) {
		if cmd, arg := threadCommand(it.Text); it.Kind != "pick" && (cmd == "use" || cmd == "reset") {
			// Moving the thread to another agent keeps the old session,
			// detached.
			b.switchAgent(ctx, &engine.Session{Session: *rec}, it, arg)
			return
		}
		b.log.Warn("session's agent is gone", "session", gone.SessionID, "agent", gone.AgentID)
		b.post(ctx, it.Channel, it.ThreadTS, "⚠️ "+upperFirst(gone.Error())+" (or say `use <agent>` here).")
		return
	}
	if err != nil {
		b.log.Error("load session", "err", err)
		b.post(ctx, it.Channel, it.ThreadTS, "⚠️ I couldn't open this thread's session. Please try again in a moment.")
		return
	}

	seqStr := strconv.FormatUint(seq, 10)
	if s.Meta[metaPosted] == seqStr || priorOutput(s.Meta, seq).Done {
		return // handled and posted before a crash; only its dequeue was lost
	}
	if s.Agent != nil && s.Meta[metaSeq] == seqStr {
		// Replayed after a crash: the input is in the transcript already,
		// so the turn resumes instead of repeating it.
		b.runTurn(ctx, s, it, "")
		return
	}
	if it.Kind == kindApproval {
		b.decide(ctx, s, it, seqStr) // approval.go
		return
	}
	if it.Kind == "pick" {
		b.pick(ctx, s, it, seqStr)
		return
	}
	if cmd, arg := threadCommand(it.Text); cmd != "" && (s.Agent == nil || !isMenuPick(s, it.Text)) {
		switch cmd {
		case "use":
			b.switchAgent(ctx, s, it, arg)
			return
		case "reset":
			b.switchAgent(ctx, s, it, "")
			return
		case "status":
			if s.Agent != nil {
				b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("This thread talks to %s: %s.", s.Agent.Name, b.cfg.Budgets.statusLine(s)))
				return
			}
		}
	}
	if s.Agent == nil {
		agentID, _ := b.cfg.Store.ChannelDefault(it.Team, it.Channel)
		a, ok := b.findAgent(agentID)
		if !ok {
			if it.Text != "" {
				// Every message written while the picker waits is kept.
				text := it.Text
				if prev := s.Meta[metaPending]; prev != "" {
					text = prev + "\n\n" + text
				}
				s.SetMeta(metaPending, text)
				_ = b.cfg.Store.SaveSession(&s.Session)
			}
			b.postPicker(ctx, it)
			return
		}
		if !b.activate(ctx, s, a, it) {
			return
		}
		if len(it.Files) == 0 && (it.Text == "" || isGreetingOnly(it.Text, a.Name)) {
			return // a bare mention or a hello: the greeting is the answer
		}
	}
	input := it.Text
	if len(it.Files) > 0 {
		input = b.fetchFiles(ctx, s, it) + input
	}
	if input == "" || isHelp(s, input) || (len(it.Files) == 0 && isGreetingOnly(input, s.Agent.Name)) {
		// A bare mention, a hello, or *help: show the menu again, with its
		// buttons, without a model call.
		b.postGreeting(ctx, it.Channel, it.ThreadTS, s.Agent, b.cfg.Engine.Greet(s))
		return
	}
	if it.DM {
		if c := b.userContext(it.Team, it.User); c != "" && !isMenuPick(s, input) {
			input = "(Slack context: the user is looking at channel <#" + c + ">.)\n" + input
		}
	}
	if owner := s.Meta[metaOwner]; owner != "" && it.User != "" && it.User != owner && !isMenuPick(s, input) {
		name := b.userName(ctx, it.User)
		if name == "" {
			name = "<@" + it.User + ">"
		}
		input = fmt.Sprintf("(%s, another person in this thread, writes:) %s", name, input)
	}
	s.SetMeta(metaSeq, seqStr)
	b.runTurn(ctx, s, it, input)
}

// runTurn runs one engine turn, bounded by the concurrency limit, and
// renders it into the thread.
func (b *Bot) runTurn(ctx context.Context, s *engine.Session, it item, input string) {
	select {
	case b.sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-b.sem }()
	b.obs.TurnStarted()
	start := time.Now()
	r := b.newReply(ctx, it, s)
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rt := b.running.start(it.key(), cancel)
	defer b.running.end(it.key(), rt)
	r.rt = rt
	if note := lateNote(s, it); note != "" { // fence.go
		r.emit(engine.Event{Kind: engine.EventNotice, Text: note})
	}
	noteWorkflow(s, input)
	r.armStop()
	b.setSessionStatus(ctx, it, slack.AgentSessionStatusProcessing)
	defer b.setSessionStatus(ctx, it, slack.AgentSessionStatusActive)
	skillBefore, outputsBefore, auditBefore := activeSkill(&s.Session), len(s.Outputs), len(s.Audit)
	waiting, posted := undecided(s) // a new message denies the calls still waiting
	res, err := b.cfg.Engine.Turn(tctx, s, input, r.emit)
	err = b.storeFailed(ctx, s, res, err) // fence.go
	b.countTools(s, auditBefore)
	b.closeSuperseded(ctx, s, it, waiting, posted)
	if len(s.Outputs) > outputsBefore {
		defer b.refreshHome(ctx, ownerOf(s, it)) // after the uploads: the Home tab lists the new document
	}
	if activeSkill(&s.Session) != skillBefore {
		b.setTitle(ctx, it, s) // the DM's title names the workflow now running
	}
	if by := rt.stoppedBy(); by != "" && ctx.Err() == nil {
		// Stopped by a person: keep what was said, record the stop, and
		// never post the late answer.
		if ierr := b.cfg.Engine.Interrupt(s, stopNote); ierr != nil {
			b.log.Error("record stop", "err", ierr)
		}
		r.stoppedBy = by
		err = nil
	}
	if res != nil {
		if rerr := b.cfg.Budgets.Record(s.Key, res.Usage); rerr != nil {
			b.log.Error("record token usage", "err", rerr)
		}
	}
	r.finish(res, err)
	if res != nil && len(res.Pending) > 0 && r.stoppedBy == "" {
		b.postApprovals(ctx, s, it, res.Pending) // approval.go
	}
	d := time.Since(start)
	var u engine.Usage
	iters, tools := 0, 0
	if res != nil {
		u, iters, tools = res.Usage, res.Iterations, res.Tools
	}
	b.obs.TurnFinished(d, iters, u.Prompt, u.Cached, u.Completion, err)
	attrs := []any{"session", s.ID, "agent", s.AgentID, "iterations", iters, "tools", tools,
		"prompt_tokens", u.Prompt, "cached_tokens", u.Cached, "completion_tokens", u.Completion, "duration", d.Round(time.Millisecond)}
	var over *engine.BudgetError
	switch {
	case errors.As(err, &over):
		b.log.Info("turn refused: token budget", append(attrs, "budget", over.Budget.Name)...)
	case err != nil:
		b.log.Warn("turn failed", append(attrs, "err", err)...)
	default:
		b.log.Info("turn", attrs...)
	}
}

// activate starts a session with an agent and posts its greeting.
func (b *Bot) activate(ctx context.Context, s *engine.Session, a *catalog.Agent, it item) bool {
	if name := b.userName(ctx, it.User); name != "" {
		s.Vars = map[string]string{"user_name": name}
	}
	if it.User != "" {
		s.SetMeta(metaOwner, it.User)
	}
	g, err := b.cfg.Engine.Activate(s, a)
	if err != nil {
		b.log.Warn("activate agent", "agent", a.ID, "err", err)
		b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("⚠️ %s can't start here: %v", a.Name, err))
		return false
	}
	b.setTitle(ctx, it, s)
	b.postGreeting(ctx, it.Channel, it.ThreadTS, a, g)
	return true
}

// pick starts the thread's session with the agent chosen in the picker,
// then runs the message that was waiting for it.
func (b *Bot) pick(ctx context.Context, s *engine.Session, it item, seq string) {
	if it.PickerTS != "" {
		b.closePicker(ctx, it)
	}
	if s.Agent != nil {
		b.ephemeral(it.Channel, it.User, it.ThreadTS, fmt.Sprintf("This thread already talks to %s. To switch, write `@%s use <agent>` here.", s.Agent.Name, "agentbot"))
		return
	}
	a, ok := b.findAgent(it.AgentID)
	if !ok {
		b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("⚠️ The agent `%s` isn't loaded any more. Try `/agent list`.", it.AgentID))
		return
	}
	pending := s.Meta[metaPending]
	if !b.activate(ctx, s, a, it) {
		return
	}
	if isGreetingOnly(pending, a.Name) {
		pending = "" // the greeting answers it
		delete(s.Meta, metaPending)
		_ = b.cfg.Store.SaveSession(&s.Session)
	}
	if pending != "" {
		delete(s.Meta, metaPending)
		s.SetMeta(metaSeq, seq)
		b.runTurn(ctx, s, it, pending)
	}
}

// switchAgent moves the thread to another agent (or, with an empty id, back
// to the picker). The earlier session is kept, detached from the thread.
func (b *Bot) switchAgent(ctx context.Context, s *engine.Session, it item, agentID string) {
	var a *catalog.Agent
	if agentID != "" {
		var ok bool
		if a, ok = b.findAgent(agentID); !ok {
			b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("I don't know the agent `%s`. %s", agentID, b.agentList()))
			return
		}
	}
	if s.Agent != nil || len(s.Messages) > 0 {
		if err := b.cfg.Store.DetachSession(s.ID); err != nil {
			b.log.Error("detach session", "err", err)
			b.post(ctx, it.Channel, it.ThreadTS, "⚠️ I couldn't switch agents. Please try again.")
			return
		}
		ns, err := b.cfg.Store.NewSession(it.key())
		if err != nil {
			b.log.Error("new session", "err", err)
			return
		}
		s = &engine.Session{Session: *ns}
	}
	if a == nil {
		b.postPicker(ctx, it)
		return
	}
	b.activate(ctx, s, a, it)
}

// findAgent finds an agent by id in the current catalog.
func (b *Bot) findAgent(id string) (*catalog.Agent, bool) {
	if id == "" {
		return nil, false
	}
	return b.cfg.Catalog().Find(id)
}

// threadCommand recognizes "use <agent>" and "reset" typed to the bot.
func threadCommand(text string) (string, string) {
	f := strings.Fields(text)
	if len(f) == 2 && strings.EqualFold(f[0], "use") {
		return "use", f[1]
	}
	if len(f) == 1 && (strings.EqualFold(f[0], "reset") || strings.EqualFold(f[0], "restart")) {
		return "reset", ""
	}
	if len(f) == 1 && strings.EqualFold(f[0], "status") {
		return "status", ""
	}
	return "", ""
}

// isMenuPick reports whether text picks an item of the session's menu, which
// wins over a thread command of the same word.
func isMenuPick(s *engine.Session, text string) bool {
	_, _, ok := engine.MatchMenu(s.Agent.Menu, text)
	return ok
}

// isHelp reports whether text picks the agent's plain *help item.
func isHelp(s *engine.Session, text string) bool {
	idx, _, ok := engine.MatchMenu(s.Agent.Menu, text)
	return ok && engine.IsPlainHelp(s.Agent.Menu[idx])
}

// userName is how the agent addresses a user: their Slack display name, or
// "" when Slack does not say.
func (b *Bot) userName(ctx context.Context, id string) string {
	if id == "" {
		return ""
	}
	if n, ok := b.names.Load(id); ok {
		return n.(string)
	}
	u, err := b.cfg.API.GetUserInfoContext(ctx, id)
	if err != nil {
		b.log.Debug("users.info", "err", err)
		return ""
	}
	for _, n := range []string{u.Profile.DisplayName, u.Profile.FirstName, u.RealName, u.Name} {
		if n = strings.TrimSpace(n); n != "" {
			b.names.Store(id, n)
			return n
		}
	}
	return ""
}

// activeSkill names the session's running skill, "" when none.
func activeSkill(s *transcript.Session) string {
	if s.Skill == nil {
		return ""
	}
	return s.Skill.Name
}

// ownerOf is the user a session belongs to: who started it.
func ownerOf(s *engine.Session, it item) string {
	if o := s.Meta[metaOwner]; o != "" {
		return o
	}
	return it.User
}

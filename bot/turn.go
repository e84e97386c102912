package bot

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/running"
	"agentbot/bot/slackmd"
	"agentbot/bot/threadstate"
	"agentbot/bot/threadwork"
	"agentbot/engine"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// turns runs the turns of threads, bounded by the concurrency limit, and
// renders them into their threads.
type turns struct {
	*core
	home *home
	sem  chan struct{}
	// kept counts, per thread key, the runs in a row whose item stayed
	// queued because the store failed (keptRuns).
	kept sync.Map
}

// threadTurn is one engine turn in a thread, rendered into it: what the
// steps before and after the turn share.
type threadTurn struct {
	c     *engine.Conversation
	it    item
	r     *reply
	rt    *running.Turn
	start time.Time
	// What the session held before the turn: its running skill, its
	// number of outputs, and the calls that waited for approval (with
	// their messages), which a new message denies.
	skill         string
	outputs       int
	waiting       []transcript.Approval
	waitingPosted map[string]string
	// The turn's outcome.
	res *engine.Result
	err error
}

// runTurn runs one turn of the thread's conversation, bounded by the
// concurrency limit, in three parts: the steps before it, the turn, and
// the steps after it (afterTurn), in order.
func (b *turns) runTurn(ctx context.Context, c *engine.Conversation, it item, input string) {
	select {
	case b.sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-b.sem }()
	t, tctx, done := b.beforeTurn(ctx, c, it, input)
	defer done()
	t.res, t.err = c.Run(tctx, input, t.r.emit, nil) // approvals are decided by clicks, later
	t.err = b.storeFailed(ctx, c.Live, t.res, t.err)
	for _, step := range afterTurn {
		step(b, ctx, t)
	}
}

// beforeTurn starts the reply, registers the turn so it can be stopped,
// shows the thread's agent session as processing, and notes what the
// after-turn steps compare with. It returns the turn's context and what
// ends the turn.
func (b *turns) beforeTurn(ctx context.Context, c *engine.Conversation, it item, input string) (*threadTurn, context.Context, func()) {
	b.obs.TurnStarted()
	t := &threadTurn{c: c, it: it, start: time.Now(), r: b.newReply(ctx, it, c.Live)}
	c.Live.Person, c.Live.Names = it.User, b.userName // the author of the documents the turn saves, and how people are called
	tctx, cancel := context.WithCancel(ctx)
	key := it.thread().String()
	t.rt = b.running.Start(key, cancel)
	t.r.rt = t.rt
	if note := b.lateNote(c.Live, it); note != "" {
		t.r.emit(engine.Event{Kind: engine.EventNotice, Text: note})
	}
	noteWorkflow(b.core, c.Live, input)
	t.r.armStop()
	b.setSessionStatus(ctx, it, slack.AgentSessionStatusProcessing)
	t.skill, t.outputs = activeSkill(&c.Live.Session), len(c.Live.Outputs)
	t.waiting, t.waitingPosted = b.waitingApprovals(c.Live)
	return t, tctx, func() {
		b.setSessionStatus(ctx, it, slack.AgentSessionStatusActive)
		b.running.End(key, t.rt)
		cancel()
	}
}

// afterTurn are the steps after a turn, in order.
var afterTurn = []func(b *turns, ctx context.Context, t *threadTurn){
	(*turns).closeSuperseded, // approvals: the calls the new message denied
	(*turns).retitle,         // title: the DM names the workflow now running
	(*turns).recordStop,      // a person's stop: recorded; the late answer is never posted
	(*turns).render,          // the answer, and the uploads of the saved documents
	(*turns).askApprovals,    // approvals: the calls the turn waits on
	(*turns).turnFinished,    // metrics and the turn's log line
	(*turns).refreshHomeTab,  // Home tab: it lists the new documents, once uploaded
}

// retitle names the DM after the workflow when the turn started one.
func (b *turns) retitle(ctx context.Context, t *threadTurn) {
	if activeSkill(&t.c.Live.Session) != t.skill {
		b.setTitle(ctx, t.it, t.c.Live)
	}
}

// recordStop handles a turn a person stopped: what was said is kept, the
// stop is recorded in the transcript, and the late answer is never posted.
func (b *turns) recordStop(ctx context.Context, t *threadTurn) {
	by := t.rt.StoppedBy()
	if by == "" || ctx.Err() != nil {
		return
	}
	if err := t.c.Interrupt(ctx, stopNote); err != nil {
		b.log.Error("record stop", "err", err)
	}
	t.r.stoppedBy = by
	t.err = nil
}

// render finishes the reply: the answer (or what went wrong) and the
// uploads.
func (b *turns) render(ctx context.Context, t *threadTurn) {
	kept := threadwork.Kept(ctx)
	runs := b.keptRuns(t.it.thread().String(), kept)
	t.r.finish(t.res, t.err, kept, kept && runs < quietRuns)
}

// quietRuns is how many runs in a row may keep their item queued for the
// store before the thread is told: a blip the next run (200 ms later, see
// threadwork.Work.run) outlasts is not worth a notice.
const quietRuns = 2

// keptRuns counts the runs in a row of key's thread whose item stayed
// queued for the store, this one included (kept); a run that does not
// keep it starts the count over.
func (b *turns) keptRuns(key string, kept bool) int {
	if !kept {
		b.kept.Delete(key)
		return 0
	}
	n := 1
	if v, ok := b.kept.Load(key); ok {
		n += v.(int)
	}
	b.kept.Store(key, n)
	return n
}

// refreshHomeTab refreshes the Home tab of the session's owner when the
// turn saved a document.
func (b *turns) refreshHomeTab(ctx context.Context, t *threadTurn) {
	if len(t.c.Live.Outputs) > t.outputs {
		b.home.refreshHome(ctx, b.ownerOf(t.c, t.it))
	}
}

// turnFinished reports the turn to the Observer and logs it.
func (b *turns) turnFinished(_ context.Context, t *threadTurn) {
	d := time.Since(t.start)
	var u engine.Usage
	iters, tools := 0, 0
	if t.res != nil {
		u, iters, tools = t.res.Usage, t.res.Iterations, t.res.Tools
	}
	b.obs.TurnFinished(d, iters, u.Prompt, u.Cached, u.Completion, u.Reasoning, t.err)
	attrs := []any{"session", t.c.Live.ID, "agent", t.c.Live.AgentID, "iterations", iters, "tools", tools,
		"prompt_tokens", u.Prompt, "cached_tokens", u.Cached, "completion_tokens", u.Completion, "duration", d.Round(time.Millisecond)}
	var over *engine.BudgetError
	switch {
	case errors.As(t.err, &over):
		b.log.Info("turn refused: token budget", append(attrs, "budget", over.Budget.Name)...)
	case t.err != nil:
		b.log.Warn("turn failed", append(attrs, "err", t.err)...)
	default:
		b.log.Info("turn", attrs...)
	}
}

// storeFailed handles a turn that could not store its session
// (threadwork.Work.StoreFailed): the answer, when there is one, is shown and
// stored again; otherwise the item stays queued.
func (b *turns) storeFailed(ctx context.Context, s *engine.Session, res *engine.Result, err error) error {
	text := ""
	if res != nil {
		text = res.Text
	}
	return b.work.StoreFailed(ctx, &s.Session, text, err, func() error { return b.cfg.Engine.Save(ctx, s) })
}

// noteWorkflow remembers the menu item input picks, if any.
func noteWorkflow(b *core, s *engine.Session, input string) {
	if s.AgentDef == nil || input == "" {
		return
	}
	idx, _, ok := engine.MatchMenu(s.AgentDef.Menu, input)
	if !ok {
		return
	}
	it := s.AgentDef.Menu[idx]
	name := it.Cmd
	switch {
	case it.Skill != "":
		name = it.Skill
	case it.Trigger != "":
		name = it.Trigger
	}
	b.setState(s, func(st *threadstate.State) { st.Workflow = name })
}

// lateNote is what a turn's answer starts with when its message came late
// (Slack delivered it again after a fault) and a later message of the
// thread was answered already: which message it answers. It records its
// message as answered in s's thread state.
func (b *turns) lateNote(s *engine.Session, it item) string {
	if it.Kind != kindMessage || it.TS == "" {
		return ""
	}
	order, latest := storage.OrderOf(it.TS), storage.OrderOf(b.state(s).Answered)
	switch {
	case order == 0 || order == latest:
		return ""
	case order > latest:
		b.setState(s, func(st *threadstate.State) { st.Answered = it.TS })
		return ""
	}
	quote := strings.Join(strings.Fields(it.Text), " ")
	return "Answering an earlier message" + whose(it.User) + ", which reached me late: “" + slackmd.Shorten(quote, 120) + "”"
}

// whose names the sender of a message for lateNote.
func whose(user string) string {
	if user == "" {
		return ""
	}
	return " from <@" + user + ">"
}

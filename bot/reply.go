package bot

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"agentbot/bot/render"
	"agentbot/bot/running"
	"agentbot/bot/slackmd"
	"agentbot/bot/threadstate"
	"agentbot/bot/threadwork"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/llm"
	"agentbot/engine/party"
	"agentbot/engine/text"
	"agentbot/storage"
)

// reply is a turn's reply in its thread: the renderer (bot/render), wired
// to the running turn (whether someone stopped it), the session's
// documents (uploaded at the end) and the bot's texts (the feedback
// buttons, what a failure says).
type reply struct {
	r  *render.Reply
	rt *running.Turn // the turn, to tell whether someone stopped it
	// stoppedBy is the user who stopped the turn: its late answer is not
	// posted.
	stoppedBy string
	// cast splits a party's answer into its personas' messages (party.go).
	cast *cast
}

// newReply starts the reply of a turn of it in session s: it names the
// agent that speaks, and the documents the turn saves are read from the
// store when they are uploaded. Under a thread lease (ctx) every Slack call
// is fenced, the reply's output is recorded with the turn's queue seq
// (threadstate.State.Seq), and a stream an earlier run of the turn left open is
// closed first.
func (b *turns) newReply(ctx context.Context, it item, s *engine.Session) *reply {
	rep := &reply{}
	sessionID := s.ID
	opts := render.Options{
		Streaming: !b.cfg.NoStreaming,
		Speaker:   speaker(s),
		Feedback:  feedbackBlock(),
		Stopped:   func() bool { return rep.rt != nil && rep.rt.StoppedBy() != "" },
		Upload: func(ev engine.Event) {
			// From the store (the project's documents, or the session's
			// outputs before projects), as any replica would serve it.
			data, err := b.cfg.Engine.OutputData(ctx, sessionID, *ev.Output)
			b.upload(ctx, it, savedDoc{ev: ev, data: data, err: err})
		},
		Log: b.log,
	}
	if threadwork.Leased(ctx) {
		st := b.state(s)
		seq := st.Seq
		opts.Guard = threadwork.GuardOf(ctx)
		opts.Prior = render.Output(st.Prior(seq)) // the stored record, as the renderer reads it
		if o := st.Output; o != nil && o.Seq != seq && o.Open && !o.Done {
			// Another item's turn was cut with its stream open, and this
			// item went first (it came late): the record is about to be
			// overwritten, so close that stream now, or nobody will.
			opts.Other = o.StreamTS
		}
		if opts.Prior.Starting {
			b.closeUnnamed(ctx, it)
		}
		opts.Record = func(o render.Output) { b.work.RecordOutput(ctx, it.thread().String(), seq, threadstate.Shown(o)) }
	}
	th := render.Thread{Team: it.Team, Channel: it.Channel, TS: it.ThreadTS, User: it.User, DM: it.DM, As: author(s)}
	rep.r = render.New(ctx, b.web(), th, opts)
	rep.cast = &cast{log: b.log, next: func(as render.Author, speaker string) *render.Reply {
		o := opts
		o.Speaker, o.Feedback, o.Prior, o.Other = speaker, nil, render.Output{}, ""
		t := th
		t.As = as
		return render.New(ctx, b.web(), t, o)
	}}
	if partyActive(s) {
		rep.cast.split = &party.Splitter{Roster: b.cfg.Engine.PartyPool(s)}
	}
	return rep
}

// speaker names the session's agent for the line under its answers.
func speaker(s *engine.Session) string {
	if s == nil || s.AgentDef == nil {
		return ""
	}
	a := s.AgentDef
	name := strings.TrimSpace(a.Icon + " " + a.Name)
	if a.Title != "" && a.Title != a.Name {
		name += ", " + a.Title
	}
	return name + " (" + a.ID + ")"
}

// maxUsername bounds the name a message shows as its author.
const maxUsername = 80

// author is the name and icon the session's agent posts under
// (chat:write.customize): its icon and name and title as the username,
// and its icon as icon_emoji when it is a Slack emoji code (":clipboard:";
// a BMAD icon is usually a Unicode emoji, which stays in the name). The
// context line under the answer (speaker) says the same where Slack
// ignores these.
func author(s *engine.Session) render.Author {
	if s == nil {
		return render.Author{}
	}
	return agentAuthor(s.AgentDef)
}

// agentAuthor is the name and icon agent a posts under (see author); the
// zero Author, the app's own, for none.
func agentAuthor(a *catalog.Agent) render.Author {
	if a == nil {
		return render.Author{}
	}
	name, icon := strings.TrimSpace(a.Name), strings.TrimSpace(a.Icon)
	if a.Title != "" && a.Title != a.Name {
		name += ", " + a.Title
	}
	if name == "" {
		name = a.ID
	}
	var emoji string
	if len(icon) > 2 && strings.HasPrefix(icon, ":") && strings.HasSuffix(icon, ":") && !strings.ContainsAny(icon, " \t") {
		emoji = icon
	} else if icon != "" {
		name = icon + " " + name
	}
	if utf8.RuneCountInString(name) > maxUsername {
		name = text.Cut(name, maxUsername-1, "") + "…"
	}
	return render.Author{Username: name, IconEmoji: emoji}
}

// emit receives the engine's events.
func (rep *reply) emit(ev engine.Event) {
	if rep.emitParty(ev) {
		return
	}
	rep.current().Emit(ev)
}

// current is the reply of the turn under way (a party's persona's).
func (rep *reply) current() *render.Reply {
	if c := rep.cast; c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	return rep.r
}

// armStop shows the Stop button once the turn has run for a while.
func (rep *reply) armStop() { rep.r.ArmStop() }

// finish uploads the documents of this turn, then posts the final answer
// with feedback buttons (or, after a stop, only says so). kept says the
// item stays queued, to run again: a failure is then only a notice, and
// none when quiet.
func (rep *reply) finish(res *engine.Result, turnErr error, kept, quiet bool) {
	o := render.Outcome{StoppedBy: rep.stoppedBy, Retry: kept}
	if res != nil {
		o.Text = res.Text
		if turnErr == nil {
			o.Waiting = len(res.Pending)
		}
	}
	if turnErr != nil && !quiet {
		o.Failure = friendlyError(turnErr)
	}
	rep.finishParty(&o)
	rep.current().Finish(o)
}

// friendlyError is what the user reads when a turn fails; details go to the
// log.
func friendlyError(err error) string {
	if be, ok := errors.AsType[*engine.BudgetError](err); ok {
		return be.Message() // the plain message of a turn refused at a cap (engine.Budgets)
	}
	if _, ok := errors.AsType[*engine.SaveError](err); ok {
		return "I couldn't save this conversation: agentbot's database is unreachable right now. Your message is kept, and I'll answer it once the database is back."
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "This took too long and was stopped. Your message is saved; ask me to continue."
	case errors.Is(err, context.Canceled):
		return "I was interrupted (the bot is restarting). I'll pick this up when I'm back."
	}
	what := err.Error()
	var me *llm.Error
	if errors.As(err, &me) {
		what = me.Error() // without the turn's own prefix
	}
	msg := "Something went wrong talking to the model: " + shorten(what, 300)
	if hint := llm.HintOf(err); hint != "" {
		msg += "\n**What to do:** " + shorten(hint, 400)
	}
	return msg + "\nYour message is saved in this thread; reply “continue” to try again."
}

// shorten cuts s to at most n characters, ending in "…" when it cut.
func shorten(s string, n int) string { return slackmd.Shorten(s, n) }

// closeUnnamed closes the streams an earlier run of the turn of it may
// have left open while it died opening one, before it learnt the stream's
// ts: every bot message in the thread after the item's message is stopped with the
// interrupted note (Slack refuses the stop of a message that is not an
// open stream, which changes nothing).
func (b *turns) closeUnnamed(ctx context.Context, it item) {
	msgs, _, _, err := b.api(ctx).GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
		ChannelID: it.Channel, Timestamp: it.ThreadTS, Oldest: it.TS, Limit: 200})
	if err != nil {
		b.log.Warn("find a stream an earlier run left open", "err", err)
		return
	}
	me := b.self(ctx)
	for _, m := range msgs {
		ours := m.User == me.BotUserID || (m.BotID != "" && m.BotID == me.BotID)
		if !ours || m.Timestamp == it.ThreadTS || storage.OrderOf(m.Timestamp) <= storage.OrderOf(it.TS) {
			continue
		}
		if threadwork.Guard(ctx) != nil {
			return
		}
		if err := b.web().StopStream(ctx, it.Channel, m.Timestamp, render.InterruptedNote()); err == nil {
			b.log.Info("closed a stream an earlier run left open", "ts", m.Timestamp)
		}
	}
}

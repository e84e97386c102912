package bot

import (
	"context"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/threadstate"
	"agentbot/engine"
	"agentbot/engine/transcript"
)

// Feedback on answers: final answers carry Slack's feedback buttons; a click
// is queued in its thread like a message (so it never races a running turn
// for the session) and stored with the session.

const (
	// actionFeedback is the action id of the feedback buttons.
	actionFeedback = "feedback"
	// maxFeedback bounds the clicks kept per session; older ones go.
	maxFeedback = 200
)

// Values of the feedback buttons.
const (
	FeedbackPositive = "positive"
	FeedbackNegative = "negative"
)

// MetaFeedback is the session Meta key under which sessions stored before
// the bot kept one thread state (threadstate.State) hold their feedback: a JSON
// list of Feedback. SessionFeedback reads it too.
const MetaFeedback = threadstate.OldMetaFeedback

// Feedback is one click of an answer's feedback buttons
// (threadstate.Feedback).
type Feedback = threadstate.Feedback

// SessionFeedback returns the feedback stored with s, oldest first, one
// per answer and user (a later click of the same user on the same answer
// replaces the earlier one).
func SessionFeedback(s *transcript.Session) ([]Feedback, error) {
	st, err := threadstate.Of(s)
	return st.Feedback, err
}

// feedbackBlock is the feedback buttons under a final answer.
func feedbackBlock() slack.Block {
	up := slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "👍", true, false), FeedbackPositive).
		WithAccessibilityLabel("This answer helped")
	down := slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, "👎", true, false), FeedbackNegative).
		WithAccessibilityLabel("This answer did not help")
	return slack.NewContextActionsBlock("feedback", slack.NewFeedbackButtonsBlockElement(actionFeedback, up, down))
}

// onFeedbackClick queues a click of an answer's feedback buttons in its
// thread; it reports whether ack was handed on.
func (b *intake) onFeedbackClick(team, channel, thread, messageTS, user, value string, dm bool, ack func(), dedupe ...string) bool {
	if value != FeedbackPositive && value != FeedbackNegative {
		return false
	}
	if why := b.denied(user, team, channel); why != "" {
		b.ephemeral(channel, user, thread, why)
		return false
	}
	it := item{Kind: kindFeedback, Team: team, Channel: channel, ThreadTS: thread, TS: messageTS, User: user, Text: value, DM: dm}
	return b.enqueue(it, ack, dedupe...)
}

// onFeedback handles a queued feedback click.
func (b *threadHandlers) onFeedback(ctx context.Context, j *job) { b.recordFeedback(ctx, j.it) }

// recordFeedback stores a queued feedback click with its session and
// counts it.
func (b *threadHandlers) recordFeedback(ctx context.Context, it item) {
	rec, err := b.cfg.Store.FindSession(ctx, it.thread().String())
	if err != nil || rec == nil {
		b.log.Warn("feedback for a thread without a session", "err", err)
		return
	}
	s := &engine.Session{Session: *rec}
	st := b.state(s)
	list := st.Feedback
	f := Feedback{TS: it.TS, User: it.User, Value: it.Text, Agent: s.AgentID, Workflow: sessionWorkflow(rec, st), Time: time.Now().UTC()}
	replaced := false
	for i := range list {
		if list[i].TS == f.TS && list[i].User == f.User {
			list[i], replaced = f, true
		}
	}
	if !replaced {
		list = append(list, f)
	}
	if len(list) > maxFeedback {
		list = list[len(list)-maxFeedback:]
	}
	b.setState(s, func(st *threadstate.State) { st.Feedback = list })
	if !b.saveSession(ctx, s, "record feedback") {
		return
	}
	b.obs.Feedback(f.Agent, f.Workflow, f.Value)
	b.log.Info("feedback", "session", s.ID, "agent", f.Agent, "workflow", f.Workflow, "value", f.Value)
}

// sessionWorkflow is the session's active skill, else the last menu item
// picked (in its thread state st), else "".
func sessionWorkflow(s *transcript.Session, st threadstate.State) string {
	if s.Skill != nil && s.Skill.Name != "" {
		return s.Skill.Name
	}
	return st.Workflow
}

package bot

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"agentbot/engine"
	"agentbot/engine/transcript"
)

// Feedback on answers: final answers carry Slack's feedback buttons; a click
// is queued in its thread like a message (so it never races a running turn
// for the session) and stored with the session.

const (
	// actionFeedback is the action id of the feedback buttons.
	actionFeedback = "feedback"
	// kindFeedback is the item kind of a feedback click.
	kindFeedback = "feedback"
	// metaWorkflow holds the last menu item picked in the session (its
	// trigger, skill or command), for feedback and metrics.
	metaWorkflow = "bot.workflow"
	// maxFeedback bounds the clicks kept per session; older ones go.
	maxFeedback = 200
)

// Values of the feedback buttons.
const (
	FeedbackPositive = "positive"
	FeedbackNegative = "negative"
)

// MetaFeedback is the session Meta key holding the session's feedback: a
// JSON list of Feedback, oldest first, one per answer and user (a later
// click of the same user on the same answer replaces the earlier one).
const MetaFeedback = "bot.feedback"

// Feedback is one click of an answer's feedback buttons.
type Feedback struct {
	TS       string    `json:"ts"`                 // the answer's message
	User     string    `json:"user"`               // who clicked
	Value    string    `json:"value"`              // FeedbackPositive or FeedbackNegative
	Agent    string    `json:"agent"`              // the session's agent id
	Workflow string    `json:"workflow,omitempty"` // active skill or last menu item picked
	Time     time.Time `json:"time"`
}

// SessionFeedback returns the feedback stored with s, oldest first.
func SessionFeedback(s *transcript.Session) ([]Feedback, error) {
	raw := s.Meta[MetaFeedback]
	if raw == "" {
		return nil, nil
	}
	var list []Feedback
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return nil, fmt.Errorf("session %s: feedback: %w", s.ID, err)
	}
	return list, nil
}

// FeedbackObserver is told of feedback clicks, for metrics. An Observer
// that implements it (metrics.Metrics does) counts them.
type FeedbackObserver interface {
	Feedback(agent, workflow, value string)
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
func (b *Bot) onFeedbackClick(team, channel, thread, messageTS, user, value string, dm bool, ack func(), dedupe ...string) bool {
	if value != FeedbackPositive && value != FeedbackNegative {
		return false
	}
	if why := b.denied(user, channel, dm); why != "" {
		b.ephemeral(channel, user, thread, why)
		return false
	}
	it := item{Kind: kindFeedback, Team: team, Channel: channel, ThreadTS: thread, TS: messageTS, User: user, Text: value, DM: dm}
	return b.enqueue(it, ack, dedupe...)
}

// recordFeedback stores a queued feedback click with its session and
// counts it.
func (b *Bot) recordFeedback(it item) {
	s, err := b.cfg.Store.FindSession(it.key())
	if err != nil || s == nil {
		b.log.Warn("feedback for a thread without a session", "err", err)
		return
	}
	list, err := SessionFeedback(s)
	if err != nil {
		b.log.Warn("unreadable feedback replaced", "err", err)
	}
	f := Feedback{TS: it.TS, User: it.User, Value: it.Text, Agent: s.AgentID, Workflow: sessionWorkflow(s), Time: time.Now().UTC()}
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
	data, err := json.Marshal(list)
	if err != nil {
		b.log.Error("encode feedback", "err", err)
		return
	}
	s.SetMeta(MetaFeedback, string(data))
	if err := b.cfg.Store.SaveSession(s); err != nil {
		b.log.Error("save feedback", "session", s.ID, "err", err)
		return
	}
	if fo, ok := b.obs.(FeedbackObserver); ok {
		fo.Feedback(f.Agent, f.Workflow, f.Value)
	}
	b.log.Info("feedback", "session", s.ID, "agent", f.Agent, "workflow", f.Workflow, "value", f.Value)
}

// sessionWorkflow is the session's active skill, else the last menu item
// picked, else "".
func sessionWorkflow(s *transcript.Session) string {
	if s.Skill != nil && s.Skill.Name != "" {
		return s.Skill.Name
	}
	return s.Meta[metaWorkflow]
}

// noteWorkflow remembers the menu item input picks, if any.
func noteWorkflow(s *engine.Session, input string) {
	if s.Agent == nil || input == "" {
		return
	}
	idx, _, ok := engine.MatchMenu(s.Agent.Menu, input)
	if !ok {
		return
	}
	it := s.Agent.Menu[idx]
	name := it.Cmd
	switch {
	case it.Skill != "":
		name = it.Skill
	case it.Trigger != "":
		name = it.Trigger
	}
	s.SetMeta(metaWorkflow, name)
}

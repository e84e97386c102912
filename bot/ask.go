package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"agentbot/bot/keys"
	"agentbot/bot/view"
	"agentbot/bot/webapi"
	"agentbot/engine"
	"agentbot/engine/form"
)

// Questions a tool asks in the middle of a call (an MCP server's
// elicitation): the person the call acts for gets the form ephemerally in
// the thread, with its defaults filled in, and Send, Decline or Cancel.
// The call waits in the process that runs it. The click may reach another
// replica: that one leaves the answer in the session's metadata
// (askMetaPrefix + id), which the waiting process reads.

// askMetaPrefix names the session metadata entry of an answer given on
// another replica.
const askMetaPrefix = "bot.ask/"

// askPoll is how often a waiting question looks for an answer left by
// another replica.
const askPoll = 500 * time.Millisecond

// openQuestion is a question waiting in this process.
type openQuestion struct {
	person string
	fields []form.Field
	answer chan engine.Answer // buffered: one answer
}

// questions are the questions waiting in this process, by id.
type questions struct {
	mu   sync.Mutex
	open map[string]*openQuestion
}

func (q *questions) add(id string, oq *openQuestion) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.open == nil {
		q.open = map[string]*openQuestion{}
	}
	q.open[id] = oq
}

func (q *questions) get(id string) *openQuestion {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.open[id]
}

func (q *questions) remove(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.open, id)
}

// Ask asks the person of a turn of s a tool's question (engine.Config.Ask)
// and waits for their answer, ctx's end, or the approval timeout (then it
// is cancelled, as the person let it be).
func (b *Bot) Ask(ctx context.Context, s *engine.Session, q engine.Question) (engine.Answer, error) {
	c := b.c
	k, ok := keys.ParseThread(s.Key)
	if !ok || s.Person == "" {
		return engine.Answer{}, engine.ErrNobodyToAsk
	}
	fields, err := form.Fields(q.Schema)
	if err != nil {
		return engine.Answer{}, fmt.Errorf("ask %s: %w", s.Person, err)
	}
	id := newQuestionID()
	oq := &openQuestion{person: s.Person, fields: fields, answer: make(chan engine.Answer, 1)}
	c.questions.add(id, oq)
	// The form's schema is kept with the session, so another replica that
	// takes the click can read the answer; both entries go when it ends.
	if err := c.cfg.Store.SetMeta(ctx, s.Key, askMetaPrefix+id+"/schema", string(q.Schema)); err != nil {
		c.log.Warn("keep a question's form", "err", err)
	}
	defer func() {
		c.questions.remove(id)
		for _, name := range []string{askMetaPrefix + id + "/schema", askMetaPrefix + id} {
			_ = c.cfg.Store.SetMeta(context.WithoutCancel(ctx), s.Key, name, "")
		}
	}()
	v := view.QuestionValue{Key: s.Key, ID: id, Person: s.Person}
	c.ephemeralBlocks(ctx, k.Channel, s.Person, k.Thread, view.QuestionMessage(v, q, fields)...)
	c.log.Info("a tool asks the person", "session", s.ID, "source", q.Source, "question", id)
	timeout := time.NewTimer(c.cfg.ApprovalTimeout)
	defer timeout.Stop()
	poll := time.NewTicker(askPoll)
	defer poll.Stop()
	for {
		select {
		case a := <-oq.answer:
			return a, nil
		case <-poll.C:
			if a, ok := c.answerLeft(ctx, s.Key, id); ok {
				return a, nil
			}
		case <-timeout.C:
			return engine.Answer{Action: engine.AnswerCancel}, nil
		case <-ctx.Done():
			return engine.Answer{}, ctx.Err()
		}
	}
}

// answerLeft reads (and clears) an answer another replica left for
// question id of the session key.
func (b *core) answerLeft(ctx context.Context, key, id string) (engine.Answer, bool) {
	rec, err := b.cfg.Store.FindMeta(ctx, key)
	if err != nil || rec == nil || rec.Meta[askMetaPrefix+id] == "" {
		return engine.Answer{}, false
	}
	var a engine.Answer
	if err := json.Unmarshal([]byte(rec.Meta[askMetaPrefix+id]), &a); err != nil {
		return engine.Answer{}, false
	}
	if err := b.cfg.Store.SetMeta(ctx, key, askMetaPrefix+id, ""); err != nil {
		b.log.Warn("clear an answer", "err", err)
	}
	return a, true
}

// onQuestionClick takes the person's Send, Decline or Cancel: only the
// person the question is for may answer it; a form that does not read is
// sent back with what is wrong. The answer goes to the waiting call, in
// this process or (through the session's metadata) another.
func (b *intake) onQuestionClick(c click, _ func()) bool {
	var v view.QuestionValue
	if err := json.Unmarshal([]byte(c.value), &v); err != nil || v.ID == "" {
		b.log.Warn("question click with a bad value", "channel", c.channel)
		return false
	}
	k, ok := keys.ParseThread(v.Key)
	if !ok || k.Team != c.team || k.Channel != c.channel {
		b.ephemeral(c.channel, c.user, c.thread, "⚠️ This button doesn't belong to this thread.")
		return false
	}
	if c.user != v.Person {
		b.ephemeral(c.channel, c.user, k.Thread, fmt.Sprintf("This question is for <@%s>.", v.Person))
		return false
	}
	a := engine.Answer{Action: map[string]string{view.ActionAnswer: engine.AnswerAccept, view.ActionDecline: engine.AnswerDecline, view.ActionCancel: engine.AnswerCancel}[c.kind]}
	oq := b.questions.get(v.ID)
	if a.Action == engine.AnswerAccept {
		fields, err := b.questionFields(oq, v)
		if err == nil {
			a.Values, err = view.FormValues(v.ID, fields, c.state)
		}
		if err != nil {
			b.ephemeral(c.channel, c.user, k.Thread, "⚠️ "+err.Error()+". Fix it in the form and send it again.")
			return false
		}
	}
	if !b.deliverAnswer(oq, v, a) {
		b.ephemeral(c.channel, c.user, k.Thread, "This question isn't waiting for an answer any more.")
		return false
	}
	b.answered(c, a)
	return false
}

// questionFields are the fields of the question v names: this process's
// own, or read from the session's pending question record.
func (b *intake) questionFields(oq *openQuestion, v view.QuestionValue) ([]form.Field, error) {
	if oq != nil {
		return oq.fields, nil
	}
	rec, err := b.cfg.Store.FindMeta(b.turnCtx, v.Key)
	if err != nil || rec == nil {
		return nil, fmt.Errorf("I couldn't read this thread's session")
	}
	raw := rec.Meta[askMetaPrefix+v.ID+"/schema"]
	if raw == "" {
		return nil, fmt.Errorf("this question isn't waiting for an answer any more")
	}
	return form.Fields(json.RawMessage(raw))
}

// deliverAnswer hands a to the question: at once when it waits here, else
// through the session's metadata for the process where it waits. It
// reports false when the question is not waiting anywhere.
func (b *intake) deliverAnswer(oq *openQuestion, v view.QuestionValue, a engine.Answer) bool {
	if oq != nil {
		select {
		case oq.answer <- a:
			return true
		default:
			return false // answered already
		}
	}
	rec, err := b.cfg.Store.FindMeta(b.turnCtx, v.Key)
	if err != nil || rec == nil || rec.Meta[askMetaPrefix+v.ID+"/schema"] == "" {
		return false
	}
	data, _ := json.Marshal(a)
	if err := b.cfg.Store.SetMeta(b.turnCtx, v.Key, askMetaPrefix+v.ID, string(data)); err != nil {
		b.log.Error("leave an answer for another replica", "err", err)
		return false
	}
	return true
}

// answered tells the person their answer went, replacing the form where
// Slack gave a response URL.
func (b *intake) answered(c click, a engine.Answer) {
	text := map[string]string{engine.AnswerAccept: "✅ Sent.", engine.AnswerDecline: "⏭ Declined.", engine.AnswerCancel: "Cancelled."}[a.Action]
	if c.responseURL != "" {
		if err := webapi.RespondURL(b.turnCtx, c.responseURL, text); err == nil {
			return
		}
	}
	b.ephemeral(c.channel, c.user, c.thread, text)
}

// newQuestionID is a random id for a question.
func newQuestionID() string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return hex.EncodeToString(r[:])
}

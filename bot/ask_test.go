package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// A tool's question in the middle of a call (an MCP server's
// elicitation), end to end: the form goes to the person the call acts for
// alone, with its defaults; nobody else can answer it; a value that does
// not read as its type is sent back; the answer reaches the call typed as
// the schema says.

const askSchema = `{"type":"object","required":["title"],"properties":{
 "title":{"type":"string","title":"Issue title"},
 "priority":{"type":"string","enum":["low","high"],"default":"low"},
 "count":{"type":"integer","description":"how many"},
 "urgent":{"type":"boolean","default":false}}}`

// askTool is a tool whose every call asks its person askSchema and
// answers with what it got.
func askTool(got *sync.Map) func(context.Context, *engine.Session, func(string)) []engine.ExternalTool {
	return func(_ context.Context, s *engine.Session, _ func(string)) []engine.ExternalTool {
		return []engine.ExternalTool{{
			Name: "tracker__file", Server: "tracker", Policy: engine.PolicyAuto,
			Schema: json.RawMessage(`{"type":"object"}`),
			Call: func(ctx context.Context, _ json.RawMessage, call engine.ExternalCall) (engine.ExternalReply, error) {
				a, err := call.Ask(ctx, engine.Question{Source: "tracker", Message: "Which issue should I file?", Schema: json.RawMessage(askSchema)})
				if err != nil {
					return engine.ExternalReply{Text: "no answer: " + err.Error(), IsError: true}, nil
				}
				got.Store("answer", a)
				return engine.ExternalReply{Text: fmt.Sprintf("%s %v", a.Action, a.Values)}, nil
			},
		}}
	}
}

func askRig(t *testing.T, got *sync.Map) *rig {
	t.Helper()
	var r *rig
	r = newRig(t, rigOpts{engine: func(c *engine.Config) {
		c.ExternalTools = askTool(got)
		c.Ask = func(ctx context.Context, s *engine.Session, q engine.Question) (engine.Answer, error) {
			return r.bot.Ask(ctx, s, q)
		}
	}, mutate: func(c *bot.Config) { c.ApprovalTimeout = time.Minute }})
	if err := storage.SetChannelDefault(context.Background(), r.st, r.slack.TeamID(), channel, "product-lead"); err != nil {
		t.Fatal(err)
	}
	r.slack.SetMembers(channel, alice, bob)
	return r
}

// forms are the question forms who got.
func (r *rig) forms(who string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range r.ephemerals(who) {
		if strings.Contains(string(m.Blocks), "ask-accept:") {
			out = append(out, m)
		}
	}
	return out
}

// answer presses the form's button kind as who, with the form's inputs.
func (r *rig) answer(who string, form fakeslack.Message, kind string, values map[string]string) {
	r.t.Helper()
	for id, v := range buttons(r.t, form) {
		if !strings.HasPrefix(id, kind+":") {
			continue
		}
		q := strings.TrimPrefix(id, kind+":")
		state := map[string]map[string]any{}
		for name, val := range values {
			el := map[string]any{"type": "plain_text_input", "value": val}
			if name == "priority" || name == "urgent" {
				el = map[string]any{"type": "static_select", "selected_option": map[string]any{"value": val}}
			}
			state["ask-"+q+"-"+name] = map[string]any{"v": el}
		}
		env := r.slack.SendBlockAction(fakeslack.BlockAction{UserID: who, ChannelID: channel, MessageTS: form.TS, ThreadTS: form.ThreadTS,
			ActionID: id, Value: v, IsEphemeral: true, State: state})
		if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
			r.t.Fatal(err)
		}
		return
	}
	r.t.Fatalf("no %s button in %s", kind, form.Blocks)
}

func TestToolQuestionAnswered(t *testing.T) {
	var got sync.Map
	r := askRig(t, &got)
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "call_q1", Name: "tracker__file", Arguments: `{}`}}}, fakemodel.Reply{Text: "Filed."})
	thread, _ := r.mention("file an issue", "")
	r.waitFor("alice's form", func() bool { return len(r.forms(alice)) == 1 })
	form := r.forms(alice)[0]
	body := shown(form)
	for _, want := range []string{"`tracker` asks you", "Which issue should I file?", "Issue title", `"initial_option"`, `"value":"low"`, "how many"} {
		has(t, body, want, "the form")
	}
	if len(r.forms(bob)) != 0 {
		t.Fatal("bob got alice's form")
	}

	// Bob cannot answer it, even with its button's value.
	r.answer(bob, form, "ask-accept", map[string]string{"title": "bob's"})
	r.waitFor("bob's refusal", func() bool {
		e := r.ephemerals(bob)
		return len(e) == 1 && strings.Contains(fakeslack.Shown(e[0].Text), "This question is for <@"+alice+">")
	})
	// A count that is not a whole number is sent back; nothing reaches the call.
	r.answer(alice, form, "ask-accept", map[string]string{"title": "Login fails", "count": "three"})
	r.waitFor("the form's error", func() bool {
		for _, e := range r.ephemerals(alice) {
			if strings.Contains(e.Text, "count must be a whole number") {
				return true
			}
		}
		return false
	})
	if _, ok := got.Load("answer"); ok {
		t.Fatal("a bad form reached the call")
	}
	r.answer(alice, form, "ask-accept", map[string]string{"title": "Login fails", "count": "3", "priority": "high", "urgent": "true"})
	r.waitText(thread, "Filed.")
	v, _ := got.Load("answer")
	a := v.(engine.Answer)
	if a.Action != engine.AnswerAccept || a.Values["title"] != "Login fails" || a.Values["count"] != int64(3) || a.Values["priority"] != "high" || a.Values["urgent"] != true {
		t.Fatalf("answer = %+v", a)
	}
	// Answering again does nothing but say so.
	r.answer(alice, form, "ask-decline", nil)
	r.waitFor("the note that it is answered", func() bool {
		e := r.ephemerals(alice)
		return strings.Contains(e[len(e)-1].Text, "isn't waiting for an answer any more")
	})
}

func TestToolQuestionDeclined(t *testing.T) {
	var got sync.Map
	r := askRig(t, &got)
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "call_q2", Name: "tracker__file", Arguments: `{}`}}}, fakemodel.Reply{Text: "Not filed."})
	thread, _ := r.mention("file an issue", "")
	r.waitFor("alice's form", func() bool { return len(r.forms(alice)) == 1 })
	r.answer(alice, r.forms(alice)[0], "ask-decline", nil)
	r.waitText(thread, "Not filed.")
	has(t, r.lastToolResult(), "decline", "the call's result")
}

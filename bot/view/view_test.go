package view

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/transcript"
)

// withinLimit fails when a message's blocks carry more text than
// MaxMessageText (Slack's msg_blocks_too_long, slackapi/bolt-js#2509).
func withinLimit(t *testing.T, ms []Message) {
	t.Helper()
	for i, m := range ms {
		if n := BlocksText(append([]slack.Block{slackmd.Block(m.Text)}, m.Extra...)); n > MaxMessageText {
			t.Errorf("message %d carries %d characters of block text, over %d", i, n, MaxMessageText)
		}
	}
}

// A short text goes in one message with its tail.
func TestMessagesShortText(t *testing.T) {
	tail := []slack.Block{hint("hint", "click")}
	if ms := Messages("hello", "note", tail); len(ms) != 1 || ms[0].Text != "hello" || len(ms[0].Extra) != 1 {
		t.Fatalf("short text: %+v", ms)
	}
}

// A long text is split within the limit, the tail going with the last
// piece, and no text is lost.
func TestMessagesLongText(t *testing.T) {
	tail := []slack.Block{hint("hint", "click")}
	var para []string
	for i := range 300 {
		para = append(para, fmt.Sprintf("Paragraph %03d %s", i, strings.Repeat("word ", 20)))
	}
	long := strings.Join(para, "\n\n")
	ms := Messages(long, "note", tail)
	withinLimit(t, ms)
	if len(ms) < 3 || len(ms[len(ms)-1].Extra) != 1 {
		t.Fatalf("long text: %d messages, the last with %d extra blocks", len(ms), len(ms[len(ms)-1].Extra))
	}
	for i, m := range ms[:len(ms)-1] {
		if len(m.Extra) != 0 {
			t.Fatalf("message %d of %d carries the tail", i, len(ms))
		}
	}
	for _, want := range []string{"Paragraph 000", "Paragraph 150", "Paragraph 299"} {
		found := false
		for _, m := range ms {
			found = found || strings.Contains(m.Text, want)
		}
		if !found {
			t.Fatalf("%q lost in the split", want)
		}
	}
}

// A tail too long to share a message with the text goes alone under its
// note.
func TestMessagesLongTail(t *testing.T) {
	var bigTail []slack.Block
	for range 3 {
		bigTail = append(bigTail, section(strings.Repeat("b", 2900)))
	}
	ms := Messages(strings.Repeat("a ", 4000), "note", bigTail)
	withinLimit(t, ms)
	last := ms[len(ms)-1]
	if last.Text != "note" || len(last.Extra) != 3 || len(ms) != 2 || len(ms[0].Extra) != 0 {
		t.Fatalf("a tail that does not fit beside the text: %d messages, last %q with %d blocks", len(ms), last.Text, len(last.Extra))
	}
}

// Agents that show the same persona are told apart by module and
// install, and by id where even those repeat; a unique persona gets none.
func TestPersonaOrigins(t *testing.T) {
	bmad := func(id, module, root string) *catalog.Agent {
		return &catalog.Agent{ID: id, Name: "Mary", Title: "Analyst", Module: module, Home: &catalog.Home{Kind: "bmad", ProjectRoot: root}}
	}
	agents := []*catalog.Agent{
		bmad("a1", "bmm", "/x/v6"), bmad("a2", "bmm", "/x/v4"), bmad("a3", "cis", "/y/v4"), bmad("a4", "cis", "/z/v4"),
		{ID: "john", Name: "John"},
	}
	got := PersonaOrigins(agents)
	want := []string{"bmm · v6", "bmm · v4", "a3", "a4", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("origins %q, want %q", got, want)
	}
	for _, l := range AgentLabels(agents) {
		if Runes(l) > MaxButtonLabel {
			t.Fatalf("label %q is over %d characters", l, MaxButtonLabel)
		}
	}
}

// A menu of 120 items gets 100 buttons in actions blocks of at most 25,
// each label within a button's limit; all 120 are in the text.
func TestGreetingButtons(t *testing.T) {
	g := &engine.Greeting{Intro: "Hi"}
	for i := range 120 {
		g.Menu = append(g.Menu, catalog.MenuItem{Trigger: fmt.Sprintf("item-%d", i), Description: strings.Repeat("does a lot ", 10)})
	}
	md, tail := Greeting(g)
	if !strings.Contains(md, "120. `*item-119`") {
		t.Fatal("the text lacks the last menu item")
	}
	buttons := 0
	for _, b := range tail {
		if a, ok := b.(*slack.ActionBlock); ok {
			if n := len(a.Elements.ElementSet); n > MaxButtons {
				t.Fatalf("an actions block with %d buttons", n)
			}
			for _, e := range a.Elements.ElementSet {
				if l := e.(*slack.ButtonBlockElement).Text.Text; Runes(l) > MaxButtonLabel {
					t.Fatalf("button label %q over %d", l, MaxButtonLabel)
				}
				buttons++
			}
		}
	}
	if buttons != MaxPickerButtons {
		t.Fatalf("%d buttons, want %d", buttons, MaxPickerButtons)
	}
}

// The Home tab stays within a view's 100 blocks however many agents are
// loaded, and counts the agents it leaves out.
func TestHomeFitsAView(t *testing.T) {
	var agents []*catalog.Agent
	for i := range 150 {
		agents = append(agents, &catalog.Agent{ID: fmt.Sprintf("a%d", i), Name: fmt.Sprintf("Agent %d", i)})
	}
	s := &transcript.Session{AgentID: "a1", Outputs: []transcript.Output{{Path: "docs/prd.md", Version: 2}}}
	projects := ProjectBlocks([]ProjectDocs{{Name: "channel/T1/C1", Docs: []transcript.DocVersion{{Path: "prd.md", Version: 2, Person: "U1"}}}})
	blocks := Home(agents, []HomeSession{{Session: s, InThread: true, Channel: "C1", Thread: "1.2"}}, projects)
	if len(blocks) > MaxHomeBlocks {
		t.Fatalf("%d blocks, over %d", len(blocks), MaxHomeBlocks)
	}
	var text strings.Builder
	for _, b := range blocks {
		if sb, ok := b.(*slack.SectionBlock); ok {
			text.WriteString(sb.Text.Text + "\n")
		}
		if cb, ok := b.(*slack.ContextBlock); ok {
			text.WriteString(cb.ContextElements.Elements[0].(*slack.TextBlockObject).Text + "\n")
		}
	}
	for _, want := range []string{"…and 57 more", "prd.md (v2)", "|open the thread>", "*<#C1>* · 1 document", "<@U1>"} {
		if !strings.Contains(text.String(), want) {
			t.Fatalf("%q missing from the Home tab:\n%s", want, text.String())
		}
	}
}

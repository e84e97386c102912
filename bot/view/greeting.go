package view

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine"
	"agentbot/engine/catalog"
)

// Action ids of the bot's buttons.
const (
	ActionMenu = "menu"         // a menu item of the thread's agent; value: the command
	ActionPick = "pick"         // an agent in the picker; value: the agent id
	ActionHome = "home"         // the Home tab's "Start a session"; value: the agent id
	ActionBind = "project-bind" // approves binding a channel to a project; value: "project|channel"
)

// MenuNote heads a greeting's buttons when they go in a message of their
// own (Messages' tailNote).
const MenuNote = "Pick from the menu:"

// PickerQuestion is the picker's question, its message's plain text.
const PickerQuestion = "Which agent should help in this thread?"

// Greeting is an agent's greeting: its intro and numbered menu as
// markdown, and its menu as buttons (at most MaxPickerButtons) with a
// hint, the blocks that follow the text. Clicking a button is the same as
// GreetingBlockID names the last block of an agent's greeting: a thread
// holding a bot message with it was greeted.
const GreetingBlockID = "greeting"

// typing that command.
func Greeting(g *engine.Greeting) (md string, tail []slack.Block) {
	var sb strings.Builder
	sb.WriteString(g.Intro)
	sb.WriteString("\n")
	for i, it := range g.Menu {
		fmt.Fprintf(&sb, "\n%d. `%s`", i+1, Command(it))
		if it.Description != "" {
			sb.WriteString(" — " + it.Description)
		}
	}
	if more := g.MoreLine(); more != "" {
		sb.WriteString("\n\n" + more) // a collection's first items, and a count
	}
	var buttons []slack.BlockElement
	for i, it := range g.Menu[:min(len(g.Menu), MaxPickerButtons)] {
		label := ButtonLabel(Command(it), "")
		if (it.Skill != "" || it.Prompt != "") && it.Description != "" {
			// Skill-format items show their code and what they do.
			label = ButtonLabel(Command(it)+" · "+it.Description, "")
		}
		buttons = append(buttons, slack.NewButtonBlockElement(fmt.Sprintf("%s:%d", ActionMenu, i), Command(it),
			slack.NewTextBlockObject(slack.PlainTextType, label, true, false)))
	}
	tail = append(actionBlocks("menu", buttons),
		hint(GreetingBlockID, "Click a button, type a number or a command, or just say what you need."))
	return sb.String(), tail
}

// Command is the text a menu button types: "*brief".
func Command(it catalog.MenuItem) string {
	if it.Trigger != "" {
		return "*" + it.Trigger
	}
	return it.Cmd
}

// Picker asks user which agent should take the thread: the first
// MaxPickerButtons agents as buttons (told apart where personas repeat),
// a count of the others, and a tip.
func Picker(agents []*catalog.Agent, user string) []slack.Block {
	var buttons []slack.BlockElement
	labels := AgentLabels(agents)
	for i, a := range agents[:min(len(agents), MaxPickerButtons)] {
		buttons = append(buttons, slack.NewButtonBlockElement(ActionPick+":"+a.ID, a.ID,
			slack.NewTextBlockObject(slack.PlainTextType, labels[i], true, false)))
	}
	ask := fmt.Sprintf("Hi <@%s>! %s", user, PickerQuestion)
	if n := len(agents) - len(buttons); n > 0 {
		ask += fmt.Sprintf(" (%d more: `/agent list` names them all, and `use <id>` picks any.)", n)
	}
	blocks := append([]slack.Block{slackmd.Block(ask)}, actionBlocks("pick", buttons)...)
	return append(blocks, hint("hint", "Tip: `/agent use &lt;id&gt;` makes an agent this channel's default, so threads start right away."))
}

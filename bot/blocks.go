package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine"
	"agentbot/engine/catalog"
)

// Action ids of the bot's buttons.
const (
	actionMenu = "menu" // a menu item of the thread's agent; value: the command
	actionPick = "pick" // an agent in the picker; value: the agent id
)

// maxButtons is how many buttons one actions block holds.
const maxButtons = 25

// postGreeting posts an agent's greeting with its menu as buttons. Clicking
// a button is the same as typing that command.
func (b *Bot) postGreeting(ctx context.Context, channel, thread string, a *catalog.Agent, g *engine.Greeting) {
	var md strings.Builder
	md.WriteString(g.Intro)
	md.WriteString("\n")
	for i, it := range g.Menu {
		fmt.Fprintf(&md, "\n%d. `%s`", i+1, command(it))
		if it.Description != "" {
			md.WriteString(" — " + it.Description)
		}
	}
	if more := g.MoreLine(); more != "" {
		md.WriteString("\n\n" + more) // a collection's first items, and a count
	}
	var blocks []slack.Block
	var buttons []slack.BlockElement
	for i, it := range g.Menu[:min(len(g.Menu), maxPickerButtons)] {
		label := buttonLabel(command(it), "")
		if (it.Skill != "" || it.Prompt != "") && it.Description != "" {
			// Skill-format items show their code and what they do.
			label = buttonLabel(command(it)+" · "+it.Description, "")
		}
		btn := slack.NewButtonBlockElement(fmt.Sprintf("%s:%d", actionMenu, i), command(it), slack.NewTextBlockObject(slack.PlainTextType, label, true, false))
		buttons = append(buttons, btn)
	}
	for i := 0; i < len(buttons); i += maxButtons {
		end := min(i+maxButtons, len(buttons))
		blocks = append(blocks, slack.NewActionBlock(fmt.Sprintf("menu-%d", i/maxButtons), buttons[i:end]...))
	}
	blocks = append(blocks, slack.NewContextBlock("hint", slack.NewTextBlockObject(slack.MarkdownType,
		"Click a button, type a number or a command, or just say what you need.", false, false)))
	// A long menu is split over messages to stay within Slack's limits.
	if err := b.postMarkdownWith(ctx, channel, thread, md.String(), "Pick from the menu:", blocks); err != nil {
		b.log.Error("post greeting", "agent", a.ID, "err", err)
	}
}

// command is the text a menu button types: "*brief".
func command(it catalog.MenuItem) string {
	if it.Trigger != "" {
		return "*" + it.Trigger
	}
	return it.Cmd
}

// postPicker asks which agent should take the thread.
func (b *Bot) postPicker(ctx context.Context, it item) {
	agents := b.cfg.Catalog().EntryPoints()
	if len(agents) == 0 {
		b.post(ctx, it.Channel, it.ThreadTS, "⚠️ No agents are loaded. An admin can check with `agentbot agents`.")
		return
	}
	var buttons []slack.BlockElement
	labels := agentLabels(agents) // told apart where personas repeat
	for i, a := range agents[:min(len(agents), maxPickerButtons)] {
		buttons = append(buttons, slack.NewButtonBlockElement(actionPick+":"+a.ID, a.ID,
			slack.NewTextBlockObject(slack.PlainTextType, labels[i], true, false)))
	}
	ask := fmt.Sprintf("Hi <@%s>! Which agent should help in this thread?", it.User)
	if n := len(agents) - len(buttons); n > 0 {
		ask += fmt.Sprintf(" (%d more: `/agent list` names them all, and `use <id>` picks any.)", n)
	}
	blocks := []slack.Block{slackmd.Block(ask)}
	for i := 0; i < len(buttons); i += maxButtons {
		end := min(i+maxButtons, len(buttons))
		blocks = append(blocks, slack.NewActionBlock(fmt.Sprintf("pick-%d", i/maxButtons), buttons[i:end]...))
	}
	blocks = append(blocks, slack.NewContextBlock("hint", slack.NewTextBlockObject(slack.MarkdownType,
		"Tip: `/agent use &lt;id&gt;` makes an agent this channel's default, so threads start right away.", false, false)))
	if _, err := b.postMsg(ctx, it.Channel, it.ThreadTS, slack.MsgOptionText("Which agent should help in this thread?", false), slack.MsgOptionBlocks(blocks...)); err != nil {
		b.log.Error("post picker", "err", err)
		b.post(ctx, it.Channel, it.ThreadTS, "Which agent should help in this thread? Say `use <id>`: "+b.agentList())
	}
}

// closePicker replaces the picker's buttons with who picked what.
func (b *Bot) closePicker(ctx context.Context, it item) {
	name := it.AgentID
	if a, ok := b.findAgent(it.AgentID); ok {
		name = strings.TrimSpace(a.Icon + " " + a.Name)
	}
	text := fmt.Sprintf("<@%s> picked %s.", it.User, name)
	if err := b.update(ctx, it.Channel, it.PickerTS, slack.MsgOptionText(slackmd.EscapeText(text), false), slack.MsgOptionBlocks(slackmd.Block(text))); err != nil {
		b.log.Debug("close picker", "err", err)
	}
}

package bot

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/bot/view"
	"agentbot/engine"
	"agentbot/engine/catalog"
)

// Action ids of the bot's buttons (bot/view builds them).
const (
	actionMenu = view.ActionMenu
	actionPick = view.ActionPick
	actionHome = view.ActionHome
	actionBind = view.ActionBind
)

// postGreeting posts an agent's greeting with its menu as buttons
// (view.Greeting), under the agent's name and icon as its answers are
// (agentAuthor); a long menu is split over messages.
func (b *core) postGreeting(ctx context.Context, channel, thread string, a *catalog.Agent, g *engine.Greeting) {
	md, tail := view.Greeting(g)
	if err := b.postMarkdownWith(ctx, channel, thread, agentAuthor(a), md, view.MenuNote, tail); err != nil {
		b.log.Error("post greeting", "agent", a.ID, "err", err)
	}
}

// postPicker asks which agent should take the thread (view.Picker).
func (b *core) postPicker(ctx context.Context, it item) {
	agents := b.cfg.Catalog().EntryPoints()
	if len(agents) == 0 {
		b.post(ctx, it.Channel, it.ThreadTS, "⚠️ No agents are loaded. An admin can check with `agentbot agents`.")
		return
	}
	if _, err := b.postMsg(ctx, it.Channel, it.ThreadTS, slack.MsgOptionText(view.PickerQuestion, false), slack.MsgOptionBlocks(view.Picker(agents, it.User)...)); err != nil {
		b.log.Error("post picker", "err", err)
		b.post(ctx, it.Channel, it.ThreadTS, view.PickerQuestion+" Say `use <id>`: "+b.agentList())
	}
}

// closePicker replaces the picker's buttons with who picked what.
func (b *core) closePicker(ctx context.Context, it item) {
	name := it.AgentID
	if a, ok := b.findAgent(it.AgentID); ok {
		name = view.AgentName(a)
	}
	text := fmt.Sprintf("<@%s> picked %s.", it.User, name)
	if err := b.update(ctx, it.Channel, it.PickerTS, slack.MsgOptionText(slackmd.EscapeText(text), false), slack.MsgOptionBlocks(slackmd.Block(text))); err != nil {
		b.log.Debug("close picker", "err", err)
	}
}

// agentList lists the agents people can pick (view.AgentList).
func (b *core) agentList() string { return view.AgentList(b.cfg.Catalog().EntryPoints()) }

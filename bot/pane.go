package bot

import (
	"context"
	"errors"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/access"
	"agentbot/bot/slackmd"
	"agentbot/bot/view"
	"agentbot/engine"
	"agentbot/storage"
)

// onAppHomeOpened greets a user who opens the agent's DM pane (the
// messages tab), once a day, and offers up to four suggested prompts: the
// menu of the DM's default agent, or else the agents to pick from.
func (b *home) onAppHomeOpened(ctx context.Context, team string, e *slackevents.AppHomeOpenedEvent) {
	if !b.may(ctx, e.User, access.Home, in(team, "")).OK {
		return // someone the allowlist leaves out sees neither
	}
	if e.Tab == "home" {
		b.refreshHome(ctx, e.User)
		return
	}
	if e.Tab != "messages" || e.Channel == "" || e.User == "" {
		return
	}
	day := time.Now().UTC().Format("2006-01-02")
	if last, _ := b.paneGreeted.Swap(teamUser{team, e.User}, day); last == day {
		return
	}
	title, prompts := b.suggestedPrompts(ctx, team, e.Channel)
	if _, err := b.postMsg(ctx, e.Channel, "", slack.MsgOptionText(slackmd.EscapeText(title), false)); err != nil {
		b.log.Debug("agent pane greeting", "err", err)
		return
	}
	if len(prompts) == 0 {
		return
	}
	// No thread_ts: for an agent app (agent_view) it "will cause the call to
	// silently fail"; without it the prompts go with the latest message
	// (https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts).
	err := b.api(ctx).SetAssistantThreadsSuggestedPromptsContext(ctx, slack.AssistantThreadsSetSuggestedPromptsParameters{
		ChannelID: e.Channel, Title: "Try one of these", Prompts: prompts})
	if err != nil && !b.web().Refused("assistant.threads.setSuggestedPrompts", err) {
		b.log.Debug("suggested prompts", "err", err)
	}
}

// suggestedPrompts returns the pane's greeting and prompts for a DM: the
// menu of its default agent, or else the agents to pick from.
func (b *home) suggestedPrompts(ctx context.Context, team, channel string) (string, []slack.AssistantThreadsPrompt) {
	def, _ := storage.ChannelDefault(ctx, b.cfg.Store, team, channel)
	if a, ok := b.findAgent(def); ok {
		return view.AgentPrompts(a)
	}
	return view.PickPrompts(b.cfg.Catalog().EntryPoints())
}

// onAppContextChanged records the channel a user is looking at while the
// agent pane is open, so a turn can tell the agent.
func (b *home) onAppContextChanged(team string, e *slackevents.AppContextChangedEvent) {
	for _, ent := range e.Context.Entities {
		if ent.Type == slackevents.AppContextEntityChannel && ent.Value != "" {
			b.contexts.Put(teamUser{team, e.User}, ent.Value)
			return
		}
	}
}

// userContext returns the channel a user last looked at with the agent
// pane open, or "".
func (b *core) userContext(team, user string) string {
	v, _ := b.contexts.Get(teamUser{team, user})
	return v
}

// setTitle names a session after its agent and, once one runs, its
// workflow: a DM's assistant thread, or a channel thread's agent session.
func (b *core) setTitle(ctx context.Context, it item, s *engine.Session) {
	if s.AgentDef == nil {
		return
	}
	title := view.SessionTitle(s.AgentDef, s.Skill)
	method, err := "assistant.threads.setTitle", error(nil)
	if it.DM {
		err = b.api(ctx).SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{
			ChannelID: it.Channel, ThreadTS: it.ThreadTS, Title: title})
	} else {
		method, err = b.titleAgentSession(ctx, it, title)
	}
	if err != nil && !b.web().Refused(method, err) {
		b.log.Debug("session title", "method", method, "err", err)
	}
}

// titleAgentSession names a channel thread's agent session: with
// agents.sessions.rename (slackapi/java-slack-sdk#1633) when it exists,
// else with the agents.sessions.setStatus that creates it, whose title
// is used only then ("only used when creating a new session", the
// method's title argument); a rename before that is session_not_found.
// It returns the method that answered last.
func (b *core) titleAgentSession(ctx context.Context, it item, title string) (string, error) {
	_, err := b.api(ctx).RenameAgentSessionContext(ctx, slack.AgentSessionRenameParameters{
		ChannelID: it.Channel, ThreadTS: it.ThreadTS, Title: title})
	if e, ok := errors.AsType[slack.SlackErrorResponse](err); !ok || e.Err != sessionNotFound {
		return "agents.sessions.rename", err
	}
	_, err = b.api(ctx).SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{
		Status: slack.AgentSessionStatusActive, ChannelID: it.Channel, ThreadTS: it.ThreadTS, Title: title, InitiatorUserID: it.User})
	return "agents.sessions.setStatus", err
}

// sessionNotFound is agents.sessions.rename's error for a thread whose
// agent session does not exist yet.
const sessionNotFound = "session_not_found"

// teamUser names a user of a workspace (the key of core.contexts and
// home.paneGreeted).
type teamUser struct{ team, user string }

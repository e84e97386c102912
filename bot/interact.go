package bot

import (
	"cmp"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/access"
	"agentbot/bot/view"
	"agentbot/bot/workspace"
)

// click is one button click, as its handler reads it.
type click struct {
	team, channel, thread string
	// messageTS is the message the button is on.
	messageTS, user string
	// kind is the action id before ":" (the handler's key), value the
	// button's value.
	kind, value string
	dm          bool
	// dedupe is the click's dedupe key (clickDedupe), none when Slack
	// sent nothing that names the click.
	dedupe []string
	// at is when the person clicked, by Slack's clock (action_ts).
	at string
	// onBotRequest: the button sits on a message the bot posted (the
	// payload's message), not on someone else's.
	onBotRequest bool
	// state is the message's inputs (a question's form); responseURL
	// answers the click in place.
	state       *slack.BlockActionStates
	responseURL string
}

// clickHandlers handle a click by its kind; each reports whether ack was
// handed on, to be called once the click's item is persisted.
var clickHandlers = map[string]func(b *intake, c click, ack func()) bool{
	actionStop: func(b *intake, c click, _ func()) bool {
		b.onStopClick(c.team, c.channel, c.thread, c.user, c.dm)
		return false
	},
	view.ActionApprove:        (*intake).onApprovalButton,
	view.ActionDeny:           (*intake).onApprovalButton,
	actionFeedback:            (*intake).onFeedbackButton,
	actionHome:                (*intake).onHomeButton, // the Home tab has no channel
	actionBind:                func(b *intake, c click, _ func()) bool { return b.slash.onBindButton(c) },
	actionMenu:                (*intake).onThreadButton,
	view.ActionConnectLink:    (*intake).onConnectLinkClick,
	view.ActionConnectDecline: (*intake).onConnectDeclineClick,
	view.ActionDisconnect:     (*intake).onDisconnectClick,
	view.ActionAnswer:         (*intake).onQuestionClick,
	view.ActionDecline:        (*intake).onQuestionClick,
	view.ActionCancel:         (*intake).onQuestionClick,
	actionPick:                (*intake).onThreadButton,
}

// onInteraction handles button clicks: a menu button types its command in
// the thread, a picker button starts the thread with that agent, a feedback
// button is stored with the session, an approval button decides a call,
// and a Stop button stops the thread's running turn. It reports whether ack
// was handed on, to be called once the click's item is persisted.
func (b *intake) onInteraction(cb slack.InteractionCallback, ack func()) bool {
	if cb.Type != slack.InteractionTypeBlockActions {
		return false
	}
	c := readClick(cb, b.teamID)
	ctx, installed := b.inWorkspace(workspace.ID{Team: c.team, Enterprise: cb.Enterprise.ID}, c.channel)
	if !installed {
		return false
	}
	me := b.self(ctx)
	c.onBotRequest = cb.Message.BotID != "" && (cb.Message.BotID == me.BotID || cb.Message.User == me.BotUserID)
	for _, act := range cb.ActionCallback.BlockActions {
		kind, _, _ := strings.Cut(act.ActionID, ":")
		if h, ok := clickHandlers[kind]; ok {
			c.kind, c.value, c.dedupe, c.at = kind, act.Value, clickDedupe(cb, act), cmp.Or(act.ActionTs, cb.ActionTs)
			return h(b, c, ack) // one action per click
		}
	}
	return false
}

// readClick reads where a click happened and who clicked.
func readClick(cb slack.InteractionCallback, defaultTeam string) click {
	c := click{channel: cb.Channel.ID, thread: cb.Container.ThreadTs, messageTS: cb.Container.MessageTs, user: cb.User.ID, team: cb.Team.ID,
		state: cb.BlockActionState, responseURL: cb.ResponseURL}
	if c.channel == "" {
		c.channel = cb.Container.ChannelID
	}
	if c.thread == "" {
		c.thread = cb.Message.ThreadTimestamp
	}
	if c.thread == "" {
		c.thread = cb.Container.MessageTs
	}
	if c.team == "" {
		// An org-wide install's payload may carry no team; the person's
		// own workspace is where they clicked.
		c.team = cb.User.TeamID
	}
	if c.team == "" {
		c.team = defaultTeam
	}
	c.dm = strings.HasPrefix(c.channel, "D")
	return c
}

// onApprovalButton handles Approve and Deny (onApprovalClick).
func (b *intake) onApprovalButton(c click, ack func()) bool {
	return b.onApprovalClick(c.team, c.channel, c.thread, c.messageTS, c.user, c.kind, c.value, c.dm, ack)
}

// onFeedbackButton handles the feedback buttons (onFeedbackClick).
func (b *intake) onFeedbackButton(c click, ack func()) bool {
	return b.onFeedbackClick(c.team, c.channel, c.thread, c.messageTS, c.user, c.value, c.dm, ack, c.dedupe...)
}

// onHomeButton handles the Home tab's buttons (startFromHome).
func (b *intake) onHomeButton(c click, ack func()) bool {
	if !b.may(b.turnCtx, c.user, access.Home, in(c.team, "")).OK {
		return false
	}
	if b.seen(c.dedupe...) {
		return false // the same click again: taken in already
	}
	return b.home.startFromHome(c.team, c.user, c.value, ack)
}

// onThreadButton queues a menu button (its command, typed in the thread)
// or a picker button (the agent picked) in the thread.
func (b *intake) onThreadButton(c click, ack func()) bool {
	if why := b.denied(c.user, c.team, c.channel); why != "" {
		b.ephemeral(c.channel, c.user, c.thread, why)
		return false
	}
	it := item{Team: c.team, Channel: c.channel, ThreadTS: c.thread, User: c.user, DM: c.dm, At: c.at}
	if c.kind == actionMenu {
		it.Kind, it.Text = kindMessage, c.value
	} else {
		it.Kind, it.AgentID, it.PickerTS = kindPick, c.value, c.messageTS
	}
	return b.enqueue(it, ack, c.dedupe...)
}

// clickDedupe is a click's dedupe key: a click admitted again (its ack
// was lost, or the inbound journal is replayed after a crash) carries the
// same payload, so the action's action_ts (or the payload's trigger_id)
// names the click. None when the payload has neither.
func clickDedupe(cb slack.InteractionCallback, act *slack.BlockAction) []string {
	id := act.ActionTs
	if id == "" {
		id = cb.ActionTs
	}
	if id == "" {
		id = cb.TriggerID
	}
	if id == "" {
		return nil
	}
	return []string{"click/" + cb.Channel.ID + "/" + cb.User.ID + "/" + act.ActionID + "/" + id}
}

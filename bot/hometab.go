package bot

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/access"
	"agentbot/bot/cache"
	"agentbot/bot/keys"
	"agentbot/bot/slackmd"
	"agentbot/bot/threadstate"
	"agentbot/bot/view"
	"agentbot/bot/workspace"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// home is the Home tab and the agent pane.
type home struct {
	*core
	// paneGreeted is the day each user was last greeted in the agent
	// pane (bounded).
	paneGreeted cache.Map[teamUser, string]
	// homeLocks holds a mutex per user, held while that user's Home tab
	// is read and published, so publishes land in the order their reads
	// were made and a stale view never replaces a newer one.
	homeLocks cache.Locks[string]
	// views counts the views being built beside the intake (beside).
	views sync.WaitGroup
}

// homeSessions is how many of a user's sessions the Home tab lists.
const homeSessions = 10

// homeScan bounds the entries of a user's person index the Home tab
// looks through for homeSessions they may still see.
const homeScan = 1000

// beside builds a view beside the intake loop, so no event's ack waits
// for the store reads and Slack calls of the Home tab or the agent pane;
// shutdown waits for it (views).
func (b *home) beside(view func()) {
	b.views.Add(1)
	go func() {
		defer b.views.Done()
		defer b.recoverPanic("home view")
		view()
	}()
}

// refreshHome publishes a user's Home tab (view.Home): the agents to
// start a DM session with, then the user's most recent sessions with their
// documents.
func (b *home) refreshHome(ctx context.Context, user string) {
	if user == "" {
		return
	}
	defer b.homeLocks.Lock(user)()
	sessions := b.recentSessions(ctx, user, homeSessions)
	rows := make([]view.HomeSession, len(sessions))
	for i, s := range sessions {
		rows[i] = homeSession(s)
	}
	blocks := view.Home(b.cfg.Catalog().EntryPoints(), rows, append(b.homeProjectBlocks(ctx, sessions), b.homeConnections(ctx, user)...))
	_, err := b.api(ctx).PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: user,
		View: slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}}})
	if err != nil && !b.web().Refused("views.publish", err) {
		b.log.Warn("publish home tab", "err", err)
	}
}

// homeSession is a session as the Home tab lists it: with what it runs
// and where its thread is.
func homeSession(s *transcript.Session) view.HomeSession {
	hs := view.HomeSession{Session: s, Workflow: activeSkill(s)}
	if hs.Workflow == "" {
		st, _ := threadstate.Of(s)
		hs.Workflow = st.Workflow
	}
	if k, ok := keys.ParseThread(s.Key); ok {
		hs.InThread, hs.Channel, hs.Thread = true, k.Channel, k.Thread
	}
	return hs
}

// recentSessions returns the user's sessions, most recent first, at most
// n: those of channels they are a member of now (access.See), so a person
// removed from a private channel no longer sees its threads or documents.
// They come from the store's person index (storage.SessionIndex), and
// only their metadata is read, never a transcript: the Home tab costs the
// same in a store of a thousand sessions or of a million.
func (b *home) recentSessions(ctx context.Context, user string, n int) []*transcript.Session {
	refs, err := b.cfg.Store.PersonSessions(ctx, user, homeScan)
	if err != nil {
		b.log.Debug("list sessions for the home tab", "err", err)
		return nil
	}
	var out []*transcript.Session
	for _, ref := range refs {
		if len(out) == n {
			break
		}
		s, err := b.cfg.Store.FindMeta(ctx, ref.Key)
		if err != nil || s == nil || s.ID != ref.ID || storage.OwnerOf(s) != user || !b.maySeeSession(ctx, user, s) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// maySeeSession asks whether user may see a Slack thread's session and
// its channel's documents now (access.See); other sessions (the
// terminal's) are not shown in Slack.
func (b *home) maySeeSession(ctx context.Context, user string, s *transcript.Session) bool {
	team, channel, ok := storage.SlackChannel(s.Key)
	if !ok || b.otherWorkspace(ctx, team) {
		return false
	}
	thing := in(team, channel)
	thing.Owner = storage.OwnerOf(s)
	return b.may(ctx, user, access.See, thing).OK
}

// startFromHome starts a DM session with an agent for a Home tab click: it
// opens the user's DM with the bot, posts the thread's first message there
// and queues the pick, so the agent greets in that thread.
func (b *home) startFromHome(team, user, agentID string, ack func()) bool {
	ctx := workspace.In(b.turnCtx, team)
	ch, _, _, err := b.api(ctx).OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}})
	if err != nil || ch == nil {
		b.log.Warn("open DM for the home tab", "err", err)
		return false
	}
	name := agentID
	if a, ok := b.findAgent(agentID); ok {
		name = view.AgentName(a)
	}
	ts, err := b.postMsg(ctx, ch.ID, "", slack.MsgOptionText(slackmd.EscapeText("Starting a session with "+name+"…"), false))
	if err != nil {
		b.log.Warn("start a session from the home tab", "err", err)
		return false
	}
	return b.enqueue(item{Kind: kindPick, Team: team, Channel: ch.ID, ThreadTS: ts, User: user, DM: true, AgentID: agentID}, ack)
}

// homeConnections are the Home tab's blocks for the person's connections
// to MCP servers, with their Disconnect buttons (none when connections
// are not enabled here, or unreadable).
func (b *home) homeConnections(ctx context.Context, user string) []slack.Block {
	if b.cfg.Connections == nil {
		return nil
	}
	mine, err := b.cfg.Connections.List(ctx, storage.CredentialFilter{User: user})
	if err != nil {
		b.log.Warn("home tab: list connections", "err", err)
		return nil
	}
	mine = slices.DeleteFunc(mine, func(c storage.CredentialInfo) bool { return b.otherWorkspace(ctx, c.Team) })
	return view.HomeConnections(mine, time.Now())
}

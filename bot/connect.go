package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/access"
	"agentbot/bot/keys"
	"agentbot/bot/threadstate"
	"agentbot/bot/view"
	"agentbot/bot/workspace"
	"agentbot/engine"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Connecting accounts (MCP authorization per person): a call of an MCP
// server whose person has not connected their account there waits with a
// connect gate (transcript.GateConnect), persisted like an approval. The
// thread gets a note everyone sees, without the link; the person alone
// gets the link, ephemerally, single-use and expiring, bound to their team
// and user id (Linker). When they finish, whichever replica serves the
// redirect calls Bot.AccountConnected, which queues a "connected" item in
// every thread waiting on that person and server; the thread's worker
// opens the gate (engine Decide, DecisionConnected) and resumes the turn.
// "Not now" declines (the call is not run and the turn goes on), and the
// approval sweep expires a gate left waiting, as it does approvals.

// Linker begins connections of people's accounts to MCP servers
// (cmd/agentbot wires the MCP connect flow).
type Linker interface {
	// ConnectLink begins a connection to server of the account of
	// (team, user), or with service of the server's service identity,
	// asked from thread (a session key; "" when none), and returns the
	// link to send that person, and that person only, to. It is valid
	// once, until LinkTTL.
	ConnectLink(ctx context.Context, team, user, server, thread string, service bool) (string, error)
	// LinkTTL is how long a link may be finished.
	LinkTTL() time.Duration
}

// kindConnected is a person's finished connection (User connected the
// server Text): the thread's calls waiting on it run.
const kindConnected itemKind = "connected"

// linkTimeout bounds the making of a connect link (discovery and
// registration at the authorization server).
const linkTimeout = 20 * time.Second

// postConnectGate posts the thread's note on connect gate a of session s,
// and sends its person the link; it returns the note's ts.
func (b *turns) postConnectGate(ctx context.Context, s *engine.Session, it item, a *transcript.Approval) (string, error) {
	ts, err := b.postMsg(ctx, it.Channel, it.ThreadTS, view.ConnectWaitMessage(s.Key, a, "")...)
	if err != nil {
		return "", err
	}
	b.sendConnectLink(ctx, s.Key, it.Channel, it.ThreadTS, a)
	return ts, nil
}

// sendConnectLink sends the person of connect gate a of the session key
// a fresh link, ephemerally in the thread.
func (b *core) sendConnectLink(ctx context.Context, key, channel, thread string, a *transcript.Approval) {
	k, _ := keys.ParseThread(key)
	msg, err := b.connectLink(ctx, k.Team, a.Person, a.Server, key, false)
	if err != nil {
		b.log.Warn("make a connect link", "server", a.Server, "err", err)
		b.ephemeral(channel, a.Person, thread, fmt.Sprintf("⚠️ I couldn't make a link to connect `%s` (%s). Try again with the button in the thread.", a.Server, shorten(err.Error(), 200)))
		return
	}
	b.ephemeralBlocks(ctx, channel, a.Person, thread, view.ConnectLinkMessage(key, a, msg, b.cfg.Linker.LinkTTL())...)
}

// connectLink makes a link, bounded by linkTimeout; an error when links
// are not enabled here.
func (b *core) connectLink(ctx context.Context, team, user, server, thread string, service bool) (string, error) {
	if b.cfg.Linker == nil {
		return "", errors.New("connecting accounts is not enabled here")
	}
	ctx, cancel := context.WithTimeout(ctx, linkTimeout)
	defer cancel()
	return b.cfg.Linker.ConnectLink(context.WithoutCancel(ctx), team, user, server, thread, service)
}

// ephemeralBlocks shows a message to one user only, in a thread.
func (b *core) ephemeralBlocks(ctx context.Context, channel, user, thread string, opts ...slack.MsgOption) {
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	ctx = b.inChannel(ctx, channel)
	err := b.call(ctx, func() error {
		_, err := b.api(ctx).PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err != nil {
		b.log.Warn("post ephemeral", "channel", channel, "err", err)
	}
}

// connectGate reads the session and connect gate a connect button names,
// telling the clicker why not when it is not theirs or waits no more.
func (b *intake) connectGate(c click) (string, *transcript.Approval, bool) {
	var v view.ApprovalValue
	if err := json.Unmarshal([]byte(c.value), &v); err != nil {
		b.log.Warn("connect click with a bad value", "channel", c.channel)
		return "", nil, false
	}
	k, ok := keys.ParseThread(v.Key)
	if !ok || k.Team != c.team || k.Channel != c.channel {
		b.ephemeral(c.channel, c.user, c.thread, "⚠️ This button doesn't belong to this thread.")
		return "", nil, false
	}
	rec, err := b.cfg.Store.FindMeta(b.turnCtx, v.Key)
	if err != nil {
		b.log.Error("load session for a connect click", "err", err)
		b.ephemeral(c.channel, c.user, k.Thread, "⚠️ I couldn't open this thread's session. Please click again in a moment.")
		return "", nil, false
	}
	a := findApproval(rec, v.Call)
	switch {
	case a == nil || a.Kind != transcript.GateConnect || a.Decision != "":
		b.ephemeral(c.channel, c.user, k.Thread, "This call isn't waiting for a connection any more.")
		return "", nil, false
	case a.Person != c.user:
		// Only the person the call acts as connects: nobody can connect
		// an account for someone else, or decline for them.
		b.ephemeral(c.channel, c.user, k.Thread, fmt.Sprintf("Only <@%s> can connect their own account at `%s`; the call acts as them.", a.Person, a.Server))
		return "", nil, false
	}
	return v.Key, a, true
}

// allowedGate is connectGate for a clicker the bot serves here (denied
// says why not, ephemerally), with the gate's thread.
func (b *intake) allowedGate(c click) (string, keys.Thread, *transcript.Approval, bool) {
	if why := b.denied(c.user, c.team, c.channel); why != "" {
		b.ephemeral(c.channel, c.user, c.thread, why)
		return "", keys.Thread{}, nil, false
	}
	key, a, ok := b.connectGate(c)
	if !ok {
		return "", keys.Thread{}, nil, false
	}
	k, _ := keys.ParseThread(key)
	return key, k, a, true
}

// onConnectLinkClick sends the person of a connect gate a fresh link (the
// ephemeral one may be gone); anyone else is told whose it is.
func (b *intake) onConnectLinkClick(c click, _ func()) bool {
	key, k, a, ok := b.allowedGate(c)
	if ok {
		b.sendConnectLink(b.turnCtx, key, c.channel, k.Thread, a)
	}
	return false
}

// onConnectDeclineClick queues the person's "Not now" on their connect
// gate in its thread, as a denial.
func (b *intake) onConnectDeclineClick(c click, ack func()) bool {
	key, k, a, ok := b.allowedGate(c)
	if !ok {
		return false
	}
	it := item{Kind: kindApproval, Team: k.Team, Channel: k.Channel, ThreadTS: k.Thread, User: c.user,
		Text: transcript.DecisionDenied, CallID: a.CallID, DM: k.DM()}
	return b.enqueue(it, ack, keys.Approval(key, a.CallID))
}

// AccountConnected is told that a person (team, user) connected their
// account at server, from the thread from (a session key, or ""): it
// queues a "connected" item in that thread and in every other thread
// whose calls wait on that person and server, so they run. Any replica
// may be told: the items are durable, and the thread's lease holder
// handles them.
func (b *Bot) AccountConnected(team, user, server, from string) {
	c := b.c
	threads := map[string]bool{}
	if from != "" {
		threads[from] = true
	}
	waiting, err := c.cfg.Store.WaitingSessions(c.turnCtx)
	if err != nil {
		c.log.Error("connected: list the waiting sessions", "err", err)
	}
	for _, key := range waiting {
		rec, err := c.cfg.Store.FindMeta(c.turnCtx, key)
		if err == nil && rec != nil && waitsOn(rec, user, server) {
			threads[rec.Key] = true
		}
	}
	for key := range threads {
		k, ok := keys.ParseThread(key)
		if !ok || k.Team != team {
			continue // never another team's thread
		}
		it := item{Kind: kindConnected, Team: k.Team, Channel: k.Channel, ThreadTS: k.Thread, User: user, Text: server, DM: k.DM()}
		c.enqueue(it, func() {})
	}
}

// waitsOn reports whether a call of s waits for user to connect server.
func waitsOn(s *transcript.Session, user, server string) bool {
	return slices.ContainsFunc(s.Pending, func(a transcript.Approval) bool {
		return a.Kind == transcript.GateConnect && a.Decision == "" && a.Person == user && a.Server == server
	})
}

// onConnected opens the thread's connect gates of the person and server
// (kindConnected): each call runs, or waits for approval when its tool
// asks; the notes say so, and the turn resumes once nothing waits.
func (b *threadHandlers) onConnected(ctx context.Context, j *job) {
	c, it := j.c, j.it
	s := c.Live
	var opened []string
	for _, a := range s.Pending {
		if a.Kind == transcript.GateConnect && a.Decision == "" && a.Person == it.User && a.Server == it.Text {
			opened = append(opened, a.CallID)
		}
	}
	if len(opened) == 0 {
		return // declined, expired or superseded meanwhile, or a replay
	}
	b.setState(s, func(st *threadstate.State) { st.Seq = j.seq })
	posted := b.state(s).Approvals
	for _, id := range opened {
		if err := c.Decide(ctx, id, transcript.DecisionConnected, it.User); err != nil {
			b.log.Error("record a connection", "session", s.ID, "err", err)
			return
		}
		a := findApproval(&s.Session, id)
		line := view.DecisionLine(a)
		if a.Decision == "" {
			line = view.ConnectedLine(a) // now it waits for approval: a new message asks
		}
		if ts := posted[id]; ts != "" {
			if err := b.update(ctx, it.Channel, ts, view.ConnectWaitMessage(s.Key, a, line)...); err != nil {
				b.log.Warn("update connect note", "err", err)
			}
		}
		if a.Decision == "" {
			delete(posted, id)
		}
	}
	b.log.Info("account connected; calls resume", "session", s.ID, "server", it.Text, "calls", len(opened))
	b.turns.saveApprovalMessages(ctx, s, posted)
	if und := undecided(s); len(und) > 0 {
		b.turns.postApprovals(ctx, s, it, und)
		return
	}
	b.resumeDecided(ctx, c, it)
}

// resumeDecided resumes the turn of a thread whose calls are all decided:
// it streams to the thread's owner and acts as the person whose message
// started it (the engine keeps who); then the messages kept meanwhile
// are answered.
func (b *threadHandlers) resumeDecided(ctx context.Context, c *engine.Conversation, it item) {
	if len(undecided(c.Live)) > 0 {
		return
	}
	turn := it
	turn.User = b.ownerOf(c, it)
	b.turns.runTurn(ctx, c, turn, "")
	b.answerDeferred(ctx, c)
}

// slashConnect sends the person a link to connect their account at a
// server ahead of time (/agent connect SERVER), or an admin the link to
// connect its service identity (--service).
func (b *slash) slashConnect(cmd slack.SlashCommand, team string, args []string) {
	if b.cfg.Linker == nil {
		b.respond(cmd, connectionsOff)
		return
	}
	if len(args) == 0 {
		b.respond(cmd, "Which server? `/agent connect <server>`. "+b.knownServers())
		return
	}
	server, user := args[0], cmd.UserID
	service := slices.Contains(args[1:], "--service")
	if service {
		if why := b.notAdmin(cmd, team); why != "" {
			b.respond(cmd, why)
			return
		}
		user = storage.ServiceUser
	}
	if !slices.Contains(b.cfg.MCPServers, server) {
		b.respond(cmd, fmt.Sprintf("There is no MCP server `%s` in the MCP configuration. %s", shorten(server, 100), b.knownServers()))
		return
	}
	link, err := b.connectLink(b.turnCtx, team, user, server, "", service)
	if err != nil {
		b.log.Warn("make a connect link", "server", server, "err", err)
		b.respond(cmd, fmt.Sprintf("⚠️ I couldn't make a link to connect `%s`: %s", server, shorten(err.Error(), 300)))
		return
	}
	b.ephemeralBlocks(b.turnCtx, cmd.ChannelID, cmd.UserID, "", view.ServiceLinkMessage(server, link, service, b.cfg.Linker.LinkTTL())...)
}

// onDisconnectClick ends one of the person's connections from the Home
// tab (its Disconnect button; the value is the server), beside the intake
// since the revocation may be slow, then shows the Home tab again.
func (b *intake) onDisconnectClick(c click, _ func()) bool {
	if b.cfg.Connections == nil || !b.may(b.turnCtx, c.user, access.Home, in(c.team, "")).OK || b.seen(c.dedupe...) {
		return false
	}
	b.slashes.Add(1)
	go func() {
		defer b.slashes.Done()
		defer b.recoverPanic("disconnect")
		msg := b.disconnect(b.turnCtx, c.team, c.user, c.value, false)
		b.log.Info("disconnect from the home tab", "server", c.value, "user", c.user, "outcome", msg)
		b.home.refreshHome(workspace.In(b.turnCtx, c.team), c.user) // the connection is gone from it, or still there on a failure
	}()
	return false
}

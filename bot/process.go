package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/greeting"
	"agentbot/bot/threadstate"
	"agentbot/bot/threadwork"
	"agentbot/bot/view"
	"agentbot/bot/webapi"
	"agentbot/bot/workspace"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// threadHandlers handle the queued items of threads, one handler per kind
// (itemHandlers), under the thread's lease.
type threadHandlers struct {
	*core
	turns *turns
}

// upperFirst capitalizes the first letter of an ASCII sentence.
func upperFirst(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// The bot's store holds what a thread's conversation needs (Engine.Open).
var _ engine.SessionStore = Store(nil)

// queued is the handler of the threads' queued items
// (threadwork.Handler).
type queued struct{ h *threadHandlers }

// Handle handles one queued item of a thread with its kind's handler; ctx
// ends at shutdown or when the thread's lease is lost. An item of a kind
// that opens the thread's conversation is marked posted once handled.
func (q queued) Handle(ctx context.Context, _ string, seq uint64, payload []byte) bool {
	b := q.h
	var it item
	if err := json.Unmarshal(payload, &it); err != nil {
		b.log.Error("drop unreadable queued item", "seq", seq, "err", err)
		return false
	}
	h, ok := itemHandlers[it.Kind]
	if !ok {
		b.log.Error("drop a queued item of an unknown kind", "kind", it.Kind, "seq", seq)
		return false
	}
	ctx = workspace.With(ctx, it.workspace()) // answered with its workspace's token
	b.learnChannel(it.Channel, it.workspace())
	j := &job{it: it, seq: seq}
	if h.conversation {
		if j.c = b.open(ctx, it); j.c == nil {
			return true
		}
		b.greetOwed(ctx, j.c, it)
		if b.replayed(ctx, j) {
			return true
		}
		if b.admitGap(ctx, j) {
			return false // the messages before it go first; it stays queued
		}
	}
	h.handle(b, ctx, j)
	return h.conversation
}

// open opens the conversation of the item's thread. When its agent is
// gone, "use <agent>" and "reset" move the thread to a fresh session (the
// old one is kept, detached) and anything else is told how to go on; then,
// as on a failure, it returns nil.
func (b *threadHandlers) open(ctx context.Context, it item) *engine.Conversation {
	c, err := b.cfg.Engine.Open(ctx, b.cfg.Store, it.thread().String())
	var gone *engine.AgentGoneError
	switch {
	case errors.As(err, &gone):
		if cmd, arg := parseThreadCommand(it.Text); it.Kind == kindMessage && (cmd == "use" || cmd == "reset") {
			b.switchAgent(ctx, c, it, arg)
			return nil
		}
		b.log.Warn("session's agent is gone", "session", gone.SessionID, "agent", gone.AgentID)
		b.post(ctx, it.Channel, it.ThreadTS, "⚠️ "+upperFirst(gone.Error())+" (or say `use <agent>` here).")
		return nil
	case err != nil && threadwork.RetryLater(ctx, err):
		b.log.Error("load session; the message stays queued", "err", err)
		return nil
	case err != nil:
		b.log.Error("load session", "err", err)
		b.post(ctx, it.Channel, it.ThreadTS, "⚠️ I couldn't open this thread's session. Please try again in a moment.")
		return nil
	}
	return c
}

// replayed handles an item seen before a crash (threadwork.ReplayOf), and
// reports whether it did: one handled and posted, whose dequeue alone was
// lost, is skipped; one whose turn started resumes that turn (its input is
// in the transcript already) instead of repeating it; before one that came
// late, a later message its turn stored is answered first (answerStored).
func (b *threadHandlers) replayed(ctx context.Context, j *job) bool {
	st := b.state(j.c.Live)
	switch threadwork.ReplayOf(st, j.seq, j.c.Live.AgentDef != nil, &j.c.Live.Session) {
	case threadwork.Skip:
		return true
	case threadwork.Resume:
		b.turns.runTurn(ctx, j.c, j.it, "")
		return true
	case threadwork.StoredFirst:
		return !b.answerStored(ctx, j, st)
	}
	return false
}

// answerStored answers first the message of a later item whose turn stored
// it in the transcript and then failed (the item stays queued), when
// another item, an earlier message that came late, goes before it: the
// turn resumes, so the transcript holds that message once, answered where
// it stands, and the late message's answer says it came late (lateNote).
// The later item is skipped when the queue reaches it (threadwork.NoteEarly).
// It reports whether j may go on: not when the resumed turn could not be
// stored, and j waits, queued, for the store.
func (b *threadHandlers) answerStored(ctx context.Context, j *job, st threadstate.State) bool {
	s := j.c.Live
	var stored item
	if err := json.Unmarshal(st.Input.Item, &stored); err != nil {
		b.log.Warn("thread state: the stored message's item does not read", "session", s.ID, "err", err)
		return true
	}
	b.log.Info("answer a stored message before one that came late", "session", s.ID, "seq", st.Seq, "late", j.seq)
	b.turns.runTurn(ctx, j.c, stored, "")
	if threadwork.Kept(ctx) {
		return false
	}
	if !j.c.Failed() {
		b.setState(s, func(ts *threadstate.State) { threadwork.NoteEarly(ts, st.Seq) })
		b.saveSession(ctx, s, "note the message answered ahead of its turn")
	}
	return true
}

// onMessage handles a message (or a menu button) in a thread: a thread
// command, the start of the session, or a turn.
func (b *threadHandlers) onMessage(ctx context.Context, j *job) {
	if b.deferWhileWaiting(ctx, j) {
		return
	}
	defer b.answerDeferred(ctx, j.c)
	if b.threadCommand(ctx, j) {
		return
	}
	if j.c.Live.AgentDef == nil && !b.startDefault(ctx, j) {
		return
	}
	input, ok := b.turnInput(ctx, j)
	if !ok {
		return
	}
	b.setState(j.c.Live, func(st *threadstate.State) { st.Seq, st.Input = j.seq, inputOf(j) })
	b.turns.runTurn(ctx, j.c, j.it, input)
}

// threadCommand handles "use <agent>", "reset" and "status" typed in the
// thread, unless the agent's menu has an item of that name; it reports
// whether it did.
func (b *threadHandlers) threadCommand(ctx context.Context, j *job) bool {
	c, it := j.c, j.it
	cmd, arg := parseThreadCommand(it.Text)
	if cmd == "" || (c.Live.AgentDef != nil && isMenuPick(c.Live, it.Text)) {
		return false
	}
	switch {
	case cmd == "use":
		b.switchAgent(ctx, c, it, arg)
	case cmd == "reset":
		b.switchAgent(ctx, c, it, "")
	case cmd == "status" && c.Live.AgentDef != nil:
		b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("This thread talks to %s: %s.", c.Live.AgentDef.Name, b.cfg.Engine.Budgets().Status(c.Live)))
	default:
		return false
	}
	return true
}

// startDefault starts a session without an agent with the channel's
// default agent; without one, the message waits for the picker. It
// reports whether the message goes on to a turn (a bare mention or a
// hello is answered by the greeting).
func (b *threadHandlers) startDefault(ctx context.Context, j *job) bool {
	it := j.it
	agentID, err := storage.ChannelDefault(ctx, b.cfg.Store, it.Team, it.Channel)
	if err != nil && threadwork.Keep(ctx) {
		// Not knowing the default is not knowing there is none: the
		// message waits for the store, not for the picker.
		b.log.Warn("read the channel's default agent; the message stays queued", "err", err)
		return false
	}
	a, ok := b.findAgent(agentID)
	if !ok {
		if it.Text != "" {
			// Every message written while the picker waits is kept.
			b.setState(j.c.Live, func(st *threadstate.State) {
				if st.Pending != "" {
					st.Pending += "\n\n"
				}
				st.Pending += it.Text
				if st.Owner == "" {
					st.Owner = it.User // who started the thread owns it, whoever picks the agent
				}
			})
			b.saveSession(ctx, j.c.Live, "keep the message waiting for the picker")
		}
		b.postPicker(ctx, it)
		return false
	}
	if !b.activate(ctx, j.c, a, it) {
		return false
	}
	return len(it.Files) > 0 || (it.Text != "" && !greeting.Only(it.Text, a.Name))
}

// turnInput is what the model reads of the message: the files shared
// with it, where the user looks (in a DM), and who writes when it is not
// the session's owner. A bare mention, a hello or *help shows the menu
// again, with its buttons, without a model call: then it reports false.
func (b *threadHandlers) turnInput(ctx context.Context, j *job) (string, bool) {
	s, it := j.c.Live, j.it
	input := it.Text
	if len(it.Files) > 0 {
		input = b.fetchFiles(ctx, s, it) + input
	}
	if input == "" || isHelp(s, input) || (len(it.Files) == 0 && greeting.Only(input, s.AgentDef.Name)) {
		b.postGreeting(ctx, it.Channel, it.ThreadTS, s.AgentDef, b.cfg.Engine.Greet(s))
		return "", false
	}
	if isMenuPick(s, input) {
		return input, true // a menu pick is the agent's command, as typed
	}
	if it.DM {
		if c := b.userContext(it.Team, it.User); c != "" {
			input = "(Slack context: the user is looking at channel <#" + c + ">.)\n" + input
		}
	}
	// In a party the engine names every person in the room (engine.roomMessage).
	if owner := b.state(j.c.Live).Owner; owner != "" && it.User != "" && it.User != owner && !partyActive(j.c.Live) {
		name := b.userName(ctx, it.User)
		if name == "" {
			name = "<@" + it.User + ">"
		}
		input = fmt.Sprintf("(%s, another person in this thread, writes:) %s", name, input)
	}
	return input, true
}

// activate starts a session with an agent and posts its greeting.
func (b *threadHandlers) activate(ctx context.Context, c *engine.Conversation, a *catalog.Agent, it item) bool {
	name := b.userName(ctx, it.User)
	g, err := c.Start(ctx, a, func(s *engine.Session) {
		if name != "" {
			s.Vars = map[string]string{"user_name": name}
		}
		b.setState(s, func(st *threadstate.State) {
			if st.Owner == "" {
				st.Owner = it.User // the thread's starter; picking an agent never changes it
			}
			st.Greet = a.ID // owed until posted (greetOwed)
		})
		if tc := b.threadContext(ctx, &s.Session, it); tc != "" {
			s.Handoff = strings.TrimSpace(s.Handoff + "\n\n" + tc)
		}
	})
	if err != nil && threadwork.RetryLater(ctx, err) {
		b.log.Warn("activate agent; the message stays queued", "agent", a.ID, "err", err)
		return false
	}
	if err != nil {
		b.log.Warn("activate agent", "agent", a.ID, "err", err)
		b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("⚠️ %s can't start here: %v", a.Name, err))
		return false
	}
	b.setTitle(ctx, it, c.Live)
	b.postGreeting(ctx, it.Channel, it.ThreadTS, a, g)
	b.greeted(ctx, c.Live)
	return true
}

// greeted notes that the greeting the activation owed is posted.
func (b *threadHandlers) greeted(ctx context.Context, s *engine.Session) {
	b.setState(s, func(st *threadstate.State) { st.Greet = "" })
	b.saveSession(ctx, s, "note the greeting posted")
}

// greetOwed posts the greeting an activation owes the thread (its run
// died between storing the activation and posting the greeting, or
// before it noted it posted), unless the thread shows it already.
func (b *threadHandlers) greetOwed(ctx context.Context, c *engine.Conversation, it item) {
	if b.state(c.Live).Greet == "" || c.Live.AgentDef == nil {
		return
	}
	msgs, err := webapi.Replies(ctx, b.web(), it.Channel, it.ThreadTS)
	if err != nil {
		b.log.Warn("look for the owed greeting", "err", err) // the next item looks again
		return
	}
	me := b.self(ctx)
	if !slices.ContainsFunc(msgs, func(m slack.Message) bool { return isGreeting(me, m) }) {
		b.postGreeting(ctx, it.Channel, it.ThreadTS, c.Live.AgentDef, b.cfg.Engine.Greet(c.Live))
	}
	b.greeted(ctx, c.Live)
}

// isGreeting reports whether m is an agent's greeting the bot (me)
// posted.
func isGreeting(me workspace.Client, m slack.Message) bool {
	if m.User != me.BotUserID && (m.BotID == "" || m.BotID != me.BotID) {
		return false
	}
	return slices.ContainsFunc(m.Blocks.BlockSet, func(bl slack.Block) bool { return bl.ID() == view.GreetingBlockID })
}

// onPick starts the thread's session with the agent chosen in the
// picker, then runs the messages that waited for it.
func (b *threadHandlers) onPick(ctx context.Context, j *job) {
	c, it := j.c, j.it
	if it.PickerTS != "" {
		b.closePicker(ctx, it)
	}
	if c.Live.AgentDef != nil {
		b.ephemeral(it.Channel, it.User, it.ThreadTS, fmt.Sprintf("This thread already talks to %s. To switch, write `@%s use <agent>` here.", c.Live.AgentDef.Name, "agentbot"))
		return
	}
	a, ok := b.findAgent(it.AgentID)
	if !ok {
		b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("⚠️ The agent `%s` isn't loaded any more. Try `/agent list`.", it.AgentID))
		return
	}
	pending := b.state(c.Live).Pending
	if !b.activate(ctx, c, a, it) || pending == "" {
		return
	}
	if greeting.Only(pending, a.Name) {
		b.setState(c.Live, func(st *threadstate.State) { st.Pending = "" })
		b.saveSession(ctx, c.Live, "drop the message the greeting answered")
		return
	}
	b.setState(c.Live, func(st *threadstate.State) { st.Pending, st.Seq = "", j.seq })
	b.turns.runTurn(ctx, c, it, pending)
}

// switchAgent moves the thread to another agent (or, with an empty id, back
// to the picker). The earlier session is kept, detached from the thread.
func (b *threadHandlers) switchAgent(ctx context.Context, c *engine.Conversation, it item, agentID string) {
	var a *catalog.Agent
	if agentID != "" {
		var ok bool
		if a, ok = b.findAgent(agentID); !ok {
			b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("I don't know the agent `%s`. %s", agentID, b.agentList()))
			return
		}
	}
	c.Live.Person, c.Live.Names = it.User, b.userName // who asks for the switch: the handoff names them
	owner := b.ownerOf(c, it)
	if _, err := c.Switch(ctx, nil, nil); err != nil {
		b.log.Error("switch agent", "err", err)
		b.post(ctx, it.Channel, it.ThreadTS, "⚠️ I couldn't switch agents. Please try again.")
		return
	}
	// The fresh session keeps the thread's owner: switching agents never
	// hands the thread to the person who switched.
	b.setState(c.Live, func(st *threadstate.State) { st.Owner = owner })
	if a == nil {
		b.saveSession(ctx, c.Live, "keep the thread's owner")
		b.postPicker(ctx, it)
		return
	}
	b.activate(ctx, c, a, it)
}

// findAgent finds an agent by id in the current catalog.
func (b *core) findAgent(id string) (*catalog.Agent, bool) {
	if id == "" {
		return nil, false
	}
	return b.cfg.Catalog().Find(id)
}

// parseThreadCommand recognizes "use <agent>", "reset" and "status" typed
// to the bot.
func parseThreadCommand(text string) (string, string) {
	f := strings.Fields(text)
	if len(f) == 2 && strings.EqualFold(f[0], "use") {
		return "use", f[1]
	}
	if len(f) == 1 && (strings.EqualFold(f[0], "reset") || strings.EqualFold(f[0], "restart")) {
		return "reset", ""
	}
	if len(f) == 1 && strings.EqualFold(f[0], "status") {
		return "status", ""
	}
	return "", ""
}

// isMenuPick reports whether text picks an item of the session's menu, which
// wins over a thread command of the same word.
func isMenuPick(s *engine.Session, text string) bool {
	_, _, ok := engine.MatchMenu(s.AgentDef.Menu, text)
	return ok
}

// isHelp reports whether text picks the agent's plain *help item.
func isHelp(s *engine.Session, text string) bool {
	idx, _, ok := engine.MatchMenu(s.AgentDef.Menu, text)
	return ok && engine.IsPlainHelp(s.AgentDef.Menu[idx])
}

// userName is how the agent addresses a user: their Slack display name, or
// "" when Slack does not say (access.Slack.Name, whose users.info answers
// are cached with the ones access asks). It is also the engine's
// Session.Names, so the tools and handoffs name people the same way.
func (b *core) userName(ctx context.Context, id string) string {
	return b.slackACL.Name(ctx, id)
}

// activeSkill names the session's running skill, "" when none.
func activeSkill(s *transcript.Session) string {
	if s.Skill == nil {
		return ""
	}
	return s.Skill.Name
}

// ownerOf is the user a session belongs to: who started it.
func (b *core) ownerOf(c *engine.Conversation, it item) string {
	if o := b.state(c.Live).Owner; o != "" {
		return o
	}
	return it.User
}

// inputOf is j's item for the thread state (threadstate.State.Input).
func inputOf(j *job) *threadstate.Input {
	data, err := json.Marshal(j.it)
	if err != nil {
		return nil // the item is plain data; a failure only loses the early answer
	}
	return &threadstate.Input{Seq: j.seq, Item: data}
}

package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"agentbot/bot/keys"
	"agentbot/bot/webapi"
	"agentbot/bot/workspace"
)

// intake is the listener: it maps Slack's events and clicks to typed
// items, admits them into their thread's queue (core.enqueue), and answers
// what needs no queue at once (a stop, the Home tab, /agent).
type intake struct {
	*core
	inbox   *inbox
	slashes sync.WaitGroup // slash commands running
	slash   *slash
	home    *home
}

// intakeLoop handles acked envelopes one at a time, in arrival order, so
// messages of one thread are queued in the order Slack sent them.
func (b *intake) intakeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			for _, d := range b.inbox.take() { // persist and ack what arrived
				b.handle(d.evt, d.ack)
			}
			return
		case <-b.inbox.signal:
			for _, d := range b.inbox.take() {
				b.handle(d.evt, d.ack)
			}
		}
	}
}

// handle handles one envelope and acks it: an inbound message once it is
// persisted (so a crash between ack and commit cannot lose it, and a
// failed commit is not acked, so Slack redelivers), anything else at once,
// an envelope the bot cannot read included: Slack redelivers every
// envelope not acked (https://docs.slack.dev/apis/events-api/using-socket-mode).
// An HTTP request comes with its ack (done: it completes the response);
// a Socket Mode envelope is acked on its websocket.
func (b *intake) handle(evt socketmode.Event, done func()) {
	ack := done
	if ack == nil {
		ack = b.acker(evt)
	}
	deferred := false
	defer func() {
		if !deferred {
			ack()
		}
	}()
	defer b.recoverPanic(string(evt.Type))
	switch evt.Type {
	case socketmode.EventTypeEventsAPI:
		if ev, ok := evt.Data.(slackevents.EventsAPIEvent); ok {
			deferred = b.onEventsAPI(ev, ack)
			return
		}
	case socketmode.EventTypeSlashCommand:
		// Slash commands need no ordering and may be slow (reload,
		// users.info): they run beside the intake, not in its way.
		if cmd, ok := evt.Data.(slack.SlashCommand); ok {
			b.slashes.Add(1)
			go func() {
				defer b.slashes.Done()
				defer b.recoverPanic("slash command")
				b.slash.onSlash(cmd)
			}()
			return
		}
	case socketmode.EventTypeInteractive:
		if cb, ok := evt.Data.(slack.InteractionCallback); ok {
			deferred = b.onInteraction(cb, ack)
			return
		}
	}
	b.log.Warn("malformed envelope; acked so Slack does not deliver it again", "type", envelopeType(evt), "err", badCause(evt))
}

// seen reports (and records) whether any of the dedupe keys was handled
// already.
func (b *core) seen(dedupe ...string) bool {
	dup := false
	for _, k := range dedupe {
		d, err := b.cfg.Store.Seen(b.turnCtx, k, b.cfg.DedupeTTL)
		if err != nil {
			b.log.Error("dedupe", "err", err)
		}
		dup = dup || d
	}
	if dup {
		b.obs.EventDeduped()
	}
	return dup
}

// onEventsAPI handles an Events API event; it reports whether ack was
// handed on, to be called once the message is persisted.
func (b *intake) onEventsAPI(ev slackevents.EventsAPIEvent, ack func()) bool {
	in, ok := readMessage(ev)
	if !ok {
		b.onAgentEvent(ev)
		return false
	}
	it := in.it
	ctx, installed := b.inWorkspace(eventWorkspace(ev), it.Channel)
	me := b.self(ctx)
	if !installed || in.botID != "" || it.User == "" || it.User == me.BotUserID || !webapi.PersonSubtype(in.subtype) {
		return false // the bot's own words, other bots, edits and deletions
	}
	id, _ := workspace.Of(ctx)
	it.Team, it.Enterprise, it.Kind = id.Team, id.Enterprise, kindMessage
	mention := in.mention || strings.Contains(it.Text, "<@"+me.BotUserID+">")
	reply := it.ThreadTS != "" && it.ThreadTS != it.TS
	if it.ThreadTS == "" {
		it.ThreadTS = it.TS // a new thread under this message
	}
	// A channel message counts when it mentions the bot, or is a reply in a
	// thread that has a session; in DMs every message counts. Other channel
	// chatter is dropped before any write.
	if !mention && !it.DM {
		if counts, handed := b.replyCounts(it, reply); !counts {
			return handed
		}
	}
	// Slack retries an event with the same event_id; app_mention and
	// message.* both fire for one message, with the same (channel, ts).
	dedupe := []string{keys.Message(it.Channel, it.TS)}
	if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok && cb.EventID != "" {
		dedupe = append(dedupe, keys.Event(cb.EventID))
	}
	return b.admitMessage(it, me.BotUserID, in.files, ack, dedupe)
}

// inbound is a Slack message event as intake reads it.
type inbound struct {
	it             item
	botID, subtype string
	mention        bool
	files          []slack.File
}

// readMessage reads an app_mention or message event; it reports false for
// any other event.
func readMessage(ev slackevents.EventsAPIEvent) (inbound, bool) {
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		return inbound{it: item{Channel: e.Channel, User: e.User, Text: e.Text, TS: e.TimeStamp, ThreadTS: e.ThreadTimeStamp},
			botID: e.BotID, mention: true, files: e.Files}, true
	case *slackevents.MessageEvent:
		in := inbound{it: item{Channel: e.Channel, User: e.User, Text: e.Text, TS: e.TimeStamp, ThreadTS: e.ThreadTimeStamp, DM: e.ChannelType == slackevents.ChannelTypeIM},
			botID: e.BotID, subtype: e.SubType}
		if e.Message != nil {
			in.files = e.Message.Files
			if in.it.User == "" {
				in.it.User = e.Message.User
			}
		}
		return in, true
	}
	return inbound{}, false
}

// replyCounts reports whether a channel message without a mention counts:
// a reply in a thread that has a session, or will have one (threadwork.Work.Live).
// When the store cannot say, the message is not acked, so Slack delivers
// it again rather than it being dropped; handed then reports that ack was
// handed on.
func (b *intake) replyCounts(it item, reply bool) (counts, handed bool) {
	if !reply {
		return false, false // a new thread without a mention has no session
	}
	ok, err := b.work.Live(b.turnCtx, it.thread().String())
	if err != nil {
		b.notSaved(it, err)
		return false, true
	}
	return ok, false
}

// admitMessage queues a message that counts, unless its sender is denied
// or it asks to stop the running turn; it reports whether ack was handed
// on.
func (b *intake) admitMessage(it item, botUserID string, files []slack.File, ack func(), dedupe []string) bool {
	if why := b.denied(it.User, it.Team, it.Channel); why != "" {
		if !b.seen(dedupe...) {
			b.ephemeral(it.Channel, it.User, it.ThreadTS, why)
		}
		return false
	}
	it.Text = stripMention(it.Text, botUserID)
	if b.stopIfAsked(it) {
		return false // "stop" stops the running turn at once, ahead of the queue
	}
	it.Files = fileRefs(files)
	return b.enqueue(it, ack, dedupe...)
}

// fileRefs are the files a message shared, as an item keeps them.
func fileRefs(files []slack.File) []fileRef {
	var out []fileRef
	for _, f := range files {
		url := f.URLPrivateDownload
		if url == "" {
			url = f.URLPrivate
		}
		out = append(out, fileRef{ID: f.ID, Name: f.Name, URL: url, Size: f.Size})
	}
	return out
}

// stopIfAsked stops the thread's running turn when a message asks for it
// ("stop", "@agentbot stop"), and reports whether it did.
func (b *intake) stopIfAsked(it item) bool {
	t := strings.ToLower(strings.Trim(strings.TrimSpace(it.Text), "!. "))
	if t != "stop" && t != "cancel" {
		return false
	}
	if !b.running.Stop(it.thread().String(), it.User) {
		return false
	}
	// app_mention and message.* both carry "@agentbot stop": once the turn
	// has ended, the other one must not reach the queue as a message.
	b.seen(keys.Message(it.Channel, it.TS))
	return true
}

// enqueue persists an item in its thread's queue (threadwork.Work.Admit),
// unless one of its dedupe keys was seen before, and acks it once it is
// durable. A message is queued in its thread by its Slack ts, so one
// redelivered late goes before later ones still queued. A message that
// cannot be persisted is not acked (Slack delivers it again), and its
// author is told (notSaved). It reports whether ack was handed on.
func (b *core) enqueue(it item, ack func(), dedupe ...string) bool {
	if it.Enterprise == "" {
		it.Enterprise, _ = b.teamOrgs.Get(it.Team) // its org-wide install answers it
	}
	payload, err := json.Marshal(it)
	if err != nil {
		b.log.Error("encode inbound", "err", err)
		return false
	}
	b.work.Admit(it.thread().String(), it.order(), dedupe, payload, ack, func(err error) { b.notSaved(it, err) })
	return true
}

// maxUnsaved bounds core.unsaved; past it the set starts over (a notice
// may then show twice).
const maxUnsaved = 1000

// notSaved handles a message that could not be persisted (the store is
// unreachable): it is not acked, so Slack delivers it again, and the user
// is told once, so a message is never dropped without a word when the
// store stays away longer than Slack's retries.
func (b *core) notSaved(it item, err error) {
	b.log.Error("persist inbound message; not acked, so Slack redelivers it", "channel", it.Channel, "err", err)
	if it.Kind == kindMessage {
		b.gaps.Missed(it.Channel, it.ThreadTS, it.TS) // the thread's next answer looks for it first
	}
	k := keys.Message(it.Channel, it.TS)
	b.unsavedMu.Lock()
	told := b.unsaved[k]
	if !told {
		if len(b.unsaved) >= maxUnsaved {
			clear(b.unsaved)
		}
		b.unsaved[k] = true
	}
	b.unsavedMu.Unlock()
	if told {
		return
	}
	b.ephemeral(it.Channel, it.User, it.ThreadTS, unsavedNotice)
}

// unsavedNotice is what a user reads when their message could not be saved.
const unsavedNotice = "⚠️ agentbot couldn't save this message: its database is unreachable right now. Slack will deliver the message again shortly; if it was meant for agentbot and there is no answer in a few minutes, please send it again."

var mentionRE = regexp.MustCompile(`<@[A-Z0-9]+(\|[^>]*)?>`)

// stripMention removes mentions of the bot; the rest of the text, line
// breaks included, stays as typed.
func stripMention(text, botUserID string) string {
	text = mentionRE.ReplaceAllStringFunc(text, func(m string) string {
		if strings.HasPrefix(m, "<@"+botUserID) {
			return ""
		}
		return m
	})
	return strings.TrimSpace(strings.ReplaceAll(text, "  ", " "))
}

// recoverPanic logs a panic of a handler instead of taking the bot down.
func (b *core) recoverPanic(what string) {
	if r := recover(); r != nil {
		b.log.Error("handler panicked", "what", what, "panic", fmt.Sprint(r))
	}
}

// acker returns the ack of an envelope, safe to call more than once.
func (b *intake) acker(evt socketmode.Event) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			if evt.Request == nil {
				return
			}
			if err := b.cfg.Socket.Ack(*evt.Request); err != nil {
				b.log.Warn("ack failed", "type", evt.Type, "err", err)
			}
		})
	}
}

// inbox is an unbounded FIFO between the socket loop (or the request URL's
// handlers) and the intake, so neither blocks and acks stay fast under load.
type inbox struct {
	mu     sync.Mutex
	items  []delivery
	signal chan struct{}
}

// delivery is one envelope in the inbox: ack, when set, acks it (an HTTP
// request's response); nil acks it on the Socket Mode websocket.
type delivery struct {
	evt socketmode.Event
	ack func()
}

func newInbox() *inbox { return &inbox{signal: make(chan struct{}, 1)} }

func (q *inbox) push(evt socketmode.Event) { q.pushAcked(evt, nil) }

// pushAcked queues evt with its own ack.
func (q *inbox) pushAcked(evt socketmode.Event, ack func()) {
	q.mu.Lock()
	q.items = append(q.items, delivery{evt: evt, ack: ack})
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// take returns everything queued, oldest first.
func (q *inbox) take() []delivery {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

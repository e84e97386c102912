package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"agentbot/bot/keys"
	"agentbot/storage"
)

// intakeLoop handles acked envelopes one at a time, in arrival order, so
// messages of one thread are queued in the order Slack sent them.
func (b *Bot) intakeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			for _, evt := range b.inbox.take() { // persist and ack what arrived
				b.handle(evt)
			}
			return
		case <-b.inbox.signal:
			for _, evt := range b.inbox.take() {
				b.handle(evt)
			}
		}
	}
}

// handle handles one envelope and acks it: an inbound message once it is
// persisted (so a crash between ack and commit cannot lose it, and a
// failed commit is not acked, so Slack redelivers), anything else at once,
// an envelope the bot cannot read included: Slack redelivers every
// envelope not acked (https://docs.slack.dev/apis/events-api/using-socket-mode).
func (b *Bot) handle(evt socketmode.Event) {
	ack := b.acker(evt)
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
				b.onSlash(cmd)
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
func (b *Bot) seen(dedupe ...string) bool {
	dup := false
	for _, k := range dedupe {
		d, err := b.cfg.Store.Seen(context.TODO(), k, b.cfg.DedupeTTL)
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

// keepSubtypes are the message subtypes that carry a user's words.
var keepSubtypes = map[string]bool{"": true, "file_share": true, "thread_broadcast": true}

// onEventsAPI handles an Events API event; it reports whether ack was
// handed on, to be called once the message is persisted.
func (b *Bot) onEventsAPI(ev slackevents.EventsAPIEvent, ack func()) bool {
	in, ok := readMessage(ev)
	if !ok {
		b.onAgentEvent(ev)
		return false
	}
	it := in.it
	if in.botID != "" || it.User == "" || it.User == b.botUserID || !keepSubtypes[in.subtype] {
		return false // the bot's own words, other bots, edits and deletions
	}
	it.Team, it.Kind = ev.TeamID, kindMessage
	if it.Team == "" {
		it.Team = b.teamID
	}
	mention := in.mention || strings.Contains(it.Text, "<@"+b.botUserID+">")
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
	return b.admitMessage(it, in.files, ack, dedupe)
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
// a reply in a thread that has a session, or will have one (threadLive).
// When the store cannot say, the message is not acked, so Slack delivers
// it again rather than it being dropped; handed then reports that ack was
// handed on.
func (b *Bot) replyCounts(it item, reply bool) (counts, handed bool) {
	if !reply {
		return false, false // a new thread without a mention has no session
	}
	ok, err := b.threadLive(it.thread().String())
	if err != nil {
		b.notSaved(it, err)
		return false, true
	}
	return ok, false
}

// threadLive reports whether the thread of key has a session or is about
// to have one: an item of it is being admitted here, or is queued (its
// worker creates the session when it opens it, before the item leaves the
// queue). So a reply written right after the mention that starts the
// thread is queued behind it, not dropped. After a first look at the
// session, the states are looked at in the order a thread goes through
// them, and each begins before the one before it ends: a thread moving on
// meanwhile is still seen.
func (b *Bot) threadLive(key string) (bool, error) {
	if ok, err := storage.HasSession(context.TODO(), b.cfg.Store, key); err != nil || ok {
		return ok, wrapErr("look up thread session", err)
	}
	if b.admittingThread(key) {
		return true, nil
	}
	if _, _, ok, err := storage.Next(context.TODO(), b.cfg.Store, key); err != nil || ok {
		return ok, wrapErr("look up thread queue", err)
	}
	ok, err := storage.HasSession(context.TODO(), b.cfg.Store, key)
	return ok, wrapErr("look up thread session", err)
}

// wrapErr is err with what failed, or nil.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// admittingThread reports whether an admission of the thread of key is
// under way on this replica (enqueue).
func (b *Bot) admittingThread(key string) bool {
	b.admittingMu.Lock()
	defer b.admittingMu.Unlock()
	return b.admitting[key] > 0
}

// admittingAdd counts n admissions of key under way (n < 0: ended).
func (b *Bot) admittingAdd(key string, n int) {
	b.admittingMu.Lock()
	defer b.admittingMu.Unlock()
	if b.admitting[key] += n; b.admitting[key] <= 0 {
		delete(b.admitting, key)
	}
}

// admitMessage queues a message that counts, unless its sender is denied
// or it asks to stop the running turn; it reports whether ack was handed
// on.
func (b *Bot) admitMessage(it item, files []slack.File, ack func(), dedupe []string) bool {
	if why := b.denied(it.User, it.Team, it.Channel); why != "" {
		if !b.seen(dedupe...) {
			b.ephemeral(it.Channel, it.User, it.ThreadTS, why)
		}
		return false
	}
	it.Text = stripMention(it.Text, b.botUserID)
	if b.isStopRequest(it) {
		return false // "stop" stops the running turn at once, ahead of the queue
	}
	for _, f := range files {
		url := f.URLPrivateDownload
		if url == "" {
			url = f.URLPrivate
		}
		it.Files = append(it.Files, fileRef{ID: f.ID, Name: f.Name, URL: url, Size: f.Size})
	}
	return b.enqueue(it, ack, dedupe...)
}

// enqueue persists an item, unless one of its dedupe keys was seen before,
// acks it, and wakes its thread once committed. A message is queued in
// its thread by its Slack ts, so one redelivered late goes before later
// ones still queued. With a journaled store (bbolt), it is acked once it
// is fsynced in the store's journal: a crash after the ack cannot lose it.
// Otherwise (PostgreSQL) it is acked when the commit is done. A message
// that cannot be persisted is not acked: Slack delivers it again. It
// reports whether ack was handed on.
func (b *Bot) enqueue(it item, ack func(), dedupe ...string) bool {
	payload, err := json.Marshal(it)
	if err != nil {
		b.log.Error("encode inbound", "err", err)
		return false
	}
	order, key := it.order(), it.thread().String()
	b.acks.Add(1)
	// Until the commit, the store does not show the item queued: a reply
	// right behind it asks here (threadLive).
	b.admittingAdd(key, 1)
	journaled, done := b.cfg.Store.Admit(context.TODO(), order, dedupe, b.cfg.DedupeTTL, key, payload)
	if journaled != nil {
		go func() {
			defer b.acks.Done()
			defer b.admittingAdd(key, -1)
			if err := <-journaled; err != nil {
				b.notSaved(it, err) // not on disk: not acked
				return
			}
			ack()
			b.admitted(it, <-done, ack, true)
		}()
		return true
	}
	go func() {
		defer b.acks.Done()
		defer b.admittingAdd(key, -1)
		b.admitted(it, <-done, ack, false)
	}()
	return true
}

// maxUnsaved bounds Bot.unsaved; past it the set starts over (a notice
// may then show twice).
const maxUnsaved = 1000

// notSaved handles a message that could not be persisted (the store is
// unreachable): it is not acked, so Slack delivers it again, and the user
// is told once, so a message is never dropped without a word when the
// store stays away longer than Slack's retries.
func (b *Bot) notSaved(it item, err error) {
	b.log.Error("persist inbound message; not acked, so Slack redelivers it", "channel", it.Channel, "err", err)
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

// admitted wakes the thread of a committed item; a duplicate is dropped.
// journaled says whether it was journaled (and acked) before its commit.
func (b *Bot) admitted(it item, a storage.Admission, ack func(), journaled bool) {
	if a.Err != nil {
		if journaled {
			b.log.Error("commit inbound message; it is replayed from the journal at the next start", "err", a.Err)
		} else {
			b.notSaved(it, a.Err)
		}
		return
	}
	ack()
	if a.Dup {
		b.obs.EventDeduped()
		return
	}
	b.threads.wake(it.thread().String())
}

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
func (b *Bot) recoverPanic(what string) {
	if r := recover(); r != nil {
		b.log.Error("handler panicked", "what", what, "panic", fmt.Sprint(r))
	}
}

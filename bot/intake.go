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
)

// item is one persisted unit of work for a thread: a user's message, or an
// agent picked from the picker.
type item struct {
	Kind     string    `json:"kind"` // "message" or "pick"
	Team     string    `json:"team"`
	Channel  string    `json:"channel"`
	ThreadTS string    `json:"thread_ts"`
	TS       string    `json:"ts,omitempty"`
	User     string    `json:"user"`
	Text     string    `json:"text,omitempty"`
	DM       bool      `json:"dm,omitempty"`
	Files    []fileRef `json:"files,omitempty"`
	AgentID  string    `json:"agent_id,omitempty"`
	// PickerTS is the picker message to close once an agent is picked.
	PickerTS string `json:"picker_ts,omitempty"`
}

// fileRef is a file a user shared with a message.
type fileRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url"`
	Size int    `json:"size"`
}

func (it *item) key() string { return it.Team + "/" + it.Channel + "/" + it.ThreadTS }

// intakeLoop handles acked envelopes one at a time, in arrival order, so
// messages of one thread are queued in the order Slack sent them.
func (b *Bot) intakeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			for _, evt := range b.inbox.take() { // persist what was acked
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

func (b *Bot) handle(evt socketmode.Event) {
	defer b.recoverPanic(string(evt.Type))
	switch evt.Type {
	case socketmode.EventTypeEventsAPI:
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		if ok {
			b.onEventsAPI(ev)
		}
	case socketmode.EventTypeSlashCommand:
		// Slash commands need no ordering and may be slow (reload,
		// users.info): they run beside the intake, not in its way.
		cmd, ok := evt.Data.(slack.SlashCommand)
		if ok {
			b.slashes.Add(1)
			go func() {
				defer b.slashes.Done()
				defer b.recoverPanic("slash command")
				b.onSlash(cmd)
			}()
		}
	case socketmode.EventTypeInteractive:
		cb, ok := evt.Data.(slack.InteractionCallback)
		if ok {
			b.onInteraction(cb)
		}
	}
}

// seen reports (and records) whether any of the dedupe keys was handled
// already.
func (b *Bot) seen(keys ...string) bool {
	dup := false
	for _, k := range keys {
		d, err := b.cfg.Store.Seen(k, b.cfg.DedupeTTL)
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

func (b *Bot) onEventsAPI(ev slackevents.EventsAPIEvent) {
	team := ev.TeamID
	if team == "" {
		team = b.teamID
	}
	var it item
	var botID, subtype string
	var mention bool
	var files []slack.File
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		it = item{Channel: e.Channel, User: e.User, Text: e.Text, TS: e.TimeStamp, ThreadTS: e.ThreadTimeStamp}
		botID, mention, files = e.BotID, true, e.Files
	case *slackevents.MessageEvent:
		it = item{Channel: e.Channel, User: e.User, Text: e.Text, TS: e.TimeStamp, ThreadTS: e.ThreadTimeStamp, DM: e.ChannelType == slackevents.ChannelTypeIM}
		botID, subtype = e.BotID, e.SubType
		if e.Message != nil {
			files = e.Message.Files
			if it.User == "" {
				it.User = e.Message.User
			}
		}
	default:
		b.onAgentEvent(ev)
		return
	}
	if botID != "" || it.User == "" || it.User == b.botUserID || !keepSubtypes[subtype] {
		return // the bot's own words, other bots, edits and deletions
	}
	if strings.Contains(it.Text, "<@"+b.botUserID+">") {
		mention = true
	}
	it.Team, it.Kind = team, "message"
	if it.ThreadTS == "" {
		it.ThreadTS = it.TS // a new thread under this message
	}
	// A channel message counts when it mentions the bot, or is a reply in a
	// thread that has a session; in DMs every message counts. Other channel
	// chatter is dropped before any write.
	if !mention && !it.DM {
		if ok, err := b.cfg.Store.HasSession(it.key()); err != nil || !ok {
			return
		}
	}
	// Slack retries an event with the same event_id; app_mention and
	// message.* both fire for one message, with the same (channel, ts).
	dedupe := []string{"msg/" + it.Channel + "/" + it.TS}
	if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok && cb.EventID != "" {
		dedupe = append(dedupe, "event/"+cb.EventID)
	}
	if why := b.denied(it.User, it.Channel, it.DM); why != "" {
		if !b.seen(dedupe...) {
			b.ephemeral(it.Channel, it.User, it.ThreadTS, why)
		}
		return
	}
	it.Text = stripMention(it.Text, b.botUserID)
	for _, f := range files {
		url := f.URLPrivateDownload
		if url == "" {
			url = f.URLPrivate
		}
		it.Files = append(it.Files, fileRef{ID: f.ID, Name: f.Name, URL: url, Size: f.Size})
	}
	b.enqueue(it, dedupe...)
}

// enqueue persists an item, unless one of its dedupe keys was seen before,
// then wakes its thread. Dedupe marks and the queue entry are one commit.
func (b *Bot) enqueue(it item, dedupe ...string) {
	payload, err := json.Marshal(it)
	if err != nil {
		b.log.Error("encode inbound", "err", err)
		return
	}
	dup, _, err := b.cfg.Store.Admit(dedupe, b.cfg.DedupeTTL, it.key(), payload)
	if err != nil {
		b.log.Error("persist inbound message", "err", err)
		b.post(b.turnCtx, it.Channel, it.ThreadTS, "⚠️ I couldn't save your message, so I can't work on it. Please try again in a moment.")
		return
	}
	if dup {
		b.obs.EventDeduped()
		return
	}
	b.threads.wake(it.key())
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

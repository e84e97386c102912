package bot_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// slash runs "/agent text" as who in ch and returns the ephemeral answer
// addressed to who.
func (r *rig) slash(who, ch, text string) string {
	r.t.Helper()
	before := len(r.ephemerals(who))
	env := r.slack.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: text, UserID: who, ChannelID: ch})
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		r.t.Fatalf("/agent %s: %v", text, err)
	}
	r.waitFor("the answer to /agent "+text, func() bool { return len(r.ephemerals(who)) > before })
	got := r.ephemerals(who)[before]
	if got.Channel != ch {
		r.t.Fatalf("/agent %s answered in %s, want %s", text, got.Channel, ch)
	}
	return fakeslack.Shown(got.Text) // as the person reads it
}

// ephemerals are the ephemeral messages shown to who, oldest first.
func (r *rig) ephemerals(who string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range r.slack.Messages() {
		if m.Kind == fakeslack.KindEphemeral && m.User == who {
			out = append(out, m)
		}
	}
	return out
}

// publicPosts counts the messages everyone in a channel can see.
func (r *rig) publicPosts() int {
	n := 0
	for _, m := range r.slack.Messages() {
		if m.Kind == fakeslack.KindPost || m.Kind == fakeslack.KindUpdate {
			n++
		}
	}
	return n + len(r.slack.Streams())
}

func hasNot(t testing.TB, s, sub, what string) {
	t.Helper()
	if strings.Contains(s, sub) {
		t.Fatalf("%s: %q should not be in %q", what, sub, s)
	}
}

func (r *rig) sessionKey(thread string) string {
	return r.slack.TeamID() + "/" + channel + "/" + thread
}

// /agent help, list and status answer only the caller; list offers entry
// points only.
func TestSlashHelpListStatus(t *testing.T) {
	r := newRig(t, rigOpts{})
	help := r.slash(user, channel, "help")
	for _, sub := range []string{"/agent list", "/agent use <agent>", "/agent status", "/agent reset", "/agent reload", "/agent connections", "/agent disconnect <server>", "@agentbot use <agent>"} {
		has(t, help, sub, "/agent help")
	}
	if bare := r.slash(user, channel, ""); bare != help {
		t.Fatalf("bare /agent = %q, want the help", bare)
	}
	list := r.slash(user, channel, "list")
	for _, sub := range []string{"Maren", "`product-lead`", "Dario", "`retro-coach`"} {
		has(t, list, sub, "/agent list")
	}
	hasNot(t, list, "story-writer", "/agent list offers a non-entry-point agent")
	status := r.slash(user, channel, "status")
	has(t, status, "no default agent", "/agent status without a default")
	has(t, status, "3 agents loaded (2 to pick from)", "/agent status counts")
	unknown := r.slash(user, channel, "frobnicate")
	has(t, unknown, "I don't know `/agent frobnicate`", "unknown subcommand")
	has(t, unknown, "/agent list", "unknown subcommand shows the help")
	if n := r.publicPosts(); n != 0 {
		t.Fatalf("/agent posted %d public messages", n)
	}
	if r.model.Calls() != 0 {
		t.Fatalf("/agent called the model %d times", r.model.Calls())
	}
}

// /agent use sets the channel default: the next mention greets with that
// agent, no picker. /agent reset clears it: the next mention gets the picker.
func TestSlashUseStatusReset(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	has(t, r.slash(user, channel, "use retro-coach"), "is now this channel's default", "/agent use")
	if def, err := storage.ChannelDefault(ctx, r.st, r.slack.TeamID(), channel); err != nil || def != "retro-coach" {
		t.Fatalf("channel default = %q, %v", def, err)
	}
	has(t, r.slash(user, channel, "status"), "*Dario* (`retro-coach`)", "/agent status")
	// Another channel is unaffected.
	has(t, r.slash(user, "C0OTHER", "status"), "no default agent", "/agent status elsewhere")

	thread, _ := r.mention("", "")
	greet := r.waitBotMessages(thread, 1)[0]
	has(t, text(greet), "Dario", "greeting of the channel default")
	for id := range buttons(t, greet) {
		if strings.HasPrefix(id, "pick:") {
			t.Fatalf("a picker was offered despite the channel default: %v", buttons(t, greet))
		}
	}

	has(t, r.slash(user, channel, "reset"), "no default agent now", "/agent reset")
	if def, _ := storage.ChannelDefault(ctx, r.st, r.slack.TeamID(), channel); def != "" {
		t.Fatalf("channel default after reset = %q", def)
	}
	has(t, r.slash(user, channel, "status"), "no default agent", "/agent status after reset")
	thread2, _ := r.mention("", "")
	picker := r.waitBotMessages(thread2, 1)[0]
	has(t, text(picker), "Which agent should help", "picker after reset")
	if btns := buttons(t, picker); btns["pick:retro-coach"] != "retro-coach" {
		t.Fatalf("picker buttons = %v", btns)
	}
	// The thread started before the reset keeps its agent.
	if s, err := r.st.FindSession(ctx, r.sessionKey(thread)); err != nil || s == nil || s.AgentID != "retro-coach" {
		t.Fatalf("earlier thread's session = %+v, %v", s, err)
	}
}

// /agent use with an unknown agent (or none) lists the agents and changes
// nothing.
func TestSlashUseUnknownListsAgents(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	got := r.slash(user, channel, "use nobody")
	has(t, got, "I don't know the agent `nobody`", "/agent use nobody")
	has(t, got, "`product-lead`", "/agent use nobody lists agents")
	has(t, got, "`retro-coach`", "/agent use nobody lists agents")
	hasNot(t, got, "story-writer", "/agent use nobody lists a non-entry point")
	has(t, r.slash(user, channel, "use"), "Which agent?", "/agent use without an agent")
	if def, _ := storage.ChannelDefault(ctx, r.st, r.slack.TeamID(), channel); def != "" {
		t.Fatalf("channel default = %q after failed uses", def)
	}
}

// editedBundles copies the shipped bundles and gives product-lead a
// different menu: *sharpen becomes *roadmap.
func editedBundles(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundles")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot(t), "bundles"))); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(dir, "product-team", "agents", "product-lead.md")
	data, err := os.ReadFile(agent)
	if err != nil {
		t.Fatal(err)
	}
	old := `<c cmd="*sharpen" exec="{core-root}/tasks/adv-elicit.md">Pressure-test an idea or a section of a document</c>`
	if !strings.Contains(string(data), old) {
		t.Fatalf("product-lead.md has no *sharpen item to change")
	}
	data = []byte(strings.Replace(string(data), old, `<c cmd="*roadmap">Sketch a roadmap</c>`, 1))
	if err := os.WriteFile(agent, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// /agent reload: refused for others, done for admins (listed or workspace
// admins). Afterwards a running thread keeps the agent definition it
// started with, and a new thread gets the new one.
func TestSlashReload(t *testing.T) {
	ctx := context.Background()
	const admin, wsAdmin, other = "U0ADMIN", "U0WSADMIN", "U0OTHER"
	newDir := editedBundles(t)
	var (
		cur     atomic.Pointer[catalog.Catalog]
		reloads atomic.Int32
	)
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
		orig := c.Catalog
		c.Catalog = func() *catalog.Catalog {
			if p := cur.Load(); p != nil {
				return p
			}
			return orig()
		}
		c.Reload = func() error {
			reloads.Add(1)
			cur.Store(catalog.Load(catalog.Options{Bundles: []string{newDir}}))
			return nil
		}
		c.Admins = []string{admin}
	}})
	r.slack.AddUser(slack.User{ID: wsAdmin, Name: "boss", IsAdmin: true})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")

	old, _ := r.mention("", "")
	greet := r.waitBotMessages(old, 1)[0]
	if btns := buttons(t, greet); !hasValue(btns, "*sharpen") || hasValue(btns, "*roadmap") {
		t.Fatalf("greeting before reload: %v", btns)
	}

	has(t, r.slash(other, channel, "reload"), "Only workspace admins or the people in AGENTBOT_ADMINS", "reload by a non-admin")
	if reloads.Load() != 0 {
		t.Fatal("a non-admin reloaded")
	}
	got := r.slash(admin, channel, "reload")
	has(t, got, "Reloaded: 3 agents", "reload by an AGENTBOT_ADMINS user")
	has(t, got, "Running threads keep the agent they started with", "reload answer")
	has(t, r.slash(wsAdmin, channel, "reload"), "Reloaded", "reload by a workspace admin")
	if reloads.Load() != 2 {
		t.Fatalf("reloads = %d, want 2", reloads.Load())
	}

	// The running thread, mentioned bare, shows its menu again: the old one.
	r.mention("", old)
	again := r.waitBotMessages(old, 2)[1]
	if btns := buttons(t, again); !hasValue(btns, "*sharpen") || hasValue(btns, "*roadmap") {
		t.Fatalf("running thread's menu after reload: %v", btns)
	}
	// A new thread starts with the reloaded definition.
	fresh, _ := r.mention("", "")
	if btns := buttons(t, r.waitBotMessages(fresh, 1)[0]); !hasValue(btns, "*roadmap") || hasValue(btns, "*sharpen") {
		t.Fatalf("new thread's menu after reload: %v", btns)
	}
}

// Without Config.Reload, /agent reload says it is off.
func TestSlashReloadDisabled(t *testing.T) {
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) { c.Admins = []string{user} }})
	has(t, r.slash(user, channel, "reload"), "not enabled", "/agent reload without Reload")
}

func hasValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

// "@agentbot use retro-coach" in a thread switches its agent; the earlier
// session stays in storage, detached from the thread.
func TestThreadUseSwitchesAgent(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	thread, _ := r.mention("", "")
	has(t, text(r.waitBotMessages(thread, 1)[0]), "Maren", "first greeting")
	before, err := r.st.FindSession(ctx, r.sessionKey(thread))
	if err != nil || before == nil {
		t.Fatalf("session = %v, %v", before, err)
	}

	r.mention("use retro-coach", thread)
	has(t, text(r.waitBotMessages(thread, 2)[1]), "Dario", "greeting after the switch")
	now, err := r.st.FindSession(ctx, r.sessionKey(thread))
	if err != nil || now == nil || now.AgentID != "retro-coach" || now.ID == before.ID {
		t.Fatalf("thread's session after the switch = %+v, %v", now, err)
	}
	detached, err := r.st.SessionByID(ctx, before.ID)
	if err != nil || detached.AgentID != "product-lead" {
		t.Fatalf("earlier session = %+v, %v", detached, err)
	}
	if r.model.Calls() != 0 {
		t.Fatalf("switching agents called the model %d times", r.model.Calls())
	}

	// The thread now talks to Dario.
	r.model.Enqueue(fakemodel.Reply{Text: "Tell me what happened."})
	r.reply("we had an outage", thread)
	r.waitFor("the answer", func() bool { return r.model.Calls() == 1 })
	sys := r.model.Requests()[0].Messages[0].Content
	has(t, sys, "Dario", "system prompt after the switch")
	persona, handoff, _ := strings.Cut(sys, "## Handoff")
	hasNot(t, persona, "Maren", "system prompt after the switch")
	has(t, handoff, "Before you, 🧭 Maren (product-lead", "the handoff after the switch")

	// An unknown agent changes nothing and lists the agents.
	r.mention("use nobody", thread)
	r.waitFor("the refusal", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "I don't know the agent `nobody`") && strings.Contains(text(m), "`product-lead`") {
				return true
			}
		}
		return false
	})
	if s, _ := r.st.FindSession(ctx, r.sessionKey(thread)); s == nil || s.ID != now.ID {
		t.Fatalf("session after use nobody = %+v", s)
	}
}

// A channel outside AGENTBOT_ALLOWED_CHANNELS gets an ephemeral refusal
// naming the setting, for mentions and /agent alike; DMs stay open.
func TestDeniedChannelGetsEphemeralRefusal(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) { c.AllowedChannels = []string{"C0ELSEWHERE"} }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	thread, _ := r.mention("hi", "")
	r.waitFor("the refusal", func() bool {
		for _, m := range r.ephemerals(user) {
			if strings.Contains(m.Text, "AGENTBOT_ALLOWED_CHANNELS") && m.Channel == channel {
				return true
			}
		}
		return false
	})
	has(t, r.slash(user, channel, "list"), "AGENTBOT_ALLOWED_CHANNELS", "/agent in a denied channel")
	if def, _ := storage.ChannelDefault(ctx, r.st, r.slack.TeamID(), channel); def != "product-lead" {
		t.Fatalf("channel default changed to %q", def)
	}
	has(t, r.slash(user, channel, "use retro-coach"), "AGENTBOT_ALLOWED_CHANNELS", "/agent use in a denied channel")
	if def, _ := storage.ChannelDefault(ctx, r.st, r.slack.TeamID(), channel); def != "product-lead" {
		t.Fatalf("a denied /agent use changed the default to %q", def)
	}
	// A DM is not a channel: it works.
	dm := sendMessage(r, "D0DM1", "im", "hello", "")
	r.waitFor("the DM picker", func() bool { return len(r.slack.ThreadMessages("D0DM1", dm)) >= 2 })
	if n := len(r.botMessages(thread)); n != 0 || r.model.Calls() != 0 {
		t.Fatalf("denied channel got %d public messages and %d model calls", n, r.model.Calls())
	}
}

// The bot ignores its own messages, other bots, and edits and deletions;
// a file_share message carries a user's words and is answered.
func TestIgnoredMessagesAndFileShare(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	thread, _ := r.mention("", "")
	r.waitBotMessages(thread, 1)
	msg := func(m map[string]any) {
		m["type"], m["channel"], m["channel_type"], m["thread_ts"] = "message", channel, "channel", thread
		if _, ok := m["ts"]; !ok {
			m["ts"] = r.slack.NextTS()
		}
		r.slack.SendEvent(m)
	}
	mention := "<@" + r.slack.BotUserID() + "> "
	msg(map[string]any{"user": r.slack.BotUserID(), "text": "IGNORED own words"})
	msg(map[string]any{"user": r.slack.BotUserID(), "text": mention + "IGNORED own words with a mention"})
	msg(map[string]any{"user": "U0OTHERBOT", "bot_id": "B0OTHER", "text": mention + "IGNORED another bot"})
	msg(map[string]any{"bot_id": "B0OTHER", "subtype": "bot_message", "text": "IGNORED bot_message"})
	msg(map[string]any{"subtype": "message_changed", "hidden": true, "text": mention + "IGNORED edited text",
		"message":          map[string]any{"type": "message", "user": user, "text": "IGNORED edited text", "ts": thread, "thread_ts": thread},
		"previous_message": map[string]any{"type": "message", "user": user, "text": "old text", "ts": thread}})
	msg(map[string]any{"subtype": "message_deleted", "hidden": true, "deleted_ts": thread,
		"previous_message": map[string]any{"type": "message", "user": user, "text": "IGNORED deleted text", "ts": thread}})
	msg(map[string]any{"user": user, "subtype": "channel_join", "text": "IGNORED has joined the channel"})

	f := r.slack.AddFile("notes.md", []byte("kept"))
	r.model.Enqueue(fakemodel.Reply{Text: "Got your file."})
	msg(map[string]any{"user": user, "subtype": "file_share", "text": "KEPT here is the file", "files": []any{f}})
	r.waitFor("the file_share answer", func() bool {
		ss := r.slack.Streams()
		return len(ss) == 1 && ss[0].Stopped
	})
	time.Sleep(100 * time.Millisecond)
	if n := r.model.Calls(); n != 1 {
		t.Fatalf("model calls = %d, want 1", n)
	}
	req := r.model.Requests()[0]
	has(t, req.LastUserText(), "KEPT here is the file", "the file_share message")
	has(t, req.LastUserText(), "/inputs/notes.md", "the shared file")
	for _, m := range req.Messages {
		hasNot(t, m.Content, "IGNORED", "an ignored message reached the model")
	}
	has(t, r.slack.Streams()[0].Text, "Got your file.", "answer")
	if n := len(r.botMessages(thread)); n != 2 {
		t.Fatalf("the bot has %d messages in the thread, want the greeting and the answer", n)
	}
}

package bot_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"gopkg.in/yaml.v3"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// methodScopes maps every Slack Web API method (and fakeslack pseudo-method)
// the bot calls to the bot token scope its documentation page lists; ""
// means none. A method the bot starts calling must be added here, with its
// page, or TestManifestScopesMatchTheCode fails.
var methodScopes = map[string]string{
	"auth.test":             "", // https://docs.slack.dev/reference/methods/auth.test: no scope
	"apps.connections.open": "", // https://docs.slack.dev/reference/methods/apps.connections.open: app-level token, connections:write
	// https://docs.slack.dev/reference/methods/chat.postMessage (and
	// chat.postEphemeral, chat.update, chat.delete, chat.startStream,
	// chat.appendStream, chat.stopStream): chat:write.
	"chat.postMessage":   "chat:write",
	"chat.postEphemeral": "chat:write",
	"chat.update":        "chat:write",
	"chat.delete":        "chat:write", // the Stop button's message when a turn ends
	"chat.startStream":   "chat:write",
	"chat.appendStream":  "chat:write",
	"chat.stopStream":    "chat:write",
	// https://docs.slack.dev/reference/methods/assistant.threads.setStatus:
	// chat:write (assistant:write still accepted for now:
	// https://docs.slack.dev/changelog/2026/03/05/set-status-scope-update).
	"assistant.threads.setStatus": "chat:write",
	// https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts
	// and https://docs.slack.dev/reference/methods/assistant.threads.setTitle:
	// assistant:write.
	"assistant.threads.setSuggestedPrompts": "assistant:write",
	"assistant.threads.setTitle":            "assistant:write",
	// agents.sessions.setStatus and agents.sessions.rename: "Bot token
	// scope: chat:write" (slackapi/java-slack-sdk#1633, mirroring
	// https://docs.slack.dev/reference/methods/agents.sessions.setStatus).
	"agents.sessions.setStatus": "chat:write",
	"agents.sessions.rename":    "chat:write",
	// https://docs.slack.dev/reference/methods/views.publish: no scope.
	"views.publish": "",
	// https://docs.slack.dev/reference/methods/conversations.open: im:write
	// (among channels:manage, groups:write, mpim:write).
	"conversations.open": "im:write",
	// https://docs.slack.dev/reference/methods/files.getUploadURLExternal and
	// files.completeUploadExternal: files:write.
	"files.getUploadURLExternal":   "files:write",
	"files.completeUploadExternal": "files:write",
	// https://docs.slack.dev/reference/methods/conversations.replies:
	// channels:history (groups:, im:, mpim:history by the conversation's
	// type; all four are declared for the message events).
	"conversations.replies": "channels:history",
	// https://docs.slack.dev/reference/methods/conversations.info and
	// conversations.members: channels:read for a public channel,
	// groups:read for a private one (the exercise asks about both).
	"conversations.info":    "channels:read",
	"conversations.members": "groups:read",
	// https://docs.slack.dev/reference/methods/users.info: users:read.
	"users.info":                "users:read",
	fakeslack.MethodUpload:      "", // the upload_url handed out by files.getUploadURLExternal
	fakeslack.MethodDownload:    "files:read",
	fakeslack.MethodResponseURL: "", // a slash command's response_url
}

// eventScopes maps each Events API event the bot handles to its bot scope.
var eventScopes = map[string]string{
	"app_mention":      "app_mentions:read",
	"message.channels": "channels:history",
	"message.groups":   "groups:history",
	"message.im":       "im:history",
	"message.mpim":     "mpim:history",
	// The agent surface's events need no scope of their own.
	"agent_session_stopped": "",
	"app_home_opened":       "",
	"app_context_changed":   "",
	// https://docs.slack.dev/reference/events/member_left_channel:
	// channels:read (groups:read for private channels);
	// channel_left: channels:read; group_left: groups:read.
	"member_left_channel": "channels:read",
	"channel_left":        "channels:read",
	"group_left":          "groups:read",
}

// loadManifest decodes manifest.yaml at the repo root strictly: a key slack-go's
// Manifest does not know is an error, as a typo would be for Slack.
func loadManifest(t *testing.T) slack.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m slack.Manifest
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("manifest.yaml: %v", err)
	}
	return m
}

// The manifest has what Slack requires to accept it, and what agentbot
// needs to run over Socket Mode.
func TestManifestShape(t *testing.T) {
	m := loadManifest(t)
	if m.Display.Name != "agentbot" || len(m.Display.Name) > 35 {
		t.Errorf("display_information.name = %q", m.Display.Name)
	}
	if n := len(m.Display.Description); n == 0 || n > 140 {
		t.Errorf("display_information.description has %d characters, want 1..140", n)
	}
	if n := len(m.Display.LongDescription); n != 0 && (n < 175 || n > 4000) {
		t.Errorf("display_information.long_description has %d characters, want 175..4000", n)
	}
	if !regexp.MustCompile(`^#[0-9a-fA-F]{6}$`).MatchString(m.Display.BackgroundColor) {
		t.Errorf("background_color = %q, want #rrggbb", m.Display.BackgroundColor)
	}
	if m.Features.BotUser.DisplayName != "agentbot" || !m.Features.BotUser.AlwaysOnline {
		t.Errorf("bot_user = %+v", m.Features.BotUser)
	}
	// The agent messaging experience: a description and at most four
	// prompts, each with a title and a message.
	if av := m.Features.AgentView; av == nil || strings.TrimSpace(av.AgentDescription) == "" || len(av.SuggestedPrompts) > 4 {
		t.Errorf("agent_view = %+v, want a description and up to 4 suggested prompts", av)
	} else {
		for _, p := range av.SuggestedPrompts {
			if p.Title == "" || p.Message == "" {
				t.Errorf("suggested prompt %+v lacks a title or a message", p)
			}
		}
	}
	s := m.Settings
	if !s.SocketModeEnabled {
		t.Error("socket_mode_enabled is off; agentbot connects over Socket Mode")
	}
	if s.Interactivity == nil || !s.Interactivity.IsEnabled {
		t.Error("interactivity is off; the picker and menu buttons need it")
	}
	if s.Interactivity != nil && s.Interactivity.RequestUrl != "" {
		t.Error("interactivity has a request_url; Socket Mode needs none")
	}
	if s.OrgDeployEnabled || s.TokenRotationEnabled {
		t.Errorf("org_deploy_enabled=%v token_rotation_enabled=%v, want false", s.OrgDeployEnabled, s.TokenRotationEnabled)
	}
	if s.EventSubscriptions == nil || s.EventSubscriptions.RequestUrl != "" {
		t.Errorf("event_subscriptions = %+v, want bot events and no request_url", s.EventSubscriptions)
	}
	var agent *slack.ManifestSlashCommand
	for i, c := range m.Features.SlashCommands {
		if c.Command == "/agent" {
			agent = &m.Features.SlashCommands[i]
		}
	}
	switch {
	case agent == nil:
		t.Error("/agent is not declared")
	case agent.Url != "":
		t.Error("/agent has a url; Socket Mode needs none")
	case agent.ShouldEscape || agent.Description == "":
		t.Errorf("/agent = %+v", *agent)
	default:
		// Every verb /agent answers (slash.go's onSlash).
		for _, sub := range []string{"list", "use <agent>", "status", "reset", "reload", "tools", "add|remove <server>", "help"} {
			if !strings.Contains(agent.UsageHint, sub) {
				t.Errorf("/agent usage_hint %q lacks %q", agent.UsageHint, sub)
			}
		}
	}
	// Direct messages reach the bot only through its Messages tab.
	if h := m.Features.AppHome; !h.MessagesTabEnabled || h.MessagesTabReadOnlyEnabled {
		t.Errorf("app_home = %+v: people cannot write to the bot in a DM", h)
	}
}

// Every event the bot handles is subscribed, every scope the code relies on
// is declared, and no declared scope is unused. The methods the code calls
// are not listed by hand: a scenario that touches every feature runs against
// fakeslack, whose recorded calls name them.
func TestManifestScopesMatchTheCode(t *testing.T) {
	r := newRig(t, rigOpts{})
	used := exerciseEverything(t, r)

	m := loadManifest(t)
	declared := m.OAuthConfig.Scopes.Bot
	need := map[string][]string{} // scope → what needs it

	var methods []string
	seen := map[string]bool{}
	for _, c := range r.slack.Calls() {
		if !seen[c.Method] {
			seen[c.Method] = true
			methods = append(methods, c.Method)
		}
	}
	for _, meth := range methods {
		scope, ok := methodScopes[meth]
		if !ok {
			t.Errorf("method %s used but has no scope mapping (add it to methodScopes)", meth)
			continue
		}
		if scope != "" {
			need[scope] = append(need[scope], meth)
		}
	}
	// https://docs.slack.dev/reference/methods/chat.postMessage (Authorship)
	// and https://docs.slack.dev/reference/scopes/chat.write.customize: a
	// message posted under a custom username or icon needs
	// chat:write.customize (without it Slack ignores them).
	for _, c := range r.slack.Calls() {
		if c.Form.Get("username") != "" || c.Form.Get("icon_emoji") != "" || c.Form.Get("icon_url") != "" {
			need[fakeslack.ScopeCustomize] = append(need[fakeslack.ScopeCustomize], c.Method+" with username")
		}
	}
	for meth := range methodScopes {
		if !seen[meth] {
			t.Errorf("methodScopes maps %s, but the scenario never called it: extend the scenario or drop the entry", meth)
		}
	}

	subscribed := m.Settings.EventSubscriptions.BotEvents
	for ev, handled := range used {
		if !handled {
			t.Errorf("the bot did not answer a %s event", ev)
			continue
		}
		if !slices.Contains(subscribed, ev) {
			t.Errorf("the bot handles %s but the manifest does not subscribe to it", ev)
		}
		if sc := eventScopes[ev]; sc != "" {
			need[sc] = append(need[sc], "event "+ev)
		}
	}
	for _, ev := range subscribed {
		if _, ok := used[ev]; !ok {
			t.Errorf("the manifest subscribes to %s, which the bot does not handle", ev)
		}
	}
	if len(m.Features.SlashCommands) > 0 {
		need["commands"] = append(need["commands"], "slash command /agent")
	}

	var scopes []string
	for s := range need {
		scopes = append(scopes, s)
	}
	sort.Strings(scopes)
	for _, s := range scopes {
		if !slices.Contains(declared, s) {
			t.Errorf("scope %s is needed by %v but not declared", s, need[s])
		}
	}
	for _, s := range declared {
		if _, ok := need[s]; !ok {
			t.Errorf("declared scope %s is used by nothing the bot does", s)
		}
	}
	if len(m.OAuthConfig.Scopes.User) > 0 {
		t.Errorf("user scopes %v: agentbot uses only its bot token", m.OAuthConfig.Scopes.User)
	}
}

// sendMessage sends a user's message event of a channel type ("channel",
// "group", "im", "mpim") and returns its ts.
func sendMessage(r *rig, ch, chType, text, thread string) string {
	ts := r.slack.NextTS()
	r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: user, Channel: ch, ChannelType: chType,
		Text: text, TimeStamp: ts, ThreadTimeStamp: thread})
	return ts
}

// exerciseEverything drives every feature of the bot once: /agent (and its
// response_url fallback), a mention with a shared file that saves and
// uploads a document over a stream, messages of every channel type, the
// picker, and a DM turn with assistant status. It reports, per event kind
// of the manifest, whether the bot answered it.
func exerciseEverything(t *testing.T, r *rig) map[string]bool {
	ctx := context.Background()
	mention := "<@" + r.slack.BotUserID() + "> "
	ephemeralWith := func(sub string) func() bool {
		return func() bool {
			for _, m := range r.slack.Messages() {
				if (m.Kind == fakeslack.KindEphemeral || m.Kind == fakeslack.KindResponseURL) && strings.Contains(m.Text, sub) {
					return true
				}
			}
			return false
		}
	}
	r.slack.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "use product-lead", UserID: user, ChannelID: channel})
	r.waitFor("/agent use", ephemeralWith("is now this channel's default"))
	r.slack.FailNext("chat.postEphemeral", "channel_not_found")
	r.slack.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "help", UserID: user, ChannelID: "C0NOTMEMBER"})
	r.waitFor("/agent help over response_url", func() bool {
		for _, m := range r.slack.Messages() {
			if m.Kind == fakeslack.KindResponseURL && strings.Contains(m.Text, "/agent use") {
				return true
			}
		}
		return false
	})

	// /agent project new and use, by an admin: conversations.info on the
	// public channel, then on a private one, whose members are asked.
	r.slack.AddUser(slack.User{ID: user, TeamID: r.slack.TeamID(), Name: "user-u0user1", RealName: "User " + user, IsAdmin: true,
		Profile: slack.UserProfile{DisplayName: "user-u0user1", RealName: "User " + user}})
	r.slack.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "project new launch", UserID: user, ChannelID: channel})
	r.waitFor("/agent project new", ephemeralWith("now shares the project"))
	r.slack.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "project use launch", UserID: user, ChannelID: "G0PRIV9"})
	r.waitFor("/agent project use in a private channel", ephemeralWith("asked this channel for the approval"))
	// A first mention inside a thread people talk in: conversations.replies.
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), "C0CHAN3", "product-lead"); err != nil {
		t.Fatal(err)
	}
	root := sendMessage(r, "C0CHAN3", "channel", "a discussion before the bot", "")
	sendMessage(r, "C0CHAN3", "channel", mention+"hello", root)
	r.waitFor("the thread read", func() bool { return len(r.slack.CallsTo("conversations.replies")) > 0 })

	// app_mention with a file: download, greeting, a streamed turn that
	// saves a document, and its upload.
	used := map[string]bool{}
	f := r.slack.AddFile("notes.md", []byte("Customer notes."))
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "brief.md", "content": "# Brief\n"})}},
		fakemodel.Reply{Text: "Saved a first brief."},
	)
	ts := r.slack.NextTS()
	r.slack.SendEvent(map[string]any{"type": "app_mention", "user": user, "channel": channel, "ts": ts,
		"text": mention + "see attached", "files": []any{f}})
	r.waitFor("the upload and the answer", func() bool {
		ss := r.slack.Streams()
		return len(r.slack.Uploads()) == 1 && len(ss) == 1 && ss[0].Stopped
	})
	used["app_mention"] = len(r.slack.CallsTo(fakeslack.MethodDownload)) == 1 && len(r.botMessages(ts)) >= 2

	// message.* of each channel type, mentioning the bot: a picker each.
	for ev, c := range map[string][2]string{
		"message.channels": {"C0CHAN2", "channel"},
		"message.groups":   {"G0GROUP1", "group"},
		"message.mpim":     {"G0MPIM1", "mpim"},
	} {
		ts := sendMessage(r, c[0], c[1], mention+"hello", "")
		r.waitFor(ev+" picker", func() bool { return len(r.slack.ThreadMessages(c[0], ts)) >= 2 })
		used[ev] = true
	}

	// message.im without a mention: picker, pick (chat.update closes it),
	// greeting, and the waiting message's turn with assistant status.
	const dm = "D0DM1"
	ts = sendMessage(r, dm, "im", "hello in private", "")
	var picker fakeslack.Message
	r.waitFor("the DM picker", func() bool {
		for _, m := range r.slack.ThreadMessages(dm, ts) {
			if m.Kind != fakeslack.KindUser {
				picker = m
				return true
			}
		}
		return false
	})
	r.model.Enqueue(fakemodel.Reply{Text: "Hi in private."})
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: dm, MessageTS: picker.TS, ThreadTS: ts, ActionID: "pick:retro-coach", Value: "retro-coach"})
	r.waitFor("the DM answer", func() bool {
		ss := r.slack.Streams()
		return len(ss) == 2 && ss[1].Stopped && ss[1].Channel == dm && len(r.slack.Statuses()) > 0
	})
	used["message.im"] = strings.Contains(r.slack.Streams()[1].Text, "Hi in private.")

	// agent_session_stopped: Slack's stop button stops a running turn.
	r.model.Enqueue(fakemodel.Reply{Text: "never shown", Delay: 3 * time.Second})
	before := r.model.Calls()
	sendMessage(r, dm, "im", "a long question", ts)
	r.waitFor("the slow turn", func() bool { return r.model.Calls() > before })
	r.slack.SendEvent(map[string]any{"type": "agent_session_stopped", "channel": dm, "thread_ts": ts, "user": user})
	r.waitFor("the stop", func() bool {
		for _, m := range r.slack.ThreadMessages(dm, ts) {
			if strings.Contains(m.Text, "Stopped by") {
				return true
			}
		}
		return false
	})
	used["agent_session_stopped"] = true

	// The agent pane: a greeting with suggested prompts, and the context.
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": user, "channel": "D0PANE9", "tab": "messages"})
	r.waitFor("the pane's prompts", func() bool { return len(r.slack.CallsTo("assistant.threads.setSuggestedPrompts")) == 1 })
	used["app_home_opened"] = true
	r.slack.SendEvent(map[string]any{"type": "app_context_changed", "user": user, "channel": "D0PANE9",
		"context": map[string]any{"entities": []any{map[string]any{"type": "slack#/types/channel_id", "value": "C0CTX1"}}}})
	used["app_context_changed"] = true

	// The Home tab, and a session started from it in the user's DM.
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": user, "tab": "home"})
	r.waitFor("the home tab", func() bool { return len(r.slack.CallsTo("views.publish")) > 0 })
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ActionID: "home:product-lead", Value: "product-lead"})
	r.waitFor("the DM opened", func() bool { return len(r.slack.CallsTo("conversations.open")) > 0 })

	// Membership events drop what the bot knew of a channel: the Home tab
	// asks Slack again for the members of the channel someone left.
	r.slack.SetMembers(channel, user)
	for _, ev := range []map[string]any{
		{"type": "member_left_channel", "user": user, "channel": channel, "channel_type": "C", "team": r.slack.TeamID()},
		{"type": "channel_left", "channel": channel},
		{"type": "group_left", "channel": channel},
	} {
		before := len(r.slack.CallsTo("conversations.members"))
		r.slack.SendEvent(ev)
		r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": user, "tab": "home"})
		name := ev["type"].(string)
		r.waitFor(name+" dropping the members", func() bool { return len(r.slack.CallsTo("conversations.members")) > before })
		used[name] = true
	}
	return used
}

package bot_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/bot/workspace"
	"agentbot/storage"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// space is one workspace of the installs tests: its channel, its bot user,
// and the enterprise when it is answered by an org-wide install.
type space struct {
	team, enterprise, channel, botUser, token string
}

// installsRig is a bot serving several workspaces from the installation
// store, over one Socket Mode connection (one app token), as an app
// distributed to other workspaces or installed org-wide runs.
type installsRig struct {
	*rig
	vault   *credentials.Vault
	clients *workspace.Installed
	skew    atomic.Int64 // nanoseconds added to the clients' clock
	logs    *syncBuffer
}

var (
	spaceA = space{team: "TA0000001", channel: "CA0000001", botUser: "UBOTA0001", token: "xoxb-install-a"}
	spaceB = space{team: "TB0000001", channel: "CB0000001", botUser: "UBOTB0001", token: "xoxb-install-b"}
	spaceE = space{team: "TE0000001", enterprise: "E00000001", channel: "CE0000001", botUser: "UBOTE0001", token: "xoxb-install-org"}
)

func newInstallsRig(t *testing.T, rotateA bool) *installsRig {
	t.Helper()
	ir := &installsRig{logs: &syncBuffer{}}
	raw := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(raw)
	key, _ := secretbox.NewKey(raw)
	kr, err := secretbox.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	ir.rig = newRig(t, rigOpts{mutateRig: func(r *rig, cfg *bot.Config) {
		st := cfg.Store.(storage.Credentials)
		if ir.vault, err = credentials.New(st, kr, nil); err != nil {
			t.Fatal(err)
		}
		s := r.slack
		ir.clients = &workspace.Installed{Vault: ir.vault, ClientID: s.ClientID(), ClientSecret: s.ClientSecret(),
			Options: []slack.Option{slack.OptionAPIURL(s.APIURL())}, APIURL: s.APIURL(), CacheTTL: time.Nanosecond,
			Now: func() time.Time { return time.Now().Add(time.Duration(ir.skew.Load())) }}
		// The app-level token alone: no bot token answers anything.
		cfg.API = slack.New("", slack.OptionAppLevelToken(s.AppToken()), slack.OptionAPIURL(s.APIURL()))
		cfg.Clients = ir.clients
		cfg.Logger = slog.New(slog.NewTextHandler(ir.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		ir.install(t, s, cfg, rotateA)
	}})
	return ir
}

// install stores the three installations and tells the fake Slack of
// them; A's rotates when rotateA, its token due for a refresh 40 minutes
// from now.
func (ir *installsRig) install(t *testing.T, s *fakeslack.Server, cfg *bot.Config, rotateA bool) {
	t.Helper()
	ctx := context.Background()
	a := fakeslack.Install{Team: spaceA.team, BotToken: spaceA.token, BotUserID: spaceA.botUser}
	stored := credentials.Installation{Team: spaceA.team, BotToken: spaceA.token, BotUserID: spaceA.botUser}
	if rotateA {
		a.Rotate, a.RefreshToken, a.TTL = true, "xoxe-1-refresh-a", 40*time.Minute
		stored.RefreshToken, stored.Expiry = a.RefreshToken, time.Now().Add(40*time.Minute)
	}
	s.AddInstall(a)
	s.AddInstall(fakeslack.Install{Team: spaceB.team, BotToken: spaceB.token, BotUserID: spaceB.botUser})
	s.AddInstall(fakeslack.Install{Enterprise: spaceE.enterprise, Org: true, BotToken: spaceE.token, BotUserID: spaceE.botUser})
	for _, sp := range []space{spaceA, spaceB, spaceE} {
		s.SetChannelTeam(sp.channel, sp.team, sp.enterprise)
		if err := storage.SetChannelDefault(ctx, cfg.Store, sp.team, sp.channel, "product-lead"); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range []credentials.Installation{stored,
		{Team: spaceB.team, BotToken: spaceB.token, BotUserID: spaceB.botUser},
		{Enterprise: spaceE.enterprise, EnterpriseInstall: true, BotToken: spaceE.token, BotUserID: spaceE.botUser}} {
		if err := ir.vault.PutInstallation(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
}

// say sends a person's message in sp's channel (a mention when thread is
// ""), as Slack sends it to the app: with sp's team and enterprise.
func (ir *installsRig) say(sp space, text, thread string) string {
	ts := ir.slack.NextTS()
	opt := fakeslack.EventOptions{TeamID: sp.team, EnterpriseID: sp.enterprise}
	if thread == "" {
		ir.slack.SendEventWith(slackevents.AppMentionEvent{Type: "app_mention", User: user, Channel: sp.channel,
			Text: "<@" + sp.botUser + "> " + text, TimeStamp: ts}, opt)
		return ts
	}
	ir.slack.SendEventWith(slackevents.MessageEvent{Type: "message", User: user, Channel: sp.channel, ChannelType: "channel",
		Text: text, TimeStamp: ts, ThreadTimeStamp: thread}, opt)
	return ts
}

func (ir *installsRig) botMessagesIn(channel, thread string) int {
	n := 0
	for _, m := range ir.slack.ThreadMessages(channel, thread) {
		if m.Kind != fakeslack.KindUser {
			n++
		}
	}
	return n
}

// channelOf is the channel a recorded call names, "" for none.
func channelOf(c fakeslack.Call) string {
	if ch := c.Form.Get("channel"); ch != "" {
		return ch
	}
	if ch := c.Form.Get("channel_id"); ch != "" {
		return ch
	}
	var body struct {
		Channel   string `json:"channel"`
		ChannelID string `json:"channel_id"`
	}
	if json.Unmarshal(c.JSON, &body) == nil {
		return body.Channel + body.ChannelID
	}
	return ""
}

// checkTokens fails t when a call naming a channel of sp was made with
// another token than allowed (sp's, or those listed), or Slack refused
// its token there.
func checkTokens(t *testing.T, calls []fakeslack.Call, sp space, allowed ...string) int {
	t.Helper()
	n := 0
	for _, c := range calls {
		if channelOf(c) != sp.channel {
			continue
		}
		n++
		if c.Token != sp.token && !contains(allowed, c.Token) {
			t.Errorf("%s in %s's channel made with another token", c.Method, sp.team)
		}
		if contains([]string{"channel_not_found", "invalid_auth", "not_authed", "token_expired", "token_revoked", "account_inactive"}, c.Error) {
			t.Errorf("%s in %s's channel: %s", c.Method, sp.team, c.Error)
		}
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestInstallsEachAnsweredWithItsToken: two workspaces and a workspace of
// an organization installed org-wide talk to one bot over one Socket
// Mode connection, their events interleaved; each is answered in its
// own channel with its own installation's token, which the fake Slack
// refuses in any other workspace's channel.
func TestInstallsEachAnsweredWithItsToken(t *testing.T) {
	ir := newInstallsRig(t, false)
	spaces := []space{spaceA, spaceB, spaceE}
	threads := map[string]string{}
	for _, sp := range spaces {
		threads[sp.team] = ir.say(sp, "hello", "")
	}
	for _, sp := range spaces {
		ir.waitFor(sp.team+"'s greeting", func() bool { return ir.botMessagesIn(sp.channel, threads[sp.team]) >= 1 })
	}
	for i := len(spaces) - 1; i >= 0; i-- { // the replies in the other order
		ir.say(spaces[i], "*help", threads[spaces[i].team])
	}
	for _, sp := range spaces {
		ir.waitFor(sp.team+"'s menu", func() bool { return ir.botMessagesIn(sp.channel, threads[sp.team]) >= 2 })
	}
	calls := ir.slack.Calls()
	for _, sp := range spaces {
		if n := checkTokens(t, calls, sp); n < 2 {
			t.Errorf("%s: %d calls in its channel, want its greeting and menu at least", sp.team, n)
		}
	}
	for _, c := range calls {
		if c.Token == ir.slack.BotToken() {
			t.Errorf("%s made with the default bot token, which no installation holds", c.Method)
		}
	}
}

// TestInstallsTokenRotatedMidConversation: A's token is refreshed when it
// comes due between two messages of a thread; the answer after it uses
// the new token, which the store keeps (sealed).
func TestInstallsTokenRotatedMidConversation(t *testing.T) {
	ir := newInstallsRig(t, true)
	thread := ir.say(spaceA, "hello", "")
	ir.waitFor("the greeting", func() bool { return ir.botMessagesIn(spaceA.channel, thread) >= 1 })
	if ir.slack.Refreshes() != 0 {
		t.Fatalf("refreshed %d times before the token was due", ir.slack.Refreshes())
	}
	ir.skew.Store(int64(15 * time.Minute)) // 25 minutes left: due (DefaultRefreshBefore)
	ir.say(spaceA, "*help", thread)
	ir.waitFor("the menu", func() bool { return ir.botMessagesIn(spaceA.channel, thread) >= 2 })
	if ir.slack.Refreshes() != 1 {
		t.Fatalf("refreshes = %d, want 1", ir.slack.Refreshes())
	}
	in, err := ir.vault.Installation(context.Background(), spaceA.team, "")
	if err != nil {
		t.Fatal(err)
	}
	if in.BotToken == spaceA.token || in.RefreshToken == "xoxe-1-refresh-a" {
		t.Fatal("the refreshed tokens were not stored")
	}
	calls := ir.slack.Calls()
	checkTokens(t, calls, spaceA, in.BotToken)
	last := calls[len(calls)-1]
	for i := len(calls) - 1; i >= 0; i-- {
		if channelOf(calls[i]) == spaceA.channel {
			last = calls[i]
			break
		}
	}
	if last.Token != in.BotToken {
		t.Fatalf("the last call in A's channel (%s) was not made with the refreshed token", last.Method)
	}
}

// TestInstallsUninstallThenLateEvent: app_uninstalled forgets B's
// installation; a message of B that comes after it is ignored (logged),
// and A is still answered.
func TestInstallsUninstallThenLateEvent(t *testing.T) {
	ctx := context.Background()
	ir := newInstallsRig(t, false)
	ir.slack.SendEventWith(map[string]any{"type": "app_uninstalled"}, fakeslack.EventOptions{TeamID: spaceB.team})
	ir.waitFor("B's installation to be forgotten", func() bool {
		_, err := ir.vault.Installation(ctx, spaceB.team, "")
		return errors.Is(err, storage.ErrNotFound)
	})
	ir.slack.RevokeInstall(spaceB.token)
	late := ir.say(spaceB, "hello", "")
	ir.waitFor("the late event to be logged", func() bool {
		return strings.Contains(ir.logs.String(), "not installed in; ignored") && strings.Contains(ir.logs.String(), spaceB.team)
	})
	a := ir.say(spaceA, "hello", "")
	ir.waitFor("A's greeting", func() bool { return ir.botMessagesIn(spaceA.channel, a) >= 1 })
	if n := ir.botMessagesIn(spaceB.channel, late); n != 0 {
		t.Fatalf("B, uninstalled, got %d bot messages", n)
	}
	for _, c := range ir.slack.Calls() {
		if c.Token == spaceB.token {
			t.Fatalf("%s made with B's token after the uninstall", c.Method)
		}
	}
	if _, err := ir.vault.Installation(ctx, spaceE.team, spaceE.enterprise); err != nil {
		t.Fatalf("the org's installation went with B's: %v", err)
	}
	// tokens_revoked naming the org's bot user forgets the org's install.
	ir.slack.SendEventWith(map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"bot": []string{spaceE.botUser}}},
		fakeslack.EventOptions{TeamID: spaceE.team, EnterpriseID: spaceE.enterprise})
	ir.waitFor("the org's installation to be forgotten", func() bool {
		_, err := ir.vault.Installation(ctx, spaceE.team, spaceE.enterprise)
		return errors.Is(err, storage.ErrNotFound)
	})
}

// TestInstallsHomeTabKeepsToItsWorkspace: a person of two workspaces (one
// user id, as on Enterprise Grid) sees in each Home tab the threads of
// that workspace only, published with its token.
func TestInstallsHomeTabKeepsToItsWorkspace(t *testing.T) {
	ir := newInstallsRig(t, false)
	for _, sp := range []space{spaceA, spaceB} {
		ir.slack.SetMembers(sp.channel, user)
		th := ir.say(sp, "hello", "")
		ir.waitFor(sp.team+"'s greeting", func() bool { return ir.botMessagesIn(sp.channel, th) >= 1 })
	}
	for _, sp := range []space{spaceA, spaceB} {
		before := len(ir.slack.CallsTo("views.publish"))
		ir.slack.SendEventWith(map[string]any{"type": "app_home_opened", "user": user, "tab": "home"}, fakeslack.EventOptions{TeamID: sp.team})
		ir.waitFor(sp.team+"'s home tab", func() bool { return len(ir.slack.CallsTo("views.publish")) > before })
		pub := ir.slack.CallsTo("views.publish")[before]
		body := string(pub.JSON) + pub.Form.Encode()
		other := map[string]string{spaceA.team: spaceB.channel, spaceB.team: spaceA.channel}[sp.team]
		if pub.Token != sp.token {
			t.Errorf("%s's home tab published with another token", sp.team)
		}
		if !strings.Contains(body, sp.channel) {
			t.Errorf("%s's home tab lacks its own thread:\n%s", sp.team, body)
		}
		if strings.Contains(body, other) {
			t.Errorf("%s's home tab shows another workspace's thread (%s)", sp.team, other)
		}
	}
}

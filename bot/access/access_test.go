package access

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/slack-go/slack"

	"agentbot/bot/fakeslack"
	"agentbot/bot/render"
)

// The rules as a table of cases against a Slack that answers as its
// documentation says (bot/fakeslack): every rule of the table has a case
// it refuses (TestEveryRuleRefuses checks that), so removing a rule fails
// its case.

const (
	team   = "T0TEAM1"
	team2  = "T0TEAM2"
	alice  = "U0ALICE"
	bob    = "U0BOB"
	admin  = "U0ADMIN" // in Config.Admins
	wsAdm  = "U0WSADMIN"
	orgAdm = "U0ORGADMIN"
	pub    = "C0PUBLIC"
	priv   = "G0PRIVATE"
	priv2  = "G0PRIVATE2"
	hidden = "G0HIDDEN" // private, and the bot is not in it
	pub2   = "C0OTHERTEAM"
	dm     = "D0ALICE"
)

// world is a workspace of an org: who is in which channel, who is admin.
func world(t *testing.T) (*fakeslack.Server, *Slack) {
	t.Helper()
	fs := fakeslack.New(t, fakeslack.WithTeam(team, "one"))
	fs.SetMembers(pub, alice, bob, admin)
	fs.SetMembers(priv, alice, admin)
	fs.SetMembers(priv2, bob)
	fs.SetChannel(hidden, fakeslack.Channel{Private: true, BotOut: true})
	fs.SetMembers(hidden, alice)
	fs.SetMembers(pub2, bob)
	fs.AddUser(slack.User{ID: wsAdm, TeamID: team, IsAdmin: true})
	fs.AddUser(slack.User{ID: bob, TeamID: team2, IsAdmin: true}) // an admin of workspace 2
	fs.AddUser(slack.User{ID: orgAdm, TeamID: team2, Enterprise: slack.EnterpriseUser{ID: orgAdm, EnterpriseID: "E0ORG", IsAdmin: true}})
	web := render.Slack{API: fs.Client(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return fs, NewSlack(web, 0)
}

var cfg = Config{Admins: []string{admin}}

func ch(id string) Channel { return Channel{Team: team, ID: id} }

type accessCase struct {
	name   string
	cfg    *Config
	person string
	action Action
	thing  Thing
	fail   string // a Slack method to fail once first
	want   string // "" allowed, else the rule that refuses
}

var accessCases = []accessCase{
	// allowed user
	{name: "an allowed user uses", cfg: &Config{AllowedUsers: []string{alice}}, person: alice, action: Use, thing: Thing{Channel: ch(pub)}},
	{name: "a user off the list uses", cfg: &Config{AllowedUsers: []string{alice}}, person: bob, action: Use, thing: Thing{Channel: ch(pub)}, want: "allowed user"},
	{name: "a user off the list opens Home", cfg: &Config{AllowedUsers: []string{alice}}, person: bob, action: Home, want: "allowed user"},
	{name: "a user off the list approves a bind", cfg: &Config{AllowedUsers: []string{alice}}, person: admin, action: Bind,
		thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub), ch(priv)}}, want: "allowed user"},
	// allowed channel
	{name: "a channel off the list", cfg: &Config{AllowedChannels: []string{pub}}, person: alice, action: Use, thing: Thing{Channel: ch(priv)}, want: "allowed channel"},
	{name: "a DM is never off the list", cfg: &Config{AllowedChannels: []string{pub}}, person: alice, action: Use, thing: Thing{Channel: ch(dm)}},
	// thread owner or admin
	{name: "the owner decides", person: alice, action: Decide, thing: Thing{Channel: ch(priv), Owner: alice}},
	{name: "a member who is not the owner decides", person: bob, action: Decide, thing: Thing{Channel: ch(pub), Owner: alice}, want: "thread owner or admin"},
	{name: "a configured admin decides", person: admin, action: Decide, thing: Thing{Channel: ch(pub), Owner: alice}},
	{name: "a workspace admin is not a configured admin", person: wsAdm, action: Decide, thing: Thing{Channel: ch(pub), Owner: alice}, want: "thread owner or admin"},
	{name: "a thread without an owner", person: bob, action: Decide, thing: Thing{Channel: ch(pub)}, want: "thread owner or admin"},
	// member of the channel
	{name: "an owner who left the private channel decides", person: alice, action: Decide, thing: Thing{Channel: ch(priv2), Owner: alice}, want: "member of the channel"},
	{name: "a member sees", person: alice, action: See, thing: Thing{Channel: ch(priv)}},
	{name: "a non-member sees a private channel", person: bob, action: See, thing: Thing{Channel: ch(priv)}, want: "member of the channel"},
	{name: "a non-member sees a public channel", person: wsAdm, action: See, thing: Thing{Channel: ch(pub)}, want: "member of the channel"},
	{name: "Slack fails to answer membership", person: alice, action: See, thing: Thing{Channel: ch(priv)}, fail: "conversations.members", want: "member of the channel"},
	{name: "a channel the bot is not in", person: alice, action: See, thing: Thing{Channel: ch(hidden)}, want: "member of the channel"},
	{name: "a DM's owner sees it", person: alice, action: See, thing: Thing{Channel: ch(dm), Owner: alice}},
	{name: "someone else sees a DM", person: bob, action: See, thing: Thing{Channel: ch(dm), Owner: alice}, want: "member of the channel"},
	{name: "no channel named", person: alice, action: See, want: "member of the channel"},
	// workspace admin
	{name: "a configured admin administers", person: admin, action: Administer, thing: Thing{Channel: ch(pub)}},
	{name: "a workspace admin administers", person: wsAdm, action: Administer, thing: Thing{Channel: ch(pub)}},
	{name: "an org admin administers", person: orgAdm, action: Administer, thing: Thing{Channel: ch(pub)}},
	{name: "a member administers", person: alice, action: Administer, thing: Thing{Channel: ch(pub)}, want: "workspace admin"},
	{name: "another workspace's admin administers", person: bob, action: Administer, thing: Thing{Channel: ch(pub)}, want: "workspace admin"},
	{name: "users.info fails", person: wsAdm, action: Administer, thing: Thing{Channel: ch(pub)}, fail: "users.info", want: "workspace admin"},
	// member of every private channel
	{name: "a binding of the channel alone", person: bob, action: Bind, thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub)}}},
	{name: "two public channels", person: wsAdm, action: Bind, thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub), ch("C0ANOTHER")}}},
	{name: "a member of the private source", person: alice, action: Bind, thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub), ch(priv)}}},
	{name: "a non-member of the private source", person: bob, action: Bind, thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub), ch(priv)}}, want: "member of every private channel"},
	{name: "an admin who is not a member of a source", person: wsAdm, action: Bind, thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub), ch(priv)}}, want: "member of every private channel"},
	{name: "a source of unknown origin", person: alice, action: Bind, thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub), {ID: UnknownChannel}}}, want: "member of every private channel"},
	{name: "a source in another workspace", person: alice, action: Bind, thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub), {Team: team2, ID: pub2}}}, want: "member of every private channel"},
	{name: "a member of the source in another workspace", person: bob, action: Bind, thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub), {Team: team2, ID: pub2}}}},
	{name: "a private source the bot is not in", person: alice, action: Bind, thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub), ch(hidden)}}, want: "member of every private channel"},
	{name: "conversations.info fails", person: wsAdm, action: Bind, thing: Thing{Channel: ch(pub), Sources: []Channel{ch(pub), ch("C0ANOTHER")}}, fail: "conversations.info", want: "member of every private channel"},
	// no one, and nothing known
	{name: "no person", person: "", action: Use, thing: Thing{Channel: ch(pub)}, want: "person"},
	{name: "an unknown action", person: alice, action: "launch", thing: Thing{Channel: ch(pub)}, want: "action"},
}

func TestMay(t *testing.T) {
	for _, c := range accessCases {
		t.Run(c.name, func(t *testing.T) {
			fs, s := world(t)
			if c.fail != "" {
				fs.FailNext(c.fail, "internal_error")
			}
			conf := cfg
			if c.cfg != nil {
				conf = *c.cfg
				conf.Admins = cfg.Admins
			}
			a := May(context.Background(), s, conf, c.person, c.action, c.thing)
			switch {
			case c.want == "" && !a.OK:
				t.Fatalf("refused by %q: %s", a.Rule, a.Why)
			case c.want != "" && a.OK:
				t.Fatalf("allowed; want refused by %q", c.want)
			case c.want != "" && a.Rule != c.want:
				t.Fatalf("refused by %q (%s); want %q", a.Rule, a.Why, c.want)
			case c.want != "" && a.Why == "":
				t.Fatal("refused without saying why")
			}
		})
	}
}

// TestEveryRuleRefuses: each rule of the table refuses in at least one
// case, and allows in at least one, so a rule removed or made to allow
// everything fails TestMay.
func TestEveryRuleRefuses(t *testing.T) {
	for _, r := range rules {
		refused := slices.ContainsFunc(accessCases, func(c accessCase) bool { return c.want == r.name })
		allowed := slices.ContainsFunc(accessCases, func(c accessCase) bool { return c.want == "" && slices.Contains(r.actions, c.action) })
		if !refused || !allowed {
			t.Errorf("rule %q: a refusing case %v, an allowing case %v", r.name, refused, allowed)
		}
	}
}

// TestMembershipCachedUntilForgotten: a membership answer is kept (one
// conversations.members call for two questions), and Forget, as on
// member_left_channel, makes the next question ask Slack again.
func TestMembershipCachedUntilForgotten(t *testing.T) {
	fs, s := world(t)
	ctx := context.Background()
	see := func() bool { return May(ctx, s, cfg, alice, See, Thing{Channel: ch(priv)}).OK }
	if !see() || !see() {
		t.Fatal("a member can't see")
	}
	if n := len(fs.CallsTo("conversations.members")); n != 1 {
		t.Fatalf("conversations.members called %d times for two questions; want 1 (cached)", n)
	}
	fs.RemoveMember(priv, alice)
	if !see() {
		t.Fatal("the cached answer was not used")
	}
	s.Forget(Channel{Team: team, ID: priv})
	if see() {
		t.Fatal("a person removed from the channel still sees it after Forget")
	}
}

func TestParseChannel(t *testing.T) {
	for in, want := range map[string]Channel{"T1/C1": {Team: "T1", ID: "C1"}, "?": {ID: UnknownChannel}} {
		if got, ok := ParseChannel(in); !ok || got != want {
			t.Errorf("ParseChannel(%q) = %v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "T1", "T1/", "/C1", "T1/C1/1.2"} {
		if _, ok := ParseChannel(in); ok {
			t.Errorf("ParseChannel(%q) ok", in)
		}
	}
}

// TestJoinerSeenAtOnce: a cached list without a person is read again, so
// someone who just joined is not refused for the cache's life.
func TestJoinerSeenAtOnce(t *testing.T) {
	fs, s := world(t)
	ctx := context.Background()
	if May(ctx, s, cfg, bob, See, Thing{Channel: ch(priv)}).OK {
		t.Fatal("a non-member sees")
	}
	fs.SetMembers(priv, alice, admin, bob)
	if a := May(ctx, s, cfg, bob, See, Thing{Channel: ch(priv)}); !a.OK {
		t.Fatalf("a member who just joined is refused: %s", a.Why)
	}
}

// A person's name is their display name, else their real or user name,
// read from users.info once for the names and the admin flags alike;
// "" when Slack does not answer.
func TestNameSharesTheUsersCache(t *testing.T) {
	fs, s := world(t)
	ctx := context.Background()
	u := slack.User{ID: "U0NAMED", TeamID: team, Name: "ana.k", RealName: "Ana Kovač"}
	u.Profile.DisplayName = "Ana"
	fs.AddUser(u)
	fs.AddUser(slack.User{ID: "U0PLAIN", TeamID: team, Name: "plain"})
	if got := s.Name(ctx, "U0NAMED"); got != "Ana" {
		t.Fatalf("name = %q, want the display name", got)
	}
	if got := s.Name(ctx, "U0PLAIN"); got != "plain" {
		t.Fatalf("name without a display name = %q", got)
	}
	if ok, err := s.Admin(ctx, "U0NAMED", team); ok || err != nil {
		t.Fatalf("admin = %v, %v", ok, err)
	}
	_ = s.Name(ctx, "U0NAMED")
	if n := len(fs.CallsTo("users.info")); n != 2 {
		t.Fatalf("users.info called %d times for two people; want 2 (cached)", n)
	}
	fs.FailNext("users.info", "user_not_found")
	if got := s.Name(ctx, "U0GONE"); got != "" {
		t.Fatalf("an unknown person's name = %q", got)
	}
}

// Team-scoped entries of the lists ("TEAM:ID") count in that workspace
// only; plain ids count everywhere; an unknown team matches no scoped
// entry. Deciders names the admins who count in the thread's team.
func TestListsPerWorkspace(t *testing.T) {
	for _, c := range []struct {
		list     []string
		team, id string
		want     bool
	}{
		{[]string{"U1"}, "T1", "U1", true},
		{[]string{"U1"}, "", "U1", true},
		{[]string{"T1:U1"}, "T1", "U1", true},
		{[]string{"T1:U1"}, "T2", "U1", false},
		{[]string{"T1:U1"}, "", "U1", false},
		{[]string{"T1:C1", "C2"}, "T2", "C2", true},
	} {
		if got := Listed(c.list, c.team, c.id); got != c.want {
			t.Errorf("Listed(%v, %q, %q) = %v", c.list, c.team, c.id, got)
		}
	}
	admins := []string{"U0GLOBAL", "T1:U0ONE", "T2:U0TWO"}
	if got := Deciders("U0OWNER", "T1", admins); got != "<@U0OWNER>, <@U0GLOBAL>, <@U0ONE>" {
		t.Fatalf("Deciders in T1 = %s", got)
	}
	_, s := world(t)
	conf := cfg
	conf.Admins = []string{"T0OTHER:" + bob}
	if a := May(context.Background(), s, conf, bob, Decide, Thing{Channel: ch(pub), Owner: alice}); a.OK {
		t.Fatal("an admin of another workspace decided here")
	}
	conf.Admins = []string{ch(pub).Team + ":" + bob}
	if a := May(context.Background(), s, conf, bob, Decide, Thing{Channel: ch(pub), Owner: alice}); !a.OK {
		t.Fatalf("an admin of this workspace refused: %s", a.Why)
	}
	conf.AllowedUsers = []string{"T0OTHER:" + alice}
	if a := May(context.Background(), s, conf, alice, Use, Thing{Channel: ch(pub)}); a.OK {
		t.Fatal("a person allowed in another workspace used the bot here")
	}
}

package workspace_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/fakeslack"
	"agentbot/bot/workspace"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

func vault(t testing.TB) *credentials.Vault {
	t.Helper()
	st, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	raw := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(raw)
	k, _ := secretbox.NewKey(raw)
	kr, err := secretbox.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	v, err := credentials.New(st, kr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// clock is a test's settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func installed(s *fakeslack.Server, v *credentials.Vault, clk *clock) *workspace.Installed {
	return &workspace.Installed{Vault: v, ClientID: s.ClientID(), ClientSecret: s.ClientSecret(),
		Options: []slack.Option{slack.OptionAPIURL(s.APIURL())}, APIURL: s.APIURL(), Now: clk.now, CacheTTL: time.Nanosecond}
}

func post(t *testing.T, c workspace.Client, ch string) error {
	t.Helper()
	_, _, err := c.API.PostMessageContext(context.Background(), ch, slack.MsgOptionText("hi", false))
	return err
}

// TestEachWorkspaceItsToken: two workspaces and an organization installed
// org-wide each get their own token, which Slack accepts in their own
// channels only; a workspace not installed gets none.
func TestEachWorkspaceItsToken(t *testing.T) {
	ctx := context.Background()
	s := fakeslack.New(t)
	v := vault(t)
	for _, in := range []credentials.Installation{
		{Team: "TA", BotToken: "xoxb-a", BotUserID: "UBA"},
		{Team: "TB", BotToken: "xoxb-b", BotUserID: "UBB"},
		{Enterprise: "E1", EnterpriseInstall: true, BotToken: "xoxb-e1", BotUserID: "UBE"},
	} {
		if err := v.PutInstallation(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	s.AddInstall(fakeslack.Install{Team: "TA", BotToken: "xoxb-a"})
	s.AddInstall(fakeslack.Install{Team: "TB", BotToken: "xoxb-b"})
	s.AddInstall(fakeslack.Install{Enterprise: "E1", Org: true, BotToken: "xoxb-e1"})
	s.SetChannelTeam("CA", "TA", "")
	s.SetChannelTeam("CB", "TB", "")
	s.SetChannelTeam("CE", "TE", "E1")
	cs := installed(s, v, &clock{t: time.Now()})
	for _, tc := range []struct {
		id      workspace.ID
		ch, bot string
	}{{workspace.ID{Team: "TA"}, "CA", "UBA"}, {workspace.ID{Team: "TB"}, "CB", "UBB"}, {workspace.ID{Team: "TE", Enterprise: "E1"}, "CE", "UBE"}} {
		c, err := workspace.Resolve(workspace.With(ctx, tc.id), cs)
		if err != nil {
			t.Fatalf("%v: %v", tc.id, err)
		}
		if c.BotUserID != tc.bot {
			t.Fatalf("%v: bot user %s, want %s", tc.id, c.BotUserID, tc.bot)
		}
		if err := post(t, c, tc.ch); err != nil {
			t.Fatalf("%v in %s: %v", tc.id, tc.ch, err)
		}
		other := map[string]string{"CA": "CB", "CB": "CE", "CE": "CA"}[tc.ch]
		if err := post(t, c, other); err == nil {
			t.Fatalf("%v's token posted in %s", tc.id, other)
		}
	}
	if _, err := cs.For(ctx, workspace.ID{Team: "TZ", Enterprise: "E9"}); !errors.Is(err, workspace.ErrNotInstalled) {
		t.Fatalf("not installed: %v", err)
	}
	if _, err := workspace.Resolve(ctx, cs); !errors.Is(err, workspace.ErrNoWorkspace) {
		t.Fatalf("no workspace in context: %v", err)
	}
	if err := cs.Uninstall(ctx, workspace.ID{Team: "TA"}, "UBX"); err != nil { // tokens_revoked of another bot
		t.Fatal(err)
	}
	if _, err := cs.For(ctx, workspace.ID{Team: "TA"}); err != nil {
		t.Fatalf("TA after another bot's tokens_revoked: %v", err)
	}
	if err := cs.Uninstall(ctx, workspace.ID{Team: "TE", Enterprise: "E1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.For(ctx, workspace.ID{Team: "TE", Enterprise: "E1"}); !errors.Is(err, workspace.ErrNotInstalled) {
		t.Fatalf("after the org's uninstall: %v", err)
	}
	if _, err := cs.For(ctx, workspace.ID{Team: "TA"}); err != nil {
		t.Fatalf("TA after E1's uninstall: %v", err)
	}
}

// TestRotation: a rotating token is refreshed before it expires, the new
// tokens stored; a second replica whose refresh token was used first
// takes the stored ones; a token past its expiry that cannot be
// refreshed is refused.
func TestRotation(t *testing.T) {
	ctx := context.Background()
	s := fakeslack.New(t)
	v := vault(t)
	clk := &clock{t: time.Now()}
	s.AddInstall(fakeslack.Install{Team: "TA", BotToken: "xoxe.xoxb-a1", RefreshToken: "xoxe-1-r1", Rotate: true, TTL: 12 * time.Hour})
	if err := v.PutInstallation(ctx, credentials.Installation{Team: "TA", BotToken: "xoxe.xoxb-a1", RefreshToken: "xoxe-1-r1", BotUserID: "UBA", Expiry: clk.now().Add(12 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	one, two := installed(s, v, clk), installed(s, v, clk)
	two.CacheTTL = 24 * time.Hour // replica two keeps what it read
	ta := workspace.ID{Team: "TA"}
	c, err := one.For(ctx, ta)
	must(t, err)
	c2, err := two.For(ctx, ta)
	must(t, err)
	if s.Refreshes() != 0 || c.API == nil || c2.API == nil {
		t.Fatalf("refreshed %d times before it was due", s.Refreshes())
	}
	clk.add(11*time.Hour + 45*time.Minute) // within DefaultRefreshBefore of expiry
	c, err = one.For(ctx, ta)
	must(t, err)
	if s.Refreshes() != 1 {
		t.Fatalf("refreshes = %d, want 1", s.Refreshes())
	}
	must(t, post(t, c, "CA"))
	in, err := v.Installation(ctx, "TA", "")
	must(t, err)
	if in.BotToken == "xoxe.xoxb-a1" || in.RefreshToken == "xoxe-1-r1" || !in.Expiry.After(clk.now().Add(11*time.Hour)) {
		t.Fatalf("stored after refresh: expiry %v, token changed %v", in.Expiry, in.BotToken != "xoxe.xoxb-a1")
	}
	// Replica two still holds r1, revoked by one's refresh: it takes the
	// stored tokens.
	c2, err = two.For(ctx, ta)
	must(t, err)
	if s.Refreshes() != 1 {
		t.Fatalf("replica two refreshed again: %d", s.Refreshes())
	}
	must(t, post(t, c2, "CA"))

	s.RevokeInstall(in.BotToken) // the refresh token goes with it
	clk.add(13 * time.Hour)
	if _, err := one.For(ctx, ta); err == nil || !strings.Contains(err.Error(), "invalid_refresh_token") {
		t.Fatalf("expired, refresh refused: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestOneRefreshAtATime: many calls of a workspace whose token is due
// refresh it once; the others take the refreshed token.
func TestOneRefreshAtATime(t *testing.T) {
	ctx := context.Background()
	s := fakeslack.New(t)
	v := vault(t)
	clk := &clock{t: time.Now()}
	s.AddInstall(fakeslack.Install{Team: "TA", BotToken: "xoxe.xoxb-c1", RefreshToken: "xoxe-1-c1", Rotate: true, TTL: 12 * time.Hour})
	must(t, v.PutInstallation(ctx, credentials.Installation{Team: "TA", BotToken: "xoxe.xoxb-c1", RefreshToken: "xoxe-1-c1", BotUserID: "UBA", Expiry: clk.now().Add(10 * time.Minute)}))
	cs := installed(s, v, clk)
	cs.CacheTTL = time.Hour
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := cs.For(ctx, workspace.ID{Team: "TA"})
			if err == nil {
				_, err = c.API.AuthTestContext(ctx)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	if s.Refreshes() != 1 {
		t.Fatalf("refreshes = %d, want 1", s.Refreshes())
	}
}

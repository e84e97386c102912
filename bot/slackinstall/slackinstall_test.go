package slackinstall_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/fakeslack"
	"agentbot/bot/slackinstall"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

type rig struct {
	fake  *fakeslack.Server
	vault *credentials.Vault
	srv   *httptest.Server
	h     *slackinstall.Handler
	dir   string
	st    *bolt.Store
	seen  []credentials.Installation
}

func newRig(t *testing.T, ttl time.Duration) *rig {
	t.Helper()
	r := &rig{fake: fakeslack.New(t), dir: t.TempDir()}
	st, err := bolt.Open(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	r.st = st
	t.Cleanup(func() { st.Close() })
	raw := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(raw)
	k, err := secretbox.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secretbox.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	if r.vault, err = credentials.New(st, kr, nil); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	r.h, err = slackinstall.New(slackinstall.Config{ClientID: r.fake.ClientID(), ClientSecret: r.fake.ClientSecret(),
		PublicURL: r.srv.URL, Vault: r.vault, APIURL: r.fake.APIURL(), AuthorizeURL: "https://slack.invalid/oauth/v2/authorize",
		TTL: ttl, Installed: func(in credentials.Installation) { r.seen = append(r.seen, in) }})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/slack/", r.h)
	return r
}

// browser is a person's browser: it keeps cookies.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// begin opens the install page in c and returns the state of its "Add to
// Slack" link, checking the link.
func (r *rig) begin(t *testing.T, c *http.Client) string {
	t.Helper()
	code, body := get(t, c, r.srv.URL+slackinstall.InstallPath)
	if code != http.StatusOK || !strings.Contains(body, "Add to Slack") {
		t.Fatalf("install page: %d %s", code, body)
	}
	i := strings.Index(body, `href="`)
	link := body[i+6:]
	link = strings.ReplaceAll(link[:strings.Index(link, `"`)], "&amp;", "&")
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Host != "slack.invalid" || q.Get("client_id") != r.fake.ClientID() || q.Get("redirect_uri") != r.h.RedirectURL() ||
		q.Get("scope") != strings.Join(slackinstall.BotScopes, ",") || len(q.Get("state")) < 40 {
		t.Fatalf("authorize link %s", link)
	}
	return q.Get("state")
}

func (r *rig) redirect(t *testing.T, c *http.Client, code, state string) (int, string) {
	t.Helper()
	return get(t, c, r.srv.URL+slackinstall.RedirectPath+"?"+url.Values{"code": {code}, "state": {state}}.Encode())
}

// TestInstallWorkspaceAndOrg installs into a workspace with token
// rotation and into an organization; each is stored under its key with
// tokens Slack accepts, and none of the tokens is in the store in clear.
func TestInstallWorkspaceAndOrg(t *testing.T) {
	r := newRig(t, 0)
	ctx := context.Background()
	b := browser(t)
	r.fake.GrantCode("code-a", r.h.RedirectURL(), fakeslack.Install{Team: "TA", TeamName: "Alpha", BotUserID: "UBA", Scopes: []string{"chat:write", "commands"}, Rotate: true, InstalledBy: "UA1"})
	if code, body := r.redirect(t, b, "code-a", r.begin(t, b)); code != http.StatusOK || !strings.Contains(body, "installed") {
		t.Fatalf("redirect: %d %s", code, body)
	}
	r.fake.GrantCode("code-o", r.h.RedirectURL(), fakeslack.Install{Enterprise: "E1", Org: true, BotUserID: "UBO", InstalledBy: "UO1"})
	if code, body := r.redirect(t, b, "code-o", r.begin(t, b)); code != http.StatusOK {
		t.Fatalf("org redirect: %d %s", code, body)
	}

	a, err := r.vault.Installation(ctx, "TA", "")
	if err != nil {
		t.Fatal(err)
	}
	if a.BotUserID != "UBA" || a.InstalledBy != "UA1" || a.RefreshToken == "" || time.Until(a.Expiry) < 11*time.Hour || !slices.Equal(a.Scopes, []string{"chat:write", "commands"}) {
		t.Fatalf("workspace install = %v", a)
	}
	o, err := r.vault.Installation(ctx, "TZ", "E1") // any workspace of E1
	if err != nil {
		t.Fatal(err)
	}
	if !o.EnterpriseInstall || o.BotUserID != "UBO" || o.RefreshToken != "" {
		t.Fatalf("org install = %v", o)
	}
	for _, in := range []credentials.Installation{a, o} {
		if _, err := slack.New(in.BotToken, slack.OptionAPIURL(r.fake.APIURL())).AuthTest(); err != nil {
			t.Fatalf("stored token refused by Slack: %v", err)
		}
	}
	if len(r.seen) != 2 {
		t.Fatalf("Installed told of %d installs, want 2", len(r.seen))
	}
	r.st.Close()
	data, err := os.ReadFile(filepath.Join(r.dir, bolt.DBName))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{a.BotToken, a.RefreshToken, o.BotToken} {
		if strings.Contains(string(data), s) {
			t.Fatal("the store holds a token in the clear")
		}
	}
}

// TestStateRefused: a forged state, a replayed one, an expired one and
// one brought back by another browser install nothing, and Slack's
// invalid_code fails the install cleanly; the page says to start again.
func TestStateRefused(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 0)
	b := browser(t)
	grant := func(code string) {
		r.fake.GrantCode(code, r.h.RedirectURL(), fakeslack.Install{Team: "T" + code, BotUserID: "UB"})
	}
	refused := func(what string, code int, body string) {
		t.Helper()
		if code != http.StatusBadRequest || !strings.Contains(body, "start again") {
			t.Fatalf("%s: %d %s", what, code, body)
		}
	}
	grant("forged")
	r.begin(t, b)
	code, body := r.redirect(t, b, "forged", "not-a-state-agentbot-handed-out")
	refused("forged", code, body)

	grant("first")
	grant("again")
	st := r.begin(t, b)
	if code, body := r.redirect(t, b, "first", st); code != http.StatusOK {
		t.Fatalf("first use: %d %s", code, body)
	}
	code, body = r.redirect(t, b, "again", st)
	refused("replayed", code, body)

	grant("thief")
	st = r.begin(t, b)
	code, body = r.redirect(t, browser(t), "thief", st) // another browser: no cookie
	refused("other browser", code, body)
	code, body = r.redirect(t, b, "thief", st) // and the state is spent
	refused("after another browser", code, body)

	if code, body := r.redirect(t, b, "nope", r.begin(t, b)); code != http.StatusBadGateway || !strings.Contains(body, "did not confirm") {
		t.Fatalf("invalid_code: %d %s", code, body)
	}

	list, err := r.vault.ListInstallations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "Tfirst" {
		t.Fatalf("installations = %+v, want Tfirst alone", list)
	}
	for _, team := range []string{"Tforged", "Tagain", "Tthief"} {
		if _, err := r.vault.Installation(ctx, team, ""); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("%s installed: %v", team, err)
		}
	}

	short := newRig(t, 50*time.Millisecond)
	short.fake.GrantCode("late", short.h.RedirectURL(), fakeslack.Install{Team: "Tlate", BotUserID: "UB"})
	st = short.begin(t, b)
	time.Sleep(100 * time.Millisecond)
	code, body = short.redirect(t, b, "late", st)
	refused("expired", code, body)
}

// TestScopesMatchManifest: the install asks for manifest.yaml's bot
// scopes.
func TestScopesMatchManifest(t *testing.T) {
	data, err := os.ReadFile("../../manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(data), "\n    bot:\n")
	var scopes []string
	for line := range strings.SplitSeq(rest, "\n") {
		s, ok := strings.CutPrefix(line, "      - ")
		if !ok {
			break
		}
		scopes = append(scopes, s)
	}
	if len(scopes) == 0 || !slices.Equal(scopes, slackinstall.BotScopes) {
		t.Fatalf("manifest.yaml's bot scopes %v, BotScopes %v", scopes, slackinstall.BotScopes)
	}
}

func TestNewNeedsSettings(t *testing.T) {
	if _, err := slackinstall.New(slackinstall.Config{ClientID: "x", PublicURL: "https://a"}); err == nil || !strings.Contains(err.Error(), "SLACK_CLIENT_SECRET") {
		t.Fatalf("no secret: %v", err)
	}
	if _, err := slackinstall.New(slackinstall.Config{ClientID: "x", ClientSecret: "y"}); err == nil || !strings.Contains(err.Error(), "AGENTBOT_PUBLIC_URL") {
		t.Fatalf("no public URL: %v", err)
	}
}

// TestAnotherReplicaFinishes: the flow begun on one replica finishes on
// another sharing the store (as behind a load balancer).
func TestAnotherReplicaFinishes(t *testing.T) {
	r := newRig(t, 0)
	other, err := slackinstall.New(slackinstall.Config{ClientID: r.fake.ClientID(), ClientSecret: r.fake.ClientSecret(),
		PublicURL: r.srv.URL, Vault: r.vault, APIURL: r.fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(other)
	defer srv2.Close()
	b := browser(t)
	st := r.begin(t, b)
	r.fake.GrantCode("code-r", r.h.RedirectURL(), fakeslack.Install{Team: "TR", BotUserID: "UBR"})
	code, body := get(t, b, srv2.URL+slackinstall.RedirectPath+"?"+url.Values{"code": {"code-r"}, "state": {st}}.Encode())
	if code != http.StatusOK {
		t.Fatalf("the other replica: %d %s", code, body)
	}
	if _, err := r.vault.Installation(context.Background(), "TR", ""); err != nil {
		t.Fatalf("not installed: %v", err)
	}
}

package admin_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"gopkg.in/yaml.v3"

	"agentbot/cmd/agentbot/admin"
)

// decode decodes a manifest strictly, as bot/manifest_test.go does.
func decode(t *testing.T, text string) slack.Manifest {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	var m slack.Manifest
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return m
}

// TestManifestHTTP: --mode http prints manifest.http.yaml with every
// request URL and the OAuth redirect under the public URL, the Socket
// Mode manifest's scopes and events plus app_uninstalled and
// tokens_revoked, Socket Mode off and org-wide installs on.
func TestManifestHTTP(t *testing.T) {
	var sock, out, errb bytes.Buffer
	if code := admin.Manifest(&sock, &errb, "socket", ""); code != 0 {
		t.Fatalf("socket: %d %s", code, errb.String())
	}
	if code := admin.Manifest(&out, &errb, "http", "https://bot.acme.test/"); code != 0 {
		t.Fatalf("http: %d %s", code, errb.String())
	}
	s, h := decode(t, sock.String()), decode(t, out.String())
	if strings.Contains(out.String(), "example.com") {
		t.Fatal("the example URL is left in the manifest")
	}
	const events = "https://bot.acme.test/slack/events"
	if h.Settings.EventSubscriptions.RequestUrl != events || h.Settings.Interactivity.RequestUrl != events ||
		len(h.Features.SlashCommands) != 1 || h.Features.SlashCommands[0].Url != events {
		t.Fatalf("request URLs: events %q, interactivity %q", h.Settings.EventSubscriptions.RequestUrl, h.Settings.Interactivity.RequestUrl)
	}
	if !slices.Equal(h.OAuthConfig.RedirectUrls, []string{"https://bot.acme.test/slack/oauth_redirect"}) {
		t.Fatalf("redirect URLs %v", h.OAuthConfig.RedirectUrls)
	}
	if h.Settings.SocketModeEnabled || !h.Settings.OrgDeployEnabled || !s.Settings.SocketModeEnabled {
		t.Fatal("socket mode or org deploy settings")
	}
	if !slices.Equal(h.OAuthConfig.Scopes.Bot, s.OAuthConfig.Scopes.Bot) {
		t.Fatalf("bot scopes differ: %v and %v", h.OAuthConfig.Scopes.Bot, s.OAuthConfig.Scopes.Bot)
	}
	want := append(slices.Clone(s.Settings.EventSubscriptions.BotEvents), "app_uninstalled", "tokens_revoked")
	slices.Sort(want)
	got := slices.Sorted(slices.Values(h.Settings.EventSubscriptions.BotEvents))
	if !slices.Equal(got, want) {
		t.Fatalf("bot events %v, want %v", got, want)
	}
	for _, bad := range []string{"", "http://bot.acme.test"} {
		errb.Reset()
		if code := admin.Manifest(&out, &errb, "http", bad); code != 2 || !strings.Contains(errb.String(), "AGENTBOT_PUBLIC_URL") {
			t.Fatalf("public URL %q: %d %s", bad, code, errb.String())
		}
	}
}

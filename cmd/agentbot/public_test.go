package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
)

// testSecretKey is a secret key for tests (32 bytes, base64).
const testSecretKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

// publicVars are serve's settings with an MCP config whose one HTTP
// server has the identity given ("": none written, user by default).
func publicVars(t *testing.T, identity string) map[string]string {
	t.Helper()
	fs := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	dir := t.TempDir()
	server := "servers:\n  - name: tracker\n    transport: http\n    url: https://tracker.example/mcp\n"
	if identity != "" {
		server += "    identity: " + identity + "\n"
	}
	if identity == "static" {
		server += "    headers:\n      Authorization: {env: TRACKER_TOKEN}\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "mcp.yaml"), []byte(server), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(), "SLACK_APP_TOKEN": fs.AppToken(),
		"OPENAI_BASE_URL": fm.URL(), "OPENAI_API_KEY": "k", "AGENTBOT_MODEL": "m",
		"AGENTBOT_DATA": t.TempDir(), "AGENTBOT_BUNDLES": bundlesDir(t),
		"AGENTBOT_MCP_CONFIG": filepath.Join(dir, "mcp.yaml"), "TRACKER_TOKEN": "Bearer static-token-value",
	}
}

// serve refuses, at start, servers with identity user or service without
// a secret key or a public URL, and says which and what to set.
func TestServePublicRefusesOAuthWithoutKeyOrURL(t *testing.T) {
	for _, tc := range []struct {
		name, identity string
		set            map[string]string
		want           []string
	}{
		{"user without a key", "user", map[string]string{"AGENTBOT_PUBLIC_URL": "https://bot.example"},
			[]string{"tracker", "identity user or service", "AGENTBOT_SECRET_KEY", "identity: static"}},
		{"service without a key", "service", map[string]string{"AGENTBOT_PUBLIC_URL": "https://bot.example"},
			[]string{"tracker", "AGENTBOT_SECRET_KEY"}},
		{"user without a public URL", "user", map[string]string{"AGENTBOT_SECRET_KEY": testSecretKey},
			[]string{"tracker", "AGENTBOT_PUBLIC_URL", "AGENTBOT_LISTEN (:8080)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := publicVars(t, tc.identity)
			for k, v := range tc.set {
				vars[k] = v
			}
			r := runCmd(t, vars, "", "serve")
			r.wantCode(t, 2)
			for _, w := range tc.want {
				contains(t, "stderr", r.stderr, w)
			}
			lacks(t, "stderr", r.stderr, testSecretKey)
		})
	}
}

// A bad public URL or listen address is refused as a setting.
func TestPublicSettingsChecked(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"AGENTBOT_PUBLIC_URL", "http://bot.example", "an https URL"},
		{"AGENTBOT_PUBLIC_URL", "bot.example", "an https URL"},
		{"AGENTBOT_PUBLIC_URL", "https://bot.example/?a=b", "an https URL"},
		{"AGENTBOT_LISTEN", "8080", "host:port"},
	} {
		vars := publicVars(t, "static")
		vars[tc.key] = tc.value
		r := runCmd(t, vars, "", "serve")
		r.wantCode(t, 2)
		contains(t, "stderr", r.stderr, "$"+tc.key)
		contains(t, "stderr", r.stderr, tc.want)
	}
}

// With a key and a public URL, serve serves the public side on
// AGENTBOT_LISTEN: the client ID metadata document, and the OAuth
// redirect, which refuses a state it never issued. A static-only config
// needs neither and starts without a public side.
func TestServePublicSide(t *testing.T) {
	vars := publicVars(t, "user")
	vars["AGENTBOT_SECRET_KEY"] = testSecretKey
	vars["AGENTBOT_PUBLIC_URL"] = "http://127.0.0.1:9/agentbot"
	vars["AGENTBOT_LISTEN"] = "127.0.0.1:0"
	logs, stop := serveInProcess(t, vars)
	defer stop()
	addrRE := regexp.MustCompile(`serving the public side" addr=(\S+)`)
	var base string
	opsWait(t, "the public listener", func() bool {
		m := addrRE.FindStringSubmatch(logs.String())
		if m != nil {
			base = "http://" + m[1]
		}
		return m != nil
	})
	code, body := httpGet(t, base+"/oauth/client.json")
	var doc struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.Unmarshal([]byte(body), &doc); code != 200 || err != nil ||
		doc.ClientID != vars["AGENTBOT_PUBLIC_URL"]+"/oauth/client.json" ||
		len(doc.RedirectURIs) != 1 || doc.RedirectURIs[0] != vars["AGENTBOT_PUBLIC_URL"]+"/oauth/callback" {
		t.Fatalf("client document: %d %s", code, body)
	}
	code, body = httpGet(t, base+"/oauth/callback?state=forged&code=stolen-code")
	if code != 400 || !strings.Contains(body, "expired or was already used") || strings.Contains(body, "stolen-code") {
		t.Fatalf("forged callback: %d %s", code, body)
	}
	if code, _ := httpGet(t, base+"/healthz"); code != 404 {
		t.Fatalf("/healthz on the public side: %d, want 404 (it stays on AGENTBOT_HTTP_ADDR)", code)
	}
	stop()
	lacks(t, "log", logs.String(), testSecretKey)

	static := publicVars(t, "static")
	logs, stop = serveInProcess(t, static)
	defer stop()
	opsWait(t, "serve to start", func() bool { return strings.Contains(logs.String(), "agentbot starting") })
	lacks(t, "log", logs.String(), "public side")
}

// A server without headers or identity is user by default: without a key
// and a public URL serve still starts (it works while the server asks for
// no OAuth), and warns; an explicit identity user with a bad key is
// refused.
func TestServeImpliedUserServer(t *testing.T) {
	vars := publicVars(t, "")
	logs, stop := serveInProcess(t, vars)
	defer stop()
	opsWait(t, "serve to start", func() bool { return strings.Contains(logs.String(), "agentbot starting") })
	contains(t, "log", logs.String(), "identity user by default")
	contains(t, "log", logs.String(), "servers=tracker")
	stop()

	vars = publicVars(t, "")
	vars["AGENTBOT_SECRET_KEY"] = "not-a-key"
	vars["AGENTBOT_PUBLIC_URL"] = "https://bot.example"
	r := runCmd(t, vars, "", "serve")
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, "the secret key")
	lacks(t, "stderr", r.stderr, "not-a-key")
}

// installVars are serve's settings of a distributed app: the client id
// and secret in place of SLACK_BOT_TOKEN, a key, a public URL.
func installVars(t *testing.T) map[string]string {
	t.Helper()
	vars := publicVars(t, "static")
	delete(vars, "SLACK_BOT_TOKEN")
	vars["SLACK_CLIENT_ID"], vars["SLACK_CLIENT_SECRET"] = "1234.5678", "client-secret-4f1c9d"
	vars["AGENTBOT_SECRET_KEY"] = testSecretKey
	vars["AGENTBOT_PUBLIC_URL"] = "http://127.0.0.1:9"
	vars["AGENTBOT_LISTEN"] = "127.0.0.1:0"
	return vars
}

// With SLACK_CLIENT_ID, serve needs no bot token, serves the install page
// on the public side (its link to Slack's authorization carries the
// client id, the bot scopes and the redirect URL), and the bot answers
// installed workspaces; it refuses a bot token beside the client id, and
// a client id without the key or the public URL.
func TestServeInstalls(t *testing.T) {
	vars := installVars(t)
	logs, stop := serveInProcess(t, vars)
	defer stop()
	addrRE := regexp.MustCompile(`serving the public side" addr=(\S+)`)
	var base string
	opsWait(t, "the public listener", func() bool {
		m := addrRE.FindStringSubmatch(logs.String())
		if m != nil {
			base = "http://" + m[1]
		}
		return m != nil
	})
	code, body := httpGet(t, base+"/slack/install")
	if code != 200 || !strings.Contains(body, "Add to Slack") || !strings.Contains(body, "client_id=1234.5678") ||
		!strings.Contains(body, "redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fslack%2Foauth_redirect") || !strings.Contains(body, "chat%3Awrite") {
		t.Fatalf("install page: %d %s", code, body)
	}
	if code, body := httpGet(t, base+"/slack/oauth_redirect?state=forged&code=c"); code != 400 {
		t.Fatalf("forged redirect: %d %s", code, body)
	}
	opsWait(t, "the bot", func() bool { return strings.Contains(logs.String(), "serving the workspaces agentbot is installed in") })
	stop()
	lacks(t, "log", logs.String(), "client-secret-4f1c9d")

	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-2-abc"}, "SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set"},
		{map[string]string{"AGENTBOT_SECRET_KEY": ""}, "AGENTBOT_SECRET_KEY"},
		{map[string]string{"AGENTBOT_PUBLIC_URL": ""}, "AGENTBOT_PUBLIC_URL"},
		{map[string]string{"SLACK_CLIENT_SECRET": ""}, "SLACK_CLIENT_SECRET"},
	} {
		vars := installVars(t)
		for k, v := range tc.set {
			vars[k] = v
		}
		r := runCmd(t, vars, "", "serve")
		r.wantCode(t, 2)
		contains(t, "stderr", r.stderr, tc.want)
	}
}

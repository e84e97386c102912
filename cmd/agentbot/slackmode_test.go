package main

import (
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
)

const testSigningSecret = "e4d1c0ffee5a1ad5ecre7a9b8c7d6e5f"

// httpModeVars are serve's settings in HTTP mode, without an app token.
func httpModeVars(t *testing.T, fs *fakeslack.Server, fm *fakemodel.Server) map[string]string {
	return map[string]string{
		"AGENTBOT_SLACK_MODE": "http", "SLACK_SIGNING_SECRET": testSigningSecret,
		"AGENTBOT_PUBLIC_URL": "http://127.0.0.1:9/agentbot", "AGENTBOT_LISTEN": "127.0.0.1:0",
		"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(),
		"OPENAI_BASE_URL": fm.URL(), "OPENAI_API_KEY": "k", "AGENTBOT_MODEL": "m",
		"AGENTBOT_DATA": t.TempDir(), "AGENTBOT_BUNDLES": bundlesDir(t),
	}
}

// With AGENTBOT_SLACK_MODE=http, serve takes Slack's signed requests at
// /slack/events on AGENTBOT_LISTEN, with no app token and no Socket Mode
// connection: the url_verification is answered, and a mention in a
// channel without a default agent is answered with the agent picker.
func TestServeSlackHTTPMode(t *testing.T) {
	fs, fm := fakeslack.New(t), fakemodel.NewTB(t)
	logs, stop := serveInProcess(t, httpModeVars(t, fs, fm))
	defer stop()
	addrRE := regexp.MustCompile(`serving the public side" addr=(\S+)`)
	var base string
	opsWait(t, "the public listener", func() bool {
		m := addrRE.FindStringSubmatch(logs.String())
		if m != nil {
			base = "http://" + m[1]
		}
		return m != nil && strings.Contains(logs.String(), "agentbot starting")
	})
	contains(t, "log", logs.String(), "request_url=http://127.0.0.1:9/agentbot/slack/events")
	if err := fs.DeliverHTTP(base+"/slack/events", testSigningSecret, fakeslack.HTTPOptions{}); err != nil {
		t.Fatal(err)
	}
	ts := fs.NextTS()
	env := fs.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: "U1", Channel: "C1", TimeStamp: ts,
		Text: "<@" + fs.BotUserID() + "> hi"})
	defer func() {
		if t.Failed() {
			t.Logf("deliveries %+v\nlogs:\n%s", fs.Deliveries(), logs.String())
		}
	}()
	opsWait(t, "the agent picker", func() bool {
		for _, m := range fs.ThreadMessages("C1", ts) {
			if m.Kind != fakeslack.KindUser && strings.Contains(m.Text, "Which agent should help") {
				return true
			}
		}
		return false
	})
	if _, err := fs.WaitAck(env, 0); err != nil {
		t.Fatal(err)
	}
	if n := fs.TotalConnections(); n != 0 {
		t.Fatalf("%d Socket Mode connections in HTTP mode", n)
	}
	stop()
	lacks(t, "log", logs.String(), testSigningSecret)
}

// HTTP mode refuses to start without its signing secret or a public URL,
// and says what to set; a bad mode is refused as a setting.
func TestServeSlackHTTPModeNeeds(t *testing.T) {
	fs, fm := fakeslack.New(t), fakemodel.NewTB(t)
	for _, tc := range []struct {
		name, key, value string
		want             []string
	}{
		{"no signing secret", "SLACK_SIGNING_SECRET", "", []string{"SLACK_SIGNING_SECRET is missing", "Basic Information"}},
		{"placeholder secret", "SLACK_SIGNING_SECRET", "<your signing secret>", []string{"SLACK_SIGNING_SECRET is a placeholder"}},
		{"no public URL", "AGENTBOT_PUBLIC_URL", "", []string{"AGENTBOT_PUBLIC_URL is missing", "/slack/events"}},
		{"bad mode", "AGENTBOT_SLACK_MODE", "webhook", []string{"$AGENTBOT_SLACK_MODE", "one of socket, http"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := httpModeVars(t, fs, fm)
			vars[tc.key] = tc.value
			r := runCmd(t, vars, "", "serve")
			r.wantCode(t, 2)
			for _, w := range tc.want {
				contains(t, "stderr", r.stderr, w)
			}
			lacks(t, "stderr", r.stderr, "SLACK_APP_TOKEN")
		})
	}
}

// check in HTTP mode reports the signing secret and the request URL in
// place of Socket Mode, never opens a Socket Mode connection, and fails
// without the secret.
func TestCheckSlackHTTPMode(t *testing.T) {
	s := newCheckSetup(t)
	delete(s.vars, "SLACK_APP_TOKEN")
	s.vars["AGENTBOT_SLACK_MODE"] = "http"
	s.vars["SLACK_SIGNING_SECRET"] = testSigningSecret
	s.vars["AGENTBOT_PUBLIC_URL"] = "https://bot.example"
	code, out := s.check(t)
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	line(t, out, "✓ Slack HTTP mode: SLACK_SIGNING_SECRET is set; Slack's request URL is https://bot.example/slack/events")
	lacks(t, "check", out, "Socket Mode")
	lacks(t, "check", out, testSigningSecret)
	if n := len(s.slack.CallsTo("apps.connections.open")); n != 0 {
		t.Errorf("apps.connections.open called %d times in HTTP mode", n)
	}
	// The request URL is asked, unsigned: nothing answers there (no serve
	// runs), a warning; an agentbot that checks signatures answers 401.
	contains(t, "check", out, "! Slack request URL: no answer from https://bot.example/slack/events")
	running := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/slack/events" || r.Header.Get("X-Slack-Signature") != "" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer running.Close()
	s.vars["AGENTBOT_PUBLIC_URL"] = running.URL
	code, out = s.check(t)
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	line(t, out, "✓ Slack request URL: "+running.URL+"/slack/events reaches agentbot, which refuses an unsigned request (401)")
	s.vars["AGENTBOT_PUBLIC_URL"] = running.URL + "/elsewhere"
	_, out = s.check(t)
	contains(t, "check", out, "answers an unsigned request with 404 Not Found, not 401")
	s.vars["AGENTBOT_PUBLIC_URL"] = "https://bot.example"
	delete(s.vars, "SLACK_SIGNING_SECRET")
	code, out = s.check(t)
	if code == 0 {
		t.Fatalf("exit 0 without a signing secret:\n%s", out)
	}
	contains(t, "check", out, "SLACK_SIGNING_SECRET is missing")
}

// With SLACK_CLIENT_ID, check reports the installations in the store: a
// warning when there is none yet, the count when there are, and a warning
// naming one whose rotated token expired; no token is read or shown.
func TestCheckInstallState(t *testing.T) {
	s := newCheckSetup(t)
	delete(s.vars, "SLACK_BOT_TOKEN")
	s.vars["SLACK_CLIENT_ID"], s.vars["SLACK_CLIENT_SECRET"] = "1234.5678", "client-secret-4f1c9d"
	_, out := s.check(t)
	contains(t, "check", out, "! Slack installations: none yet")

	raw := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(raw)
	key, _ := secretbox.NewKey(raw)
	kr, _ := secretbox.NewKeyring(key)
	st, err := bolt.Open(s.vars["AGENTBOT_DATA"])
	if err != nil {
		t.Fatal(err)
	}
	v, _ := credentials.New(st, kr, nil)
	ctx := context.Background()
	for _, in := range []credentials.Installation{{Team: "TA", BotToken: "xoxb-inst-a", BotUserID: "UBA"},
		{Enterprise: "E1", EnterpriseInstall: true, BotToken: "xoxb-inst-e1", BotUserID: "UBE"}} {
		if err := v.PutInstallation(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	_, out = s.check(t)
	line(t, out, "✓ Slack installations: 2 workspace(s) or organisation(s), tokens valid")
	lacks(t, "check", out, "xoxb-inst")

	st, _ = bolt.Open(s.vars["AGENTBOT_DATA"])
	v, _ = credentials.New(st, kr, nil)
	if err := v.PutInstallation(ctx, credentials.Installation{Team: "TB", BotToken: "xoxe.xoxb-inst-b", BotUserID: "UBB",
		RefreshToken: "xoxe-1-refresh", Expiry: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, out = s.check(t)
	contains(t, "check", out, "! Slack installations: 3, of which 1 with an expired token: TB")
}

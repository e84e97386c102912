package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"agentbot/bot/fakeslack"
	"agentbot/cmd/agentbot/admin"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// dockerfile reads the repository's Dockerfile: the HEALTHCHECK's command
// (its exec form, without the binary's name) and the environment its ENV
// lines set.
func dockerfile(t *testing.T) (check []string, envs map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures.RepoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	envs = map[string]string{}
	hc := regexp.MustCompile(`(?m)^HEALTHCHECK .*CMD (\[.*\])\s*$`)
	m := hc.FindSubmatch(b)
	if m == nil {
		t.Fatal("the Dockerfile has no HEALTHCHECK ... CMD [...] line")
	}
	if err := json.Unmarshal(m[1], &check); err != nil || len(check) == 0 || check[0] != "agentbot" {
		t.Fatalf("HEALTHCHECK command %s: want [\"agentbot\", ...] (%v)", m[1], err)
	}
	for _, l := range regexp.MustCompile(`(?m)^ENV (.*)$`).FindAllSubmatch(b, -1) {
		for _, kv := range strings.Fields(string(l[1])) {
			k, v, _ := strings.Cut(kv, "=")
			envs[k] = v
		}
	}
	return check[1:], envs
}

// The Dockerfile's HEALTHCHECK command, run against a live serve: exit 0
// while Slack is connected, 1 with /healthz's reason once the connection is
// down, 1 when nothing answers. The image's own environment makes serve
// listen where the check asks.
func TestDockerHealthcheckAgainstServe(t *testing.T) {
	check, imageEnv := dockerfile(t)
	addr := imageEnv["AGENTBOT_HTTP_ADDR"]
	if addr == "" {
		t.Fatal("the image sets no AGENTBOT_HTTP_ADDR: serve would have no /healthz for the HEALTHCHECK")
	}
	if u, err := admin.HealthURL(addr); err != nil || !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("the image's AGENTBOT_HTTP_ADDR=%s is asked at %s (%v); want the loopback address", addr, u, err)
	}

	fs := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	vars := map[string]string{
		"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(), "SLACK_APP_TOKEN": fs.AppToken(),
		"OPENAI_BASE_URL": fm.URL(), "OPENAI_API_KEY": "k", "AGENTBOT_MODEL": "m",
		"AGENTBOT_DATA": t.TempDir(), "AGENTBOT_BUNDLES": bundlesDir(t),
		"AGENTBOT_HTTP_ADDR": "127.0.0.1:0", // the image's port may be taken here
	}
	logs, stop := serveInProcess(t, vars)
	defer stop()
	addrRE := regexp.MustCompile(`serving /healthz and /metrics" addr=(\S+)`)
	var bound string
	opsWait(t, "the HTTP listener", func() bool {
		if m := addrRE.FindStringSubmatch(logs.String()); m != nil {
			bound = m[1]
		}
		return bound != ""
	})
	// The check reads the same variable serve does.
	hvars := map[string]string{"AGENTBOT_HTTP_ADDR": bound}
	var r result
	opsWait(t, "a healthy check", func() bool { r = runCmd(t, hvars, "", check...); return r.code == 0 })
	contains(t, "health", r.stdout, "healthy: http://"+bound+"/healthz answered 200 ok")

	fs.Close() // Slack's connection drops
	opsWait(t, "an unhealthy check", func() bool { r = runCmd(t, hvars, "", check...); return r.code == 1 })
	contains(t, "health", r.stderr, "agentbot health: unhealthy: http://"+bound+"/healthz answered 503: socket mode connection is down")

	stop()
	r = runCmd(t, hvars, "", check...)
	r.wantCode(t, 1)
	contains(t, "health", r.stderr, "agentbot health: unhealthy: no answer from http://"+bound+"/healthz")
}

// health's own mistakes exit 1, never 2 (Docker reserves it), each with
// what to do.
func TestHealthMistakes(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"no address", nil, nil, "AGENTBOT_HTTP_ADDR is not set, so serve has no /healthz to ask"},
		{"bad address", map[string]string{"AGENTBOT_HTTP_ADDR": "8080"}, nil, `AGENTBOT_HTTP_ADDR="8080": want host:port`},
		{"bad flag", nil, []string{"--nope"}, "flag provided but not defined: -nope"},
		{"bad url", nil, []string{"--url", "::nope"}, `--url "::nope"`},
		{"extra argument", map[string]string{"AGENTBOT_HTTP_ADDR": ":1"}, []string{"now"}, "usage: agentbot health"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, tc.vars, "", append([]string{"health"}, tc.args...)...)
			r.wantCode(t, 1)
			contains(t, "stderr", r.stderr, tc.want)
		})
	}
}

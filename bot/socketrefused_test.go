package bot_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// runRefused runs a bot against a fake Slack whose apps.connections.open
// answers code (fake.RefuseSocketMode), or one whose app-level token is not
// the bot's (appToken), and returns Run's error and the log.
func runRefused(t *testing.T, code, appToken string) (error, string) {
	t.Helper()
	fake := fakeslack.New(t)
	if code != "" {
		fake.RefuseSocketMode(code)
	}
	st, err := bolt.Open(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var logs syncBuffer
	cat := catalog.Load(catalog.Options{})
	api := slack.New(fake.BotToken(), slack.OptionAppLevelToken(appToken), slack.OptionAPIURL(fake.APIURL()))
	b, err := bot.New(bot.Config{API: api, Socket: socketmode.New(api), Engine: engine.New(testEngineConfig(fakemodel.NewTB(t), st, st, cat)),
		Store: st, Folders: storage.Folders{Dir: st.Dir()}, Catalog: func() *catalog.Catalog { return cat },
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = b.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("Run kept trying for 30 s while Slack refused every connection:\n%s", logs.String())
	}
	return err, logs.String()
}

// When Slack refuses the Socket Mode connection (an app-level token of the
// wrong type), each refusal is logged at error level with what to do, and
// Run gives up after a few, saying the same; it does not retry silently.
func TestSocketModeRefusalsAreLoggedAndEndTheRun(t *testing.T) {
	err, logs := runRefused(t, "not_allowed_token_type", fakeslack.DefaultAppToken)
	if err == nil {
		t.Fatal("Run returned nil while Slack refused every connection")
	}
	for _, want := range []string{"not_allowed_token_type", "app-level token", "connections:write", "docs/slack.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run's error lacks %q: %v", want, err)
		}
	}
	lines := strings.Count(logs, "level=ERROR msg=\"Slack refused the Socket Mode connection; trying again\"")
	if lines < 2 {
		t.Errorf("%d refusals logged at error level, want one per refused connect before the last:\n%s", lines, logs)
	}
	if !strings.Contains(logs, "hint=") || !strings.Contains(logs, "error=not_allowed_token_type") {
		t.Errorf("the log does not say what Slack answered and what to do:\n%s", logs)
	}
}

// An app-level token Slack does not know (invalid_auth) ends the run at
// once, with the hint.
func TestSocketModeInvalidAuthSaysWhatToDo(t *testing.T) {
	err, _ := runRefused(t, "", "xapp-1-not-this-apps-token")
	if err == nil || !strings.Contains(err.Error(), "invalid_auth") || !strings.Contains(err.Error(), "new app-level token") {
		t.Fatalf("Run = %v, want invalid_auth with the hint", err)
	}
}

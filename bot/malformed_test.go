package bot_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/storage"
)

// Every envelope is acked, one whose payload slack-go cannot decode or of
// a type it does not know included: Slack delivers an envelope again until
// its envelope_id is acked
// (https://docs.slack.dev/apis/events-api/using-socket-mode). The bot
// warns, naming the envelope's type, and goes on answering.
func TestMalformedEnvelopesAreAcked(t *testing.T) {
	ctx := context.Background()
	var logs syncBuffer
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	for _, typ := range []string{"events_api", "slash_commands", "interactive", "mystery_type"} {
		env := r.slack.SendMalformed(typ)
		if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
			t.Fatalf("a malformed %s envelope: %v", typ, err)
		}
		r.waitFor("the warning naming "+typ, func() bool { return strings.Contains(logs.String(), "type="+typ) })
	}
	if out := logs.String(); !strings.Contains(out, "level=WARN") || strings.Contains(out, "U0MALFORMED") {
		t.Fatalf("log:\n%s", out)
	}
	thread, env := r.mention("hello", "")
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if msgs := r.waitBotMessages(thread, 1); !strings.Contains(text(msgs[0]), "Maren") {
		t.Fatalf("after the malformed envelopes, the greeting = %q", text(msgs[0]))
	}
}

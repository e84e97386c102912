package bot_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"agentbot/bot"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// syncBuffer is a log sink tests read while the bot writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// When Slack refuses the greeting's blocks, the refusal is logged at warn
// with the method, and the thread still gets the greeting as plain text.
func TestRefusedGreetingFallsBackToPlainText(t *testing.T) {
	ctx := context.Background()
	var logs syncBuffer
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.slack.FailNext("chat.postMessage", "invalid_blocks")
	thread, _ := r.mention("hello", "")
	msgs := r.waitBotMessages(thread, 1)
	if len(msgs[0].BlockTypes()) != 0 || !strings.Contains(msgs[0].Text, "Maren") || !strings.Contains(msgs[0].Text, "`*brief`") {
		t.Fatalf("fallback greeting = %+v", msgs[0])
	}
	r.waitFor("the warning", func() bool { return strings.Contains(logs.String(), "method=chat.postMessage") })
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "error=invalid_blocks") {
		t.Fatalf("log:\n%s", out)
	}
}

// A channel thread's agent session is titled through agents.sessions.rename
// (DMs through assistant.threads.setTitle).
func TestChannelSessionTitle(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Text: "Sure."})
	thread, _ := r.mention("help me plan the launch", "")
	r.waitFor("the title", func() bool { return len(r.slack.Titles()) > 0 })
	got := r.slack.Titles()[0]
	if got.Method != "agents.sessions.rename" || got.Channel != channel || got.ThreadTS != thread || !strings.Contains(got.Title, "Maren") {
		t.Fatalf("title = %+v", got)
	}
}

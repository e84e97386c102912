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

// A channel thread's agent session gets its title (DMs through
// assistant.threads.setTitle): the session does not exist before its
// first agents.sessions.setStatus, so a rename then is session_not_found
// and the title goes with the setStatus that creates it; once the
// session exists, another agent taking the thread renames it. No call is
// refused otherwise.
func TestChannelSessionTitle(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Text: "Sure."})
	thread, _ := r.mention("help me plan the launch", "")
	r.waitText(thread, "Sure.")
	title, ok := r.slack.AgentSessionTitle(channel, thread)
	if !ok || !strings.Contains(title, "Maren") {
		t.Fatalf("the thread's agent session title = %q (session %v); titles set: %+v", title, ok, r.slack.Titles())
	}
	// Another agent takes the thread: the existing session is renamed.
	r.reply("use retro-coach", thread)
	r.waitFor("the rename", func() bool {
		title, _ = r.slack.AgentSessionTitle(channel, thread)
		return strings.Contains(title, "Dario")
	})
	for _, c := range r.slack.Calls() {
		if strings.HasPrefix(c.Method, "agents.sessions.") && c.Error != "" && c.Error != "session_not_found" {
			t.Errorf("%s refused: %s", c.Method, c.Error)
		}
	}
}

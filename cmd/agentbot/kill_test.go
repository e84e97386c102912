package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// waitLong bounds every wait of the process tests: generous, because the
// race detector and a busy machine slow a process start down.
const waitLong = 30 * time.Second

// serveProc is a real `agentbot serve` (or other command) process: this
// test binary run with childEnv=serve (see TestMain).
type serveProc struct {
	t    testing.TB
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{}
	err  error // Wait's result, once done is closed
	// stdin writes to the process's input; it stays open until the test
	// ends.
	stdin *os.File
}

// startServe starts `agentbot serve` with vars as its agentbot settings.
// Settings of the machine running the tests are left out.
func startServe(t testing.TB, name string, vars map[string]string) *serveProc {
	t.Helper()
	return startChild(t, name, "serve", vars)
}

// startChild starts `agentbot <command>` (arguments split at spaces) with
// vars as its agentbot settings, and stdin that never ends. Settings of the
// machine running the tests are left out.
func startChild(t testing.TB, name, command string, vars map[string]string) *serveProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AGENTBOT_") || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "SLACK_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, childEnv+"="+command)
	// A child without AGENTBOT_DATA never writes in the tester's own
	// state folder, the default data folder.
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+t.TempDir())
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &serveProc{t: t, cmd: cmd, logs: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	r.Close()
	p.stdin = w
	t.Cleanup(func() { w.Close() })
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.logs.String())
		}
	})
	return p
}

// kill ends the process with SIGKILL, as a crash or an OOM kill would.
func (p *serveProc) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(waitLong):
		p.t.Fatal("killed process did not end")
	}
}

// stop sends SIGTERM and requires a clean exit (status 0) within timeout.
func (p *serveProc) stop(timeout time.Duration) time.Duration {
	p.t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.t.Fatalf("serve did not stop within %s of SIGTERM\n%s", timeout, p.logs.String())
	}
	if p.err != nil {
		var ee *exec.ExitError
		if errors.As(p.err, &ee) {
			p.t.Fatalf("serve exited with %v after SIGTERM, want status 0\n%s", ee, p.logs.String())
		}
		p.t.Fatal(p.err)
	}
	return time.Since(start)
}

func (p *serveProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ephemeralWith waits for an ephemeral answer holding sub, while the
// process is alive.
func ephemeralWith(t *testing.T, fake *fakeslack.Server, p *serveProc, sub string, after int) {
	t.Helper()
	err := fake.WaitFor(func() bool {
		for _, m := range fake.Messages()[after:] {
			if m.Kind == fakeslack.KindEphemeral && strings.Contains(m.Text, sub) {
				return true
			}
		}
		return p.exited()
	}, waitLong)
	if err != nil || p.exited() {
		t.Fatalf("no ephemeral %q (err %v, exited %v)\n%s", sub, err, p.exited(), p.logs.String())
	}
}

// botText is everything the bot shows in a thread, oldest first: posts
// with updates applied, markdown blocks and streams.
func botText(fake *fakeslack.Server, channel, thread string) []string {
	var out []string
	for _, m := range fake.ThreadMessages(channel, thread) {
		if m.Kind != fakeslack.KindUser {
			out = append(out, m.Text+"\n"+m.MarkdownText())
		}
	}
	return out
}

func indexOf(texts []string, sub string) int {
	for i, s := range texts {
		if strings.Contains(s, sub) {
			return i
		}
	}
	return -1
}

// TestKillMidTurnLosesNoMessage: a kill in the middle of a turn followed
// by a restart loses no user message. The first message's turn hangs in
// its model call; a second message arrives in the thread and is acked; the
// process is killed. The restarted process answers both, in order, each
// once, and stops cleanly on SIGTERM.
func TestKillMidTurnLosesNoMessage(t *testing.T) {
	ctx := context.Background()
	if testing.Short() {
		t.Skip("starts agentbot processes")
	}
	fake := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	data := t.TempDir()
	vars := map[string]string{
		"SLACK_API_URL":      fake.APIURL(),
		"SLACK_BOT_TOKEN":    fakeslack.DefaultBotToken,
		"SLACK_APP_TOKEN":    fakeslack.DefaultAppToken,
		"OPENAI_BASE_URL":    fm.URL(),
		"OPENAI_API_KEY":     "k",
		"AGENTBOT_MODEL":     "m",
		"AGENTBOT_DATA":      data,
		"AGENTBOT_BUNDLES":   bundlesDir(t),
		"AGENTBOT_LOG_LEVEL": "debug",
	}
	const (
		user    = "U0KILLUSER"
		channel = "C0KILLCHAN"
		second  = "the second message"
	)

	// Run 1: the channel's default agent, then a turn that hangs.
	start := time.Now()
	p1 := startServe(t, "serve #1", vars)
	if err := fake.WaitFor(func() bool { return fake.Connected() == 1 || p1.exited() }, waitLong); err != nil || p1.exited() {
		t.Fatalf("serve #1 did not connect (err %v)\n%s", err, p1.logs.String())
	}
	t.Logf("serve #1 connected after %s", time.Since(start).Round(time.Millisecond))
	fake.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "use product-lead", UserID: user, ChannelID: channel})
	ephemeralWith(t, fake, p1, "now this channel's default", 0)

	fm.Enqueue(fakemodel.Reply{Hang: true})
	ts1 := fake.NextTS()
	env1 := fake.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: user, Channel: channel,
		Text: "<@" + fake.BotUserID() + "> *brief", TimeStamp: ts1})
	if _, err := fake.WaitAck(env1, waitLong); err != nil {
		t.Fatalf("mention not acked: %v", err)
	}
	waitUntil(t, "the first turn's model call", waitLong, func() bool { return fm.Calls() == 1 || p1.exited() })
	if p1.exited() {
		t.Fatalf("serve #1 ended\n%s", p1.logs.String())
	}

	// The second message arrives while the first turn runs.
	ts2 := fake.NextTS()
	env2 := fake.SendEvent(slackevents.MessageEvent{Type: "message", User: user, Channel: channel, ChannelType: "channel",
		Text: second, TimeStamp: ts2, ThreadTimeStamp: ts1})
	if _, err := fake.WaitAck(env2, waitLong); err != nil {
		t.Fatalf("thread reply not acked: %v", err)
	}
	// The intake handles events one at a time, in order: once a later
	// slash command is answered, the reply before it has been persisted.
	n := len(fake.Messages())
	fake.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "status", UserID: user, ChannelID: channel})
	ephemeralWith(t, fake, p1, "default agent is", n)
	if c := fm.Calls(); c != 1 {
		t.Fatalf("%d model calls before the kill, want the 1 hanging", c)
	}
	p1.kill()
	if got := indexOf(botText(fake, channel, ts1), "You said:"); got >= 0 {
		t.Fatalf("an answer before the kill: %q", botText(fake, channel, ts1))
	}

	// Run 2 on the same data folder: the model answers by echoing.
	fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
		first, _, _ := strings.Cut(req.LastUserText(), "\n")
		return fakemodel.Reply{Text: "You said: " + first}
	})
	start = time.Now()
	p2 := startServe(t, "serve #2", vars)
	want1, want2 := "You said: *brief", "You said: "+second
	err := fake.WaitFor(func() bool {
		texts := botText(fake, channel, ts1)
		return (indexOf(texts, want1) >= 0 && indexOf(texts, want2) >= 0) || p2.exited()
	}, waitLong)
	if err != nil || p2.exited() {
		t.Fatalf("answers after the restart (err %v, exited %v): %q\n%s", err, p2.exited(), botText(fake, channel, ts1), p2.logs.String())
	}
	t.Logf("both answers %s after the restart", time.Since(start).Round(time.Millisecond))

	texts := botText(fake, channel, ts1)
	if i1, i2 := indexOf(texts, want1), indexOf(texts, want2); i1 > i2 {
		t.Errorf("answers out of order in the thread: %q", texts)
	}
	reqs := fm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3 (the killed one, then one per message)", len(reqs))
	}
	if got := reqs[1].LastUserText(); !strings.HasPrefix(got, "*brief") || !strings.Contains(got, "picked menu item") {
		t.Errorf("first call after the restart answers %q, want the *brief pick", got)
	}
	if got := reqs[2].LastUserText(); got != second {
		t.Errorf("second call after the restart answers %q, want %q", got, second)
	}
	// The resumed request extends the killed one: same messages, in order.
	if a, b := views(sentMessages(t, reqs[0])), views(sentMessages(t, reqs[1])); len(a) > len(b) {
		t.Errorf("resumed request is shorter (%d) than the killed one (%d)", len(b), len(a))
	} else {
		for i := range a {
			if a[i].Role != b[i].Role || a[i].Content != b[i].Content {
				t.Errorf("message %d differs after the restart: %+v vs %+v", i, a[i], b[i])
				break
			}
		}
	}

	took := p2.stop(waitLong)
	t.Logf("serve #2 stopped %s after SIGTERM", took.Round(time.Millisecond))

	// The stored transcript holds each user message exactly once, and no
	// message is left in the queue.
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := fake.TeamID() + "/" + channel + "/" + ts1
	s, err := storage.Session(ctx, st, key)
	if err != nil {
		t.Fatal(err)
	}
	var briefs, seconds, answers int
	for _, m := range s.Messages {
		switch {
		case m.Role == "user" && strings.HasPrefix(m.Content, "*brief"):
			briefs++
		case m.Role == "user" && m.Content == second:
			seconds++
		case m.Role == "assistant" && strings.HasPrefix(m.Content, "You said: "):
			answers++
		}
	}
	if briefs != 1 || seconds != 1 || answers != 2 {
		t.Errorf("transcript has %d *brief, %d second messages and %d answers; want 1, 1, 2", briefs, seconds, answers)
	}
	if q, err := st.Pending(ctx, key); err != nil || len(q) != 0 {
		t.Errorf("queue after the restart: %d items, err %v", len(q), err)
	}
}

// consecutiveUsers returns the index of the first user message that
// follows another user message, or -1.
func consecutiveUsers(msgs []openai.ChatCompletionMessage) int {
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Role == openai.ChatMessageRoleUser && msgs[i-1].Role == openai.ChatMessageRoleUser {
			return i
		}
	}
	return -1
}

// TestChatKillMidTurnResumes: `chat --session` killed with SIGKILL while
// its turn waits for the model, then run again on the same session,
// finishes the cut turn first and says so: no second greeting, the resumed
// request extends the killed one, and no request holds two user messages
// in a row.
func TestChatKillMidTurnResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agentbot processes")
	}
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	fm.Enqueue(fakemodel.Reply{Hang: true})
	p := startChild(t, "chat #1", "chat --agent product-lead --session cut", vars)
	waitUntil(t, "the greeting", waitLong, func() bool { return strings.Contains(p.logs.String(), "Maren") || p.exited() })
	if _, err := p.stdin.WriteString("tell me about reorder\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the turn's model call", waitLong, func() bool { return fm.Calls() == 1 || p.exited() })
	if p.exited() {
		t.Fatalf("chat #1 ended before the kill:\n%s", p.logs.String())
	}
	p.kill()

	fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "You said: " + req.LastUserText()}
	})
	r := runCmd(t, vars, "next question\n", "chat", "--session", "cut")
	r.wantCode(t, 0)
	contains(t, "stdout", r.stdout, "Resuming the unfinished turn…")
	contains(t, "stdout", r.stdout, "You said: tell me about reorder")
	contains(t, "stdout", r.stdout, "You said: next question")
	lacks(t, "stdout", r.stdout, "Here is what I can do") // no second greeting

	reqs := fm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3 (the killed one, the resumed one, the next question)", len(reqs))
	}
	for _, req := range reqs {
		if i := consecutiveUsers(req.Messages); i >= 0 {
			t.Errorf("request %d has two user messages in a row at %d: %+v", req.N, i, views(sentMessages(t, req)))
		}
	}
	if a, b := views(sentMessages(t, reqs[0])), views(sentMessages(t, reqs[1])); len(a) != len(b) {
		t.Errorf("the resumed request has %d messages, the killed one %d", len(b), len(a))
	} else {
		for i := range a {
			if a[i].Role != b[i].Role || a[i].Content != b[i].Content {
				t.Errorf("message %d differs after the kill: %+v vs %+v", i, a[i], b[i])
				break
			}
		}
	}
	if got := reqs[2].LastUserText(); got != "next question" {
		t.Errorf("third request answers %q", got)
	}
}

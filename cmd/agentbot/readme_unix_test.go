//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// The placeholders of the README's commands, and what a test puts in
// their place (the Slack tokens are the fake Slack's).
const readmeKey = "sk-readme-0123456789abcdef"

// shell runs the README's command lines one after another as a person
// types them: each with bash, in the folder and environment the lines
// before it left (export and cd carry over), HOME a folder of the test's.
type shell struct {
	t    *testing.T
	bash string
	home string
	dir  string
	env  []string
}

// newShell is a shell in dir with a clean environment: HOME, a PATH with
// go and the system's tools, Go's caches (so builds need no network), and
// the extra variables.
func newShell(t *testing.T, dir string, extra ...string) *shell {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("the README's commands are shell commands: %v", err)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the README's commands build with go: %v", err)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "USER=newcomer", "TMPDIR=" + t.TempDir(), "LANG=C.UTF-8",
		"PATH=" + filepath.Dir(gobin) + ":/usr/local/bin:/usr/bin:/bin", "GOPATH=" + filepath.Join(home, "go"), "GOTOOLCHAIN=local"}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPROXY", "GOFLAGS", "GONOSUMDB", "GOSUMDB"} {
		out, err := exec.Command(gobin, "env", v).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", v, err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	return &shell{t: t, bash: bash, home: home, dir: dir, env: append(env, extra...)}
}

// ranCommand is one README line run by the shell: how it ended and what it
// printed, HOME shown as ~ as the README shows it.
type ranCommand struct {
	line           string
	code           int
	stdout, stderr string
}

// run runs line with stdin as its input.
func (sh *shell) run(line, stdin string) ranCommand {
	t := sh.t
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	script := line + "\n__rc=$?\nenv -0 > '" + state + ".env'\npwd > '" + state + ".pwd'\nexit $__rc\n"
	cmd := exec.Command(sh.bash, "-c", script)
	cmd.Dir, cmd.Env, cmd.Stdin = sh.dir, sh.env, strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if env, err := os.ReadFile(state + ".env"); err == nil {
		sh.env = slices.DeleteFunc(strings.Split(string(env), "\x00"), func(v string) bool {
			return v == "" || strings.HasPrefix(v, "_=") || strings.HasPrefix(v, "__rc=") || strings.HasPrefix(v, "SHLVL=") || strings.HasPrefix(v, "PWD=") || strings.HasPrefix(v, "OLDPWD=")
		})
	}
	if pwd, err := os.ReadFile(state + ".pwd"); err == nil {
		sh.dir = strings.TrimSpace(string(pwd))
	}
	home := func(s string) string { return strings.ReplaceAll(s, sh.home, "~") }
	return ranCommand{line: line, code: code, stdout: home(out.String()), stderr: home(errb.String())}
}

// matchOutput checks that each line of want (an output block of the
// README, "…" standing for any text) matches a line of got, in order;
// a want line that is "…" alone stands for any lines.
func matchOutput(t *testing.T, what string, want []string, got string) {
	t.Helper()
	lines := strings.Split(got, "\n")
	i := 0
	for _, w := range want {
		w = strings.TrimRight(w, " ")
		if strings.TrimSpace(w) == "" || strings.TrimSpace(w) == "…" {
			continue
		}
		re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(w), "…", ".*") + "$")
		for i < len(lines) && !re.MatchString(strings.TrimRight(lines[i], " ")) {
			i++
		}
		if i == len(lines) {
			t.Errorf("%s: no line like %q (in the README's order) in:\n%s", what, w, got)
			return
		}
		i++
	}
}

// inputs are the lines typed in an output block: those after "> ".
func inputs(output []string) string {
	var b strings.Builder
	for _, l := range output {
		if in, ok := strings.CutPrefix(l, "> "); ok {
			b.WriteString(in + "\n")
		}
	}
	return b.String()
}

// check runs c's README line and checks it as readmeChecks and its output
// block say.
func (sh *shell) check(c readmeCommand, line string) ranCommand {
	sh.t.Helper()
	r := sh.run(line, inputs(c.output))
	if r.code != 0 {
		sh.t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", c.line, r.code, r.stdout, r.stderr)
	}
	want := readmeChecks[c.line]
	if want.want != "" && !regexp.MustCompile(want.want).MatchString(r.stdout) {
		sh.t.Errorf("%s: stdout does not match %q:\n%s", c.line, want.want, r.stdout)
	}
	if want.err != "" && !regexp.MustCompile(want.err).MatchString(r.stderr) {
		sh.t.Errorf("%s: stderr does not match %q:\n%s", c.line, want.err, r.stderr)
	}
	if c.output != nil {
		matchOutput(sh.t, c.line, c.output, r.stdout)
	}
	return r
}

// readmeModel is the model a newcomer's key reaches: it lists the default
// model, answers agentbot check's probes as a good model does, and plays
// the README's chat: Maren's first question, the save of the brief, and
// her answer after it.
func readmeModel(t *testing.T) *fakemodel.Server {
	fm := fakemodel.NewTB(t)
	fm.RequireKey(readmeKey)
	fm.SetModels("gpt-4.1")
	brief, _ := json.Marshal(map[string]string{"path": "product-brief.md",
		"content": "# Product brief: one-click reorder\n\nB2B buyers rebuild the same cart every week.\n"})
	var mu sync.Mutex
	turn := 0
	fm.Handle(func(r fakemodel.Request) fakemodel.Reply {
		if !slices.ContainsFunc(r.Tools, func(tool openai.Tool) bool { return tool.Function.Name == "save_output" }) {
			return probeAnswers(r) // agentbot check
		}
		mu.Lock()
		defer mu.Unlock()
		turn++
		switch turn {
		case 1:
			return fakemodel.Reply{Text: "Let's start with the problem. Who keeps asking for one-click reorder, and what do they do today?"}
		case 2:
			return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: string(brief)}}}
		}
		return fakemodel.Reply{Text: "Saved the problem statement in product-brief.md. Next: who would use it weekly?"}
	})
	return fm
}

// A newcomer follows the README's "Try it in the terminal" in a fresh
// environment: go install in the checkout, the PATH and the key, then
// every command from an empty folder, against a fake model whose address
// is all the test adds (OPENAI_BASE_URL). Each exits 0 and prints what the
// README shows; nothing is left in the folder but what the commands were
// asked to write there.
func TestNewcomerFollowsTheREADME(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agentbot with go install")
	}
	fm := readmeModel(t)
	sh := newShell(t, fixtures.RepoRoot(t), "OPENAI_BASE_URL="+fm.URL())
	var try []readmeCommand
	for _, c := range readmeCommands(t) {
		if c.heading == "Try it in the terminal" {
			try = append(try, c)
		}
	}
	if len(try) < 8 {
		t.Fatalf("the README's terminal section shows %d commands", len(try))
	}
	var work string
	for _, c := range try {
		line := strings.ReplaceAll(c.line, "sk-…", readmeKey)
		sh.check(c, line)
		if strings.HasPrefix(c.line, "cd ") {
			work = sh.dir
		}
		if c.line == "go install ./cmd/agentbot" {
			if _, err := os.Stat(filepath.Join(sh.home, "go", "bin", "agentbot")); err != nil {
				t.Fatalf("go install put no agentbot into $(go env GOPATH)/bin: %v", err)
			}
		}
	}
	if work == "" || work == fixtures.RepoRoot(t) {
		t.Fatalf("the commands did not run in a folder of their own (%q)", work)
	}
	entries, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"agentbot-backup.db", "reorder.md"}) {
		t.Errorf("the working folder holds %q, want only the export and the backup the commands asked for", names)
	}
	if md, err := os.ReadFile(filepath.Join(work, "reorder.md")); err != nil || !strings.Contains(string(md), "B2B buyers rebuild the same cart every week") {
		t.Errorf("the export lacks the conversation: %v\n%s", err, md)
	}
}

// The README's first command runs the bot from the checkout: with the
// placeholders replaced by working tokens (a fake Slack's) and a key, it
// connects to Slack and stops cleanly on ^C.
func TestREADMEServeCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs agentbot serve with go run")
	}
	shown := lineOf(t, "go run ./cmd/agentbot serve")
	slack := fakeslack.New(t)
	fm := readmeModel(t)
	line := strings.NewReplacer("xapp-…", slack.AppToken(), "xoxb-…", slack.BotToken(), "sk-…", readmeKey).Replace(shown)
	sh := newShell(t, fixtures.RepoRoot(t), "SLACK_API_URL="+slack.APIURL(), "OPENAI_BASE_URL="+fm.URL(),
		"AGENTBOT_DATA="+filepath.Join(t.TempDir(), "data"))
	cmd := exec.Command(sh.bash, "-c", line)
	cmd.Dir, cmd.Env = sh.dir, sh.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // ^C reaches go run and the bot, as in a terminal
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	deadline := time.After(3 * time.Minute) // go run builds first
	for slack.Connected() == 0 {
		select {
		case err := <-done:
			t.Fatalf("serve ended before connecting: %v\n%s", err, logs.String())
		case <-deadline:
			t.Fatalf("serve did not connect to Slack:\n%s", logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	// ^C to the bot: go run passes its exit code on (go run itself exits 1
	// whenever it is interrupted too, whatever its child does). Without
	// /proc to find the bot, ^C goes to the whole group, as a terminal's.
	bot, group := procChild(cmd.Process.Pid, "agentbot"), false
	if bot == 0 && runtime.GOOS == "linux" {
		t.Fatalf("no agentbot process under go run (%d) in /proc", cmd.Process.Pid)
	}
	if bot == 0 {
		bot, group = -cmd.Process.Pid, true
	}
	if err := syscall.Kill(bot, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil && !group {
			t.Fatalf("serve after ^C: %v\n%s", err, logs.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("serve did not stop on ^C:\n%s", logs.String())
	}
	contains(t, "serve's log", logs.String(), `msg="agentbot stopped"`)
	if want := readmeChecks[shown].err; !regexp.MustCompile(want).MatchString(logs.String()) {
		t.Errorf("serve's log does not match %q:\n%s", want, logs.String())
	}
	lacks(t, "serve's log", logs.String(), readmeKey)
}

// lineOf is the README command line that ends with suffix.
func lineOf(t *testing.T, suffix string) string {
	t.Helper()
	for _, c := range readmeCommands(t) {
		if strings.HasSuffix(c.line, suffix) {
			return c.line
		}
	}
	t.Fatalf("the README shows no command ending with %q", suffix)
	return ""
}

// procChild finds, through /proc, the process named name among pid's
// descendants; 0 when there is none or no /proc. Each of a process's
// threads lists the children it started.
func procChild(pid int, name string) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var kids []string
	for _, task := range tasks {
		if b, err := os.ReadFile(task); err == nil {
			kids = append(kids, strings.Fields(string(b))...)
		}
	}
	for _, f := range kids {
		kid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", kid)); err == nil && strings.TrimSpace(string(comm)) == name {
			return kid
		}
		if found := procChild(kid, name); found != 0 {
			return found
		}
	}
	return 0
}

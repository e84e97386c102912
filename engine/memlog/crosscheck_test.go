package memlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentbot/engine/fixtures"
)

// script is memlog.py from the BMAD 6.12 fixture, run with python3.
type script struct {
	python, path string
}

// newScript finds the fixture (skipping, or failing under CI=true, when it is
// missing) and python3 (skipping when it is missing).
func newScript(t *testing.T) script {
	t.Helper()
	path := filepath.Join(fixtures.Dir(t, fixtures.V612), "_bmad", "scripts", "memlog.py")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the fixture has no memlog.py: %v", err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		fixtures.Unavailable(t, fixtures.NeedPython, "python3 is not on PATH")
	}
	// Resolve a version manager's shim (pyenv) once: each run is faster.
	if out, err := exec.Command(python, "-c", "import sys; print(sys.executable)").Output(); err == nil {
		if exe := strings.TrimSpace(string(out)); exe != "" {
			python = exe
		}
	}
	return script{python, path}
}

// run runs the script and returns its stdout, its stderr and its exit code.
func (s script) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(s.python, append([]string{s.path}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONUTF8=1", "PYTHONDONTWRITEBYTECODE=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running memlog.py: %v", err)
	}
	return out.String(), errb.String(), code
}

// ack runs a command that must succeed and returns the entries of its ack.
func (s script) ack(t *testing.T, wantPath string, args ...string) int {
	t.Helper()
	stdout, stderr, code := s.run(t, args...)
	if code != 0 {
		t.Fatalf("memlog.py %q: exit %d\n%s", args, code, stderr)
	}
	var a struct {
		OK      bool   `json:"ok"`
		Memlog  string `json:"memlog"`
		Entries *int   `json:"entries"`
	}
	if err := json.Unmarshal([]byte(stdout), &a); err != nil || !a.OK || a.Entries == nil {
		t.Fatalf("memlog.py %q: bad ack %q (%v)", args, stdout, err)
	}
	if a.Memlog != wantPath {
		t.Errorf("ack memlog = %q, want %q", a.Memlog, wantPath)
	}
	return *a.Entries
}

// normalise replaces the value of the updated line, the last line of the
// frontmatter, by a placeholder; it reports the value it replaced.
func normalise(t *testing.T, who string, data []byte) (string, string) {
	t.Helper()
	s := string(data)
	fence := strings.Index(s, "\n---\n")
	line := 0
	if fence >= 0 {
		line = strings.LastIndexByte(s[:fence], '\n') + 1
	}
	if fence < 0 || !strings.HasPrefix(s[line:fence], "updated: ") {
		t.Fatalf("%s: no updated line before the closing fence:\n%q", who, s)
	}
	stamp := s[line+len("updated: ") : fence]
	return s[:line] + "updated: <STAMP>" + s[fence:], stamp
}

// compare checks two memlogs byte for byte except the updated stamp, and
// that the script's stamp is the time it ran, to the minute.
func compare(t *testing.T, step string, py, gobytes []byte, before, after time.Time) {
	t.Helper()
	p, stamp := normalise(t, "memlog.py", py)
	g, _ := normalise(t, "Go", gobytes)
	if p != g {
		t.Fatalf("%s: files differ\nmemlog.py: %q\n       Go: %q", step, p, g)
	}
	if stamp != Stamp(before) && stamp != Stamp(after) {
		t.Errorf("%s: memlog.py stamped %q, not the local time %s..%s", step, stamp, Stamp(before), Stamp(after))
	}
}

// op is one command, run both by the script and in Go.
type op struct {
	name  string
	args  []string // after the command name and its target
	apply func(data []byte, now time.Time) ([]byte, error)
}

func appendOp(text, typ, by string) op {
	args := []string{"--text=" + text}
	if typ != "" {
		args = append(args, "--type="+typ)
	}
	if by != "" {
		args = append(args, "--by="+by)
	}
	return op{"append", args, func(data []byte, now time.Time) ([]byte, error) {
		return Append(data, text, typ, by, now)
	}}
}

func setOp(key, value string) op {
	return op{"set", []string{"--key=" + key, "--value=" + value}, func(data []byte, now time.Time) ([]byte, error) {
		return Set(data, key, value, now)
	}}
}

// goClock is an arbitrary clock for the Go side; stamps are normalised.
var goClock = time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)

// TestCrossCheckSequence runs init, append and set with tricky arguments
// through memlog.py and through this package and compares every step.
func TestCrossCheckSequence(t *testing.T) {
	s := newScript(t)
	dir := t.TempDir()
	file := filepath.Join(dir, FileName)

	fields := []string{
		"topic=Onboarding: flow — ünïcode 🚀 (café)",
		"goal=--- lift --- week-1\tretention ---",
		"  spaced key  = \u3000 spaced value \t",
		"dup=1", "empty=", "dup=2", "eq=a=b=c",
		"updated=ignored",
		"---=dashes",
	}
	before := time.Now()
	n := s.ack(t, file, append([]string{"init", "--workspace", dir}, prefix("--field=", fields)...)...)
	after := time.Now()
	var parsed []Field
	for _, f := range fields {
		pf, err := ParseField(f)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, pf)
	}
	data := Init(parsed, goClock)
	py, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "init", py, data, before, after)
	if n != Entries(data) {
		t.Errorf("init: memlog.py counts %d entries, Entries says %d", n, Entries(data))
	}

	ops := []op{
		appendOp("user picked  techniques:\tSCAMPER,\r\nthen   Six Thinking Hats", "note", ""),
		appendOp("ünïcode 日本語 🚀 — \u00a0nbsp\u3000ideographic\x1funit sep\u200bzero-width\u2028line sep\u0085nel\v\f end", "idea", "user"),
		appendOp("by only", "", "coach"),
		appendOp("  no tag  ", "", ""),
		appendOp("---", "", ""),
		appendOp("- starts with a dash", "", ""),
		appendOp("", "", ""),
		appendOp("x", "  ", ""),
		appendOp("x", " spaced type ", " spaced by "),
		appendOp("value: with colon", "key: val", ""),
		setOp("goal", "new goal\r\n---\nwith --- dashes\n"),
		setOp("owner", "  ana  "),
		setOp("topic", "a: b: c"),
		setOp("x:y", "1"),
		setOp(" dup ", "3"),
		setOp("updated", "manual"),
		setOp("blank", ""),
		appendOp("after the sets\n", "event", ""),
		setOp("owner", "bob"),
		appendOp("session complete", "event", ""),
	}
	for i, o := range ops {
		before := time.Now()
		n := s.ack(t, file, append([]string{o.name, "--workspace", dir}, o.args...)...)
		after := time.Now()
		var err error
		data, err = o.apply(data, goClock)
		if err != nil {
			t.Fatalf("step %d %s %q: %v", i, o.name, o.args, err)
		}
		py, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		step := o.name + " " + strings.Join(o.args, " ")
		compare(t, step, py, data, before, after)
		if n != Entries(data) {
			t.Errorf("%s: memlog.py counts %d entries, Entries says %d", step, n, Entries(data))
		}
	}
	if got := Entries(data); got != 12 {
		t.Errorf("Entries at the end = %d, want 12", got)
	}
}

// TestCrossCheckExisting runs append and set on hand-written files, through
// --path, including malformed ones.
func TestCrossCheckExisting(t *testing.T) {
	s := newScript(t)
	inputs := []string{
		"---\r\ntopic: a\r\nupdated: 2020-01-01T00:00\r\n---\r\n\r\n- (idea) one\r\n- two\r\n",
		"---\rtopic: a\r---\r- one\r\r",
		"---\n---",
		"---\n---\n",
		"---\n---\n \n\t\n",
		"---\ntopic: x\n---\n\n\n- a\n\n \n- b\n\n\n",
		"---\n---\n  indented\n",
		"---\n k : v \njunk\nupdated: old\nk: w\n : e\n::\n---\n",
		"---\ntopic: ---\n--- \n ---\n---\nbody\n---\nb: 2\n",
		"---\x0ba: 1\x0c---\x1c- x\x1d- y\x1e- z\u0085- v\u2028- w\u2029- u\x1f- t",
		"---\n---\n\x00\ufeff\n- -\n-- x\n",
		"---\n- fm line\n---\n- a\n-b\n - c\n-\n- \n",
		"---\ntopic: x --- y\nupdated: 2020-01-01T00:00\n---\n\n- only\n",
		// malformed
		"",
		"\n---\n---\n",
		"topic: x\n---\n",
		"\ufeff---\n---\n",
		"---",
		"---\ntopic: x\n",
		"---\ntopic: ---\n--- \n ---\n----\n",
	}
	ops := []op{
		appendOp("new\tentry", "idea", "user"),
		setOp("topic", "set\nvalue"),
		setOp("new", "v"),
	}
	dir := t.TempDir()
	for i, in := range inputs {
		for _, o := range ops {
			file := filepath.Join(dir, "memlog.md")
			if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
				t.Fatal(err)
			}
			step := fmt.Sprintf("%s %s on input %d", o.name, strings.Join(o.args, " "), i)
			got, goErr := o.apply([]byte(in), goClock)
			before := time.Now()
			stdout, stderr, code := s.run(t, append([]string{o.name, "--path", file}, o.args...)...)
			after := time.Now()
			if code != 0 {
				if goErr == nil {
					t.Errorf("%s %q: memlog.py failed, Go did not:\n%s", step, in, stderr)
				} else if !strings.Contains(stderr, "ValueError: "+goErr.Error()+"\n") {
					t.Errorf("%s %q: Go error %q, memlog.py:\n%s", step, in, goErr, stderr)
				}
				continue
			}
			if goErr != nil {
				t.Errorf("%s %q: Go failed, memlog.py did not: %v", step, in, goErr)
				continue
			}
			py, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, step+" "+strconv.Quote(in), py, got, before, after)
			var a struct{ Entries int }
			if err := json.Unmarshal([]byte(stdout), &a); err != nil {
				t.Fatalf("%s: bad ack %q", step, stdout)
			}
			if a.Entries != Entries(got) {
				t.Errorf("%s %q: memlog.py counts %d entries, Entries says %d", step, in, a.Entries, Entries(got))
			}
		}
	}
}

// TestCrossCheckFieldErrors compares ParseField's error with the script's
// for arguments without "=", whose repr quoting varies.
func TestCrossCheckFieldErrors(t *testing.T) {
	s := newScript(t)
	for _, arg := range []string{
		"x", "", "it's", `it's "q"`, "a\tb\nc\r\\", "é😀\x7f\u0085\u00a0\u2028", "a\xffb", "\x1b[0m",
	} {
		dir := t.TempDir()
		_, stderr, code := s.run(t, "init", "--workspace", dir, "--field="+arg)
		_, err := ParseField(arg)
		if err == nil {
			t.Fatalf("ParseField(%q) succeeded", arg)
		}
		if want := "error: " + err.Error() + "\n"; code != 2 || stderr != want {
			t.Errorf("memlog.py --field=%q: exit %d, stderr %q; want 2, %q", arg, code, stderr, want)
		}
	}
}

func prefix(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
}

package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"agentbot/engine/fixtures"
)

// The README's commands and what they print are checked here and in
// readme_unix_test.go, which runs them: a newcomer reads the README top to
// bottom, so every command it shows must work as shown.

// mdBlock is one fenced code block of a markdown file: its language, its
// lines, the heading it is under, and whether it follows the block before
// it with nothing but blank lines between (an output block follows its
// command's block).
type mdBlock struct {
	lang, heading string
	lines         []string
	follows       bool
}

// mdBlocks reads the fenced code blocks of a markdown file.
func mdBlocks(t testing.TB, path string) []mdBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out     []mdBlock
		cur     *mdBlock
		heading string
		between = true // only blank lines since the last block ended
	)
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &mdBlock{lang: strings.TrimPrefix(line, "```"), heading: heading, follows: between && len(out) > 0}
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur, between = nil, true
		case cur != nil:
			cur.lines = append(cur.lines, line)
		default:
			if strings.HasPrefix(line, "#") {
				heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
			}
			between = between && strings.TrimSpace(line) == ""
		}
	}
	return out
}

// readmeCommand is one command line of the README's shell blocks, the
// comment after it cut, and the output block that follows its block when
// it is the block's last command.
type readmeCommand struct {
	line, heading string
	output        []string
}

// readmeCommands lists the README's shell commands in order.
func readmeCommands(t testing.TB) []readmeCommand {
	t.Helper()
	blocks := mdBlocks(t, filepath.Join(fixtures.RepoRoot(t), "README.md"))
	var out []readmeCommand
	for i, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		first := len(out)
		for _, l := range b.lines {
			if l = commandOf(l); l != "" {
				out = append(out, readmeCommand{line: l, heading: b.heading})
			}
		}
		if i+1 < len(blocks) && blocks[i+1].lang == "text" && blocks[i+1].follows && len(out) > first {
			out[len(out)-1].output = blocks[i+1].lines
		}
	}
	return out
}

// commandOf is a shell line without its comment ("" for none).
func commandOf(line string) string {
	if i := strings.Index(line, "  #"); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "#") {
		return ""
	}
	return line
}

// How each README command is checked: every command of the README is
// here, and every entry is in the README (TestREADMECommandsAreAllChecked).
// want is a pattern of what it prints on stdout (with its output block, if
// the README shows one, checked too), err one of stderr; "" checks only
// that it exits 0. serve and go test are the two commands'.
var readmeChecks = map[string]struct{ want, err string }{
	"SLACK_APP_TOKEN=xapp-… SLACK_BOT_TOKEN=xoxb-… OPENAI_API_KEY=sk-… go run ./cmd/agentbot serve": {err: `msg="connected to slack"`},
	"go test -race ./...":                                  {}, // the command .ci/run runs (TestREADMETestCommandIsCIs)
	"go install ./cmd/agentbot":                            {},
	`export PATH="$(go env GOPATH)/bin:$PATH"`:             {},
	"export OPENAI_API_KEY=sk-…":                           {},
	`cd "$(mktemp -d)"`:                                    {},
	"agentbot check --no-slack":                            {want: `(?m)^agentbot check: all \d+ ok, 0 warning\(s\)$`},
	"agentbot chat --agent product-lead --session reorder": {want: `✓ saved product-brief.md \(\d+ bytes, v1\)`},
	"agentbot sessions list":                               {want: `(?m)^\w+\s+product-lead\s+\d+\s+1\s+\d+\s+\S+ \S+\s+chat/reorder$`, err: `reading the store in ~/.local/state/agentbot`},
	"agentbot sessions export reorder -o reorder.md":       {want: `(?m)^wrote reorder.md \(\d+ bytes\)$`},
	"agentbot projects show terminal":                      {want: `(?m)^product-brief.md\s+1\s+\d+\s+newcomer with product-lead\s`},
	"agentbot backup agentbot-backup.db":                   {want: `(?m)^wrote agentbot-backup.db \(\d+ bytes\), a consistent copy of agentbot.db$`},
}

// The README is a page a newcomer reads top to bottom: under 250 lines,
// first what agentbot is with a picture of a thread, then the two
// commands, then trying it in the terminal; everything else is in docs/.
func TestREADMEReadsTopToBottom(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) >= 250 {
		t.Errorf("README.md has %d lines, want under 250: move details into docs/", len(lines))
	}
	var headings []string
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			headings = append(headings, strings.TrimPrefix(l, "## "))
		}
	}
	if len(headings) < 2 || headings[0] != "Two commands" || headings[1] != "Try it in the terminal" {
		t.Errorf("the README's sections are %q; want the two commands first, then trying it in the terminal", headings)
	}
	blocks := mdBlocks(t, filepath.Join(fixtures.RepoRoot(t), "README.md"))
	if len(blocks) == 0 || blocks[0].lang != "text" || blocks[0].heading != "agentbot" || !strings.Contains(strings.Join(blocks[0].lines, "\n"), "@agentbot") {
		t.Error("the README does not open with the picture of a thread, under its title")
	}
}

// Every command the README shows is checked by a test, and every check is
// of a command the README shows.
func TestREADMECommandsAreAllChecked(t *testing.T) {
	var shown []string
	for _, c := range readmeCommands(t) {
		shown = append(shown, c.line)
		if _, ok := readmeChecks[c.line]; !ok {
			t.Errorf("the README shows %q (under %q), which no test runs: add it to readmeChecks", c.line, c.heading)
		}
	}
	for line := range readmeChecks {
		if !slices.Contains(shown, line) {
			t.Errorf("readmeChecks has %q, which the README does not show", line)
		}
	}
}

// The README's test command is the one CI runs, so a green CI means a
// newcomer's first test run is green.
func TestREADMETestCommandIsCIs(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join(fixtures.RepoRoot(t), ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var tests []string
	for _, c := range readmeCommands(t) {
		if strings.HasPrefix(c.line, "go test") {
			tests = append(tests, c.line)
		}
	}
	if len(tests) != 1 {
		t.Fatalf("the README shows %d go test commands, want 1: %q", len(tests), tests)
	}
	if !slices.Contains(strings.Split(string(ci), "\n"), tests[0]) {
		t.Errorf(".ci/run has no line %q, the README's test command", tests[0])
	}
}

// agentbot commands the README's text names are commands agentbot has.
func TestREADMENamesRealCommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`agentbot ([a-z-]+)[^`]*`").FindAllStringSubmatch(string(data), -1)
	if len(named) == 0 {
		t.Fatal("the README names no agentbot command")
	}
	for _, m := range named {
		if _, ok := findCommand(m[1]); !ok {
			t.Errorf("the README names %q: agentbot has no command %q", m[0], m[1])
		}
	}
}

// Every relative link of the README and the docs pages reaches a file,
// and every #anchor a heading (or an <a id>) of its page.
func TestDocsLinksResolve(t *testing.T) {
	root := fixtures.RepoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) < 7 {
		t.Fatalf("docs pages: %v, %v", pages, err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range append(pages, filepath.Join(root, "README.md")) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(withoutCode(string(data)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s: %v", rel(root, page), target, err)
				continue
			}
			if anchor != "" && !slices.Contains(anchors(t, path), anchor) {
				t.Errorf("%s links to %s: %s has no heading %q", rel(root, page), target, rel(root, path), anchor)
			}
		}
	}
}

// The hints agentbot prints name a docs page, and a section of it, that
// exist: "see docs/slack.md, section 'Setting up the Slack app'".
func TestHintsPointAtDocsThatExist(t *testing.T) {
	root := fixtures.RepoRoot(t)
	hint := regexp.MustCompile(`see (docs/[a-z-]+\.md)(?:, section '([^']+)')?`)
	found := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range hint.FindAllStringSubmatch(string(data), -1) {
			found++
			page := filepath.Join(root, m[1])
			if _, err := os.Stat(page); err != nil {
				t.Errorf("%s points at %s: %v", rel(root, path), m[1], err)
				continue
			}
			if m[2] != "" && !slices.Contains(headings(t, page), m[2]) {
				t.Errorf("%s points at %s, section %q, which it lacks", rel(root, path), m[1], m[2])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 3 {
		t.Errorf("%d hints point at the docs, want the Slack, model and agents ones at least", found)
	}
}

// withoutCode is markdown without its fenced and inline code, whose
// brackets are no links.
func withoutCode(md string) string {
	md = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(md, "")
	return regexp.MustCompile("`[^`\n]*`").ReplaceAllString(md, "")
}

// headings lists the headings of a markdown page, without their #s.
func headings(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(withoutCode(string(data)), "\n") {
		if strings.HasPrefix(l, "#") {
			out = append(out, strings.TrimSpace(strings.TrimLeft(l, "#")))
		}
	}
	return out
}

// anchors lists the anchors of a markdown page: its headings as GitHub
// makes them (lower case, spaces to hyphens, punctuation dropped) and its
// <a id="…"> elements.
func anchors(t testing.TB, path string) []string {
	t.Helper()
	var out []string
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, h := range headings(t, path) {
		out = append(out, strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-"))
	}
	data, _ := os.ReadFile(path)
	for _, m := range regexp.MustCompile(`<a id="([^"]+)">`).FindAllStringSubmatch(string(data), -1) {
		out = append(out, m[1])
	}
	return out
}

// rel is path relative to root, for messages.
func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

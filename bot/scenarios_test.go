package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/storage"
)

// Scenarios at the size real teams reach, with every shared BMAD fixture
// loaded at once, through the bot against fakeslack with its rules table
// on: each passes only when Slack accepts every payload (fakeslack fails
// the test on any violation) and the person sees the content.

// allBMAD is every shared BMAD fixture, read in place.
func allBMAD(t testing.TB) []string {
	var roots []string
	for _, n := range []string{"bmad-v4.44.3", "bmad-v6.0.0", "bmad-v6.0.0-alpha.0", "bmad-v6.0.0-alpha.5", "bmad-v6.12.0", "bmad-v6.12.0-modules"} {
		roots = append(roots, fixtures.Dir(t, n))
	}
	return roots
}

// genAgent is an agent of a bundle a test writes.
type genAgent struct {
	id, name, title string
	menu            []genItem
}

type genItem struct{ cmd, desc string }

// writeBundle writes a bundle of agents under a new folder and returns that
// folder (a bundles root holding the one bundle).
func writeBundle(t testing.TB, name string, agents []genAgent) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Join(dir, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	var y strings.Builder
	fmt.Fprintf(&y, "type: bundle\nname: %s\nversion: 1.0.0\ndescription: Agents a test wrote.\nagents:\n", name)
	for _, a := range agents {
		fmt.Fprintf(&y, "  - id: %s\n    name: %s\n    title: %s\n    icon: \"🤖\"\n    file: agents/%s.md\n    entry_point: true\n    description: %s helps with %s.\n",
			a.id, a.name, a.title, a.id, a.name, a.title)
		var md strings.Builder
		fmt.Fprintf(&md, "# %s\n\n```xml\n<agent id=%q name=%q title=%q icon=\"🤖\">\n", a.title, a.id, a.name, a.title)
		md.WriteString("  <persona>\n    <role>Helper</role>\n    <identity>Written by a test.</identity>\n" +
			"    <communication_style>Short.</communication_style>\n    <principles>Be brief.</principles>\n  </persona>\n  <cmds>\n")
		md.WriteString("    <c cmd=\"*help\">Show this menu again</c>\n")
		for _, it := range a.menu {
			fmt.Fprintf(&md, "    <c cmd=%q action=\"Answer in one line.\">%s</c>\n", it.cmd, it.desc)
		}
		md.WriteString("    <c cmd=\"*exit\">Exit</c>\n  </cmds>\n</agent>\n```\n")
		if err := os.WriteFile(filepath.Join(dir, "agents", a.id+".md"), []byte(md.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "bundle.yaml"), []byte(y.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// seen is what the person reads in a thread: every bot message's text,
// markdown blocks and stream, entities shown as characters.
func seen(r *rig, ch, thread string) string {
	var b strings.Builder
	for _, m := range r.slack.ThreadMessages(ch, thread) {
		if m.Kind != fakeslack.KindUser {
			b.WriteString(fakeslack.Shown(text(m)) + "\n")
		}
	}
	return b.String()
}

// noViolations fails t at once when Slack refused a payload (fakeslack
// also fails the test at its end).
func noViolations(t testing.TB, r *rig) {
	t.Helper()
	if v := r.slack.Violations(); len(v) > 0 {
		t.Fatalf("Slack refused %d payload(s): %v", len(v), v)
	}
}

// A 60 KB answer full of code and angle brackets reaches the thread whole,
// split within Slack's limits; no fallback text carries raw markup
// (<!channel> would notify everyone).
func TestScenarioLongAnswerWithCodeAndAngleBrackets(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{bmad: allBMAD(t)})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	var ans strings.Builder
	for i := 0; ans.Len() < 60_000; i++ {
		fmt.Fprintf(&ans, "## Part %03d\n\nA map is `Map<String, List<Integer>>`; R&D says a < b && c > d, <!channel> and <@U0NOBODY>.\n\n", i)
		fmt.Fprintf(&ans, "```go\nfunc part%03d(m map[string][]int) bool { return len(m) < 3 && m[\"<x>\"] != nil }\n```\n\n", i)
	}
	answer := ans.String()
	r.model.Enqueue(fakemodel.Reply{Text: answer})
	thread, _ := r.mention("explain the generics", "")
	last := fmt.Sprintf("func part%03d(", strings.Count(answer, "## Part ")-1)
	r.waitFor("the whole answer", func() bool { return strings.Contains(seen(r, channel, thread), last) })
	noViolations(t, r)
	got := seen(r, channel, thread)
	for i := range strings.Count(answer, "## Part ") {
		for _, want := range []string{fmt.Sprintf("## Part %03d", i), fmt.Sprintf("func part%03d(m map[string][]int) bool { return len(m) < 3", i)} {
			if !strings.Contains(got, want) {
				t.Fatalf("the thread lacks %q", want)
			}
		}
	}
	has(t, got, "`Map<String, List<Integer>>`", "the answer")
	for _, m := range r.slack.Messages() {
		if strings.Contains(m.Text, "<!channel>") || strings.Contains(m.Text, "Map<String") {
			t.Fatalf("a message's text carries raw markup: %q", m.Text)
		}
	}
}

// A 45-item menu with long descriptions: the greeting is split over
// messages within the markdown and total-text limits, every item and
// button is there.
func TestScenarioLongMenuGreeting(t *testing.T) {
	ctx := context.Background()
	var menu []genItem
	for i := range 45 {
		menu = append(menu, genItem{cmd: fmt.Sprintf("*step%02d", i),
			desc: fmt.Sprintf("Step %02d: %s", i, strings.Repeat("walk through the R&amp;D plan, the risks and the open questions; ", 4))})
	}
	bundles := writeBundle(t, "big-menu", []genAgent{{id: "menu-master", name: "Menno", title: "Menu Master", menu: menu}})
	r := newRig(t, rigOpts{bmad: allBMAD(t), bundles: []string{bundles}})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "menu-master")
	thread, _ := r.mention("hello", "")
	r.waitFor("the greeting with its buttons", func() bool {
		n := 0
		for _, m := range r.botMessages(thread) {
			if m.Blocks != nil {
				n += len(buttons(t, m))
			}
		}
		return n >= 47 // 45 items, help and exit
	})
	noViolations(t, r)
	got := seen(r, channel, thread)
	vals := map[string]bool{}
	for _, m := range r.botMessages(thread) {
		for _, v := range buttons(t, m) {
			vals[v] = true
		}
	}
	for _, it := range menu {
		has(t, got, "`"+it.cmd+"`", "the greeting")
		has(t, got, strings.TrimSpace(strings.ReplaceAll(it.desc, "&amp;", "&")), "the greeting")
		if !vals[it.cmd] {
			t.Fatalf("no button for %s", it.cmd)
		}
	}
	if n := len(r.botMessages(thread)); n < 2 {
		t.Fatalf("a %d-character greeting in %d message(s)", len(got), n)
	}
}

// 100 agents on top of every BMAD install: the picker offers 100 buttons
// with distinct labels and names how many more there are, /agent list
// names them all, and the Home tab stays within a view's 100 blocks.
func TestScenarioHundredAgents(t *testing.T) {
	var agents []genAgent
	for i := range 100 {
		agents = append(agents, genAgent{id: fmt.Sprintf("crowd-%03d", i), name: fmt.Sprintf("Agent %03d", i), title: "Crowd Helper"})
	}
	r := newRig(t, rigOpts{bmad: allBMAD(t), bundles: []string{writeBundle(t, "crowd", agents)}})
	entry := r.cat.EntryPoints()
	if len(entry) < 160 {
		t.Fatalf("%d entry points", len(entry))
	}
	thread, _ := r.mention("hi", "")
	msgs := r.waitBotMessages(thread, 1)
	noViolations(t, r)
	var labels []string
	var blocks []struct {
		Type     string            `json:"type"`
		Elements []json.RawMessage `json:"elements"`
	}
	if err := json.Unmarshal(msgs[0].Blocks, &blocks); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		for _, raw := range b.Elements {
			var btn struct {
				Type string `json:"type"`
				Text struct {
					Text string `json:"text"`
				} `json:"text"`
			}
			if json.Unmarshal(raw, &btn) == nil && btn.Type == "button" {
				labels = append(labels, btn.Text.Text)
			}
		}
	}
	uniq := map[string]bool{}
	for _, l := range labels {
		if uniq[l] {
			t.Fatalf("the label %q shows twice", l)
		}
		uniq[l] = true
	}
	if len(labels) != 100 || !strings.Contains(seen(r, channel, thread), fmt.Sprintf("%d more", len(entry)-100)) {
		t.Fatalf("%d buttons for %d agents; the picker says %q", len(labels), len(entry), seen(r, channel, thread))
	}
	if !uniq["📊 Mary — Business Analyst (bmm · bmad-v6.0.0)"] {
		t.Errorf("repeated personas are not told apart by module and install: %q", labels)
	}
	list := r.slash(user, channel, "list")
	for _, a := range entry {
		has(t, list, "(`"+a.ID+"`)", "/agent list")
	}
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": user, "tab": "home"})
	r.waitFor("the home tab", func() bool { return lastHome(r, user) != "" })
	noViolations(t, r)
	home := lastHome(r, user)
	has(t, home, fmt.Sprintf("and %d more", len(entry)-(100-5)), "the home tab")
	has(t, home, "*Mary* — Business Analyst (bmm · bmad-v6.0.0)", "the home tab")
}

// A session with 64 documents: all are uploaded, and the Home tab lists
// as many as a section holds and says how many more there are.
func TestScenarioSessionWith64Documents(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{bmad: allBMAD(t)})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	var saves []fakemodel.ToolCall
	for i := range 64 {
		saves = append(saves, call("save_output", map[string]string{
			"path": fmt.Sprintf("docs/chapter-%02d-of-the-very-long-product-requirements-document.md", i), "content": "# Chapter\n"}))
	}
	r.model.Enqueue(fakemodel.Reply{ToolCalls: saves}, fakemodel.Reply{Text: "All 64 saved."})
	r.mention("write every chapter", "")
	r.waitFor("64 uploads", func() bool { return len(r.slack.Uploads()) == 64 })
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": user, "tab": "home"})
	// The 64 saves run in parallel, so which chapters come first varies:
	// wait for any of them.
	r.waitFor("the home tab with the documents", func() bool {
		return strings.Contains(lastHome(r, user), "-of-the-very-long-product-requirements-document.md (v1)")
	})
	noViolations(t, r)
	home := lastHome(r, user)
	has(t, home, "more", "the home tab")
	shown := strings.Count(home, "-of-the-very-long-product-requirements-document.md (v1)")
	if shown < 20 || shown >= 64 {
		t.Fatalf("the home tab lists %d of 64 documents", shown)
	}
	has(t, home, fmt.Sprintf("and %d more", 64-shown), "the home tab")
}

// Odd file names (&, <, >, *, spaces, unicode, 200 characters) are
// uploaded under their names, announced escaped, and listed on the Home tab.
func TestScenarioOddFileNames(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{bmad: allBMAD(t)})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	names := []string{"R&D <draft>.md", "a*b*c.md", "with   spaces.md", "ünïcødé-文件-😀.md", strings.Repeat("n", 197) + ".md"}
	var saves []fakemodel.ToolCall
	for _, n := range names {
		saves = append(saves, call("save_output", map[string]string{"path": n, "content": "# " + n + "\n"}))
	}
	r.model.Enqueue(fakemodel.Reply{ToolCalls: saves}, fakemodel.Reply{Text: "Saved them."})
	r.mention("save the odd ones", "")
	r.waitFor("the uploads", func() bool { return len(r.slack.Uploads()) == len(names) })
	noViolations(t, r)
	got := map[string]string{}
	for _, u := range r.slack.Uploads() {
		got[u.Filename] = fakeslack.Shown(u.InitialComment)
	}
	for _, n := range names {
		c, ok := got[n]
		if !ok {
			t.Fatalf("no upload named %q in %v", n, got)
		}
		has(t, c, n, "the upload's comment")
	}
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": user, "tab": "home"})
	r.waitFor("the home tab with the documents", func() bool { return strings.Contains(lastHome(r, user), "nnnn") })
	noViolations(t, r)
	var view struct {
		View struct {
			Blocks []struct {
				Text struct {
					Text string `json:"text"`
				} `json:"text"`
			} `json:"blocks"`
		} `json:"view"`
	}
	var homeText strings.Builder
	if err := json.Unmarshal([]byte(lastHome(r, user)), &view); err != nil {
		t.Fatal(err)
	}
	for _, b := range view.View.Blocks {
		homeText.WriteString(fakeslack.Shown(b.Text.Text))
	}
	for _, n := range names {
		has(t, homeText.String(), n+" (v1)", "the home tab")
	}
}

// A 150-item menu: the text is split over messages, 100 items get buttons
// in a message of their own, and every item is in the text to type.
func TestScenarioHugeMenuGreeting(t *testing.T) {
	ctx := context.Background()
	var menu []genItem
	for i := range 150 {
		menu = append(menu, genItem{cmd: fmt.Sprintf("*task%03d", i),
			desc: fmt.Sprintf("Task %03d: %s", i, strings.Repeat("check the plan and the risks; ", 5))})
	}
	r := newRig(t, rigOpts{bmad: allBMAD(t), bundles: []string{writeBundle(t, "huge-menu", []genAgent{{id: "huge", name: "Hugo", title: "Huge Menu", menu: menu}})}})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "huge")
	thread, _ := r.mention("hello", "")
	count := func() int {
		n := 0
		for _, m := range r.botMessages(thread) {
			if m.Blocks != nil {
				n += len(buttons(t, m))
			}
		}
		return n
	}
	r.waitFor("the menu's buttons", func() bool { return count() >= 100 })
	noViolations(t, r)
	got := seen(r, channel, thread)
	for _, it := range menu {
		has(t, got, "`"+it.cmd+"`", "the greeting")
	}
	if n := count(); n != 100 {
		t.Fatalf("%d buttons, want 100", n)
	}
	if n := len(r.botMessages(thread)); n < 3 {
		t.Fatalf("a %d-character greeting in %d message(s)", len(got), n)
	}
}

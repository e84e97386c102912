package bundles_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/core"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
	"agentbot/engine/vars"
)

// This file checks the bundles shipped here through the product's own code:
// the catalog loads them, and the engine activates every agent and runs
// every menu item's files through the menu shortcut, as a pick in Slack
// would. Only the product parses the formats; the regexps below read the
// prompt texts (instructions, templates) the engine hands the model.

const engineTask = "{core-root}/tasks/workflow.md"

var (
	stepOpen  = regexp.MustCompile(`<step n="(\d+)"`)
	doubleVar = regexp.MustCompile(`\{\{[^{}]*\}\}`)
	singleVar = regexp.MustCompile(`\{[A-Za-z][A-Za-z0-9_.-]*\}`)
)

// results are the decoded tool results of a transcript, by tool name.
type results map[string][]map[string]any

// load loads bundle folders through the catalog and fails on any problem.
func load(t *testing.T, dir string) *catalog.Catalog {
	t.Helper()
	c := catalog.Load(catalog.Options{Bundles: []string{dir}})
	if len(c.Problems) > 0 || len(c.Agents) == 0 {
		t.Fatalf("catalog.Load(%s): %d agents, problems %+v", dir, len(c.Agents), c.Problems)
	}
	return c
}

// turner runs a turn with the model's replies scripted and returns the tool
// results of the last request's transcript.
type turner func(input string, replies ...fakemodel.Reply) results

// pick activates agent a in a fresh session with its own engine and fake
// model (coreFS nil means the embedded core), types the item's *command and
// returns the tool results the engine ran before its one model call.
func pick(t *testing.T, a *catalog.Agent, it catalog.MenuItem, coreFS fs.FS) (*engine.Session, turner, results) {
	t.Helper()
	s, fm, out := &engine.Session{Session: transcript.Session{ID: "t"}}, fakemodel.NewTB(t), t.TempDir()
	eng := engine.New(engine.Config{
		Model:      model.New(model.Config{BaseURL: fm.URL(), APIKey: "k", Model: "m"}),
		OutputRoot: func(string) string { return out },
		CoreFS:     coreFS,
	})
	if _, err := eng.Activate(context.Background(), s, a); err != nil {
		t.Fatalf("activate %s: %v", a.ID, err)
	}
	turn := func(input string, replies ...fakemodel.Reply) results {
		t.Helper()
		fm.Enqueue(replies...)
		if _, err := eng.Turn(context.Background(), s, input, nil); err != nil {
			t.Fatalf("%s %q: %v", a.ID, input, err)
		}
		reqs := fm.Requests()
		names, got := map[string]string{}, results{}
		for _, m := range reqs[len(reqs)-1].Messages {
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Function.Name
			}
			if m.Role == openai.ChatMessageRoleTool {
				var r map[string]any
				if err := json.Unmarshal([]byte(m.Content), &r); err != nil {
					t.Fatalf("tool result is not JSON: %q", m.Content)
				}
				got[names[m.ToolCallID]] = append(got[names[m.ToolCallID]], r)
			}
		}
		return got
	}
	return s, turn, turn("*"+it.Trigger, fakemodel.Reply{Text: "ok"})
}

// content returns the content of a {path, content} field of a tool result.
func content(r map[string]any, key string) string {
	f, _ := r[key].(map[string]any)
	s, _ := f["content"].(string)
	return s
}

// textProblems checks an instructions.md and a template as prompt text.
func textProblems(instructions, template string) []string {
	var p []string
	if !strings.Contains(instructions, "<critical>The workflow engine is "+engineTask) {
		p = append(p, "instructions do not start from the engine "+engineTask)
	}
	if !strings.Contains(instructions, "<workflow>") || !strings.Contains(instructions, "</workflow>") || !strings.Contains(instructions, "<template-output") {
		p = append(p, "instructions need <workflow> ... </workflow> and a <template-output>")
	}
	steps := stepOpen.FindAllStringSubmatch(instructions, -1)
	if len(steps) == 0 || len(steps) != strings.Count(instructions, "</step>") {
		p = append(p, fmt.Sprintf("%d <step n=...> and %d </step>", len(steps), strings.Count(instructions, "</step>")))
	}
	for i, s := range steps {
		if n, _ := strconv.Atoi(s[1]); n != i+1 {
			p = append(p, fmt.Sprintf("step %s is step number %d in order", s[1], i+1))
		}
	}
	if u := singleVar.FindAllString(doubleVar.ReplaceAllString(template, ""), -1); len(u) > 0 || !doubleVar.MatchString(template) {
		p = append(p, fmt.Sprintf("template needs {{placeholders}} only; single-brace: %v", u))
	}
	return p
}

// checkPreload checks what preloading a shipped workflow gave the model and
// returns the instructions.
func checkPreload(t *testing.T, s *engine.Session, turn turner, res results) string {
	t.Helper()
	if len(res[engine.ToolPreloadWorkflow]) != 1 {
		t.Fatalf("want one preload result: %v", res)
	}
	pre := res[engine.ToolPreloadWorkflow][0]
	for _, k := range []string{"error", "unresolved_variables", "notes"} {
		if pre[k] != nil {
			t.Errorf("preload %s: %v", k, pre[k])
		}
	}
	// Every shipped workflow elicits (see below), so the task comes along.
	for _, k := range []string{"instructions", "template", "config", "workflow_engine", "elicitation"} {
		if content(pre, k) == "" {
			t.Errorf("preload result has no %s", k)
		}
	}
	if f, _ := pre["workflow_engine"].(map[string]any); f["path"] != "/core/tasks/workflow.md" {
		t.Errorf("workflow_engine path = %v", f["path"])
	}
	text := content(pre, "instructions")
	for _, e := range textProblems(text, content(pre, "template")) {
		t.Error(e)
	}
	// The shipped workflows are Slack-sized conversations.
	if n := len(stepOpen.FindAllString(text, -1)); n < 4 || n > 8 {
		t.Errorf("%d steps, want 4 to 8", n)
	}
	for _, tag := range []string{"<ask>", "<action>", "<elicit-required/>"} {
		if !strings.Contains(text, tag) {
			t.Errorf("instructions use no %s", tag)
		}
	}
	// The instructions' variables are the session's or the workflow's keys
	// (the model gets both).
	wy, _ := pre["workflow_yaml"].(string)
	_, unknown := vars.ExpandPartial(text, vars.Vars(s.Vars))
	for _, name := range unknown {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `:`).MatchString(wy) {
			t.Errorf("instructions use {%s}, which neither the session nor the workflow defines", name)
		}
	}
	if !regexp.MustCompile(`(?m)^default_output_file: "?/outputs/`).MatchString(wy) {
		t.Errorf("default_output_file is not under /outputs:\n%s", wy)
	}
	// The validation checklist it names is readable through read_file.
	if m := regexp.MustCompile(`(?m)^validation: "?([^"\n]+)`).FindStringSubmatch(wy); m != nil {
		args, _ := json.Marshal(map[string]string{"path": m[1]})
		calls := []fakemodel.ToolCall{{Name: engine.ToolReadFile, Arguments: string(args)}}
		r := turn("check it", fakemodel.Reply{ToolCalls: calls}, fakemodel.Reply{Text: "ok"})[engine.ToolReadFile]
		if len(r) == 0 || r[len(r)-1]["error"] != nil || r[len(r)-1]["content"] == "" {
			t.Errorf("validation %s: %v", m[1], r)
		}
	}
	return text
}

func TestShippedBundles(t *testing.T) {
	dir := fixtures.Bundles(t)
	c := load(t, dir)
	instructions := map[string]string{} // workflow folder -> instructions
	for _, a := range c.Agents {
		t.Run(a.ID, func(t *testing.T) {
			p := a.Persona
			if p.Role == "" || p.Identity == "" || p.CommunicationStyle == "" || p.Principles == "" {
				t.Errorf("persona needs role, identity, communication_style and principles: %+v", p)
			}
			acts := strings.Join(a.Activation, "\n")
			if !strings.Contains(acts, "{bundle-root}/config.yaml") || !strings.Contains(acts, engineTask) {
				t.Errorf("activation must load {bundle-root}/config.yaml and name %s:\n%s", engineTask, acts)
			}
			var triggers []string
			for _, it := range a.Menu {
				triggers = append(triggers, it.Trigger)
				if it.Description == "" {
					t.Errorf("menu item %s has no label", it.Cmd)
				}
			}
			hasWorkflow := slices.ContainsFunc(a.Menu, func(it catalog.MenuItem) bool { return it.Workflow != "" })
			if !slices.Contains(triggers, "help") || !slices.Contains(triggers, "exit") || !hasWorkflow {
				t.Errorf("menu %v needs *help, *exit and a workflow item", triggers)
			}
			for _, it := range a.Menu {
				if it.Workflow == "" && it.Exec == "" && it.ValidateWorkflow == "" {
					continue
				}
				t.Run(it.Trigger, func(t *testing.T) {
					s, turn, res := pick(t, a, it, nil)
					if facts := s.Messages[1].Content; strings.Contains(facts, "does not exist here") {
						t.Errorf("activation names a missing file: %s", facts)
					}
					text := strings.Join([]string{acts, p.Role, p.Identity, p.CommunicationStyle, p.Principles, it.Workflow, it.Exec, it.Tmpl, it.Data}, "\n")
					if _, u := vars.ExpandPartial(text, vars.Vars(s.Vars)); len(u) > 0 {
						t.Errorf("agent uses unknown variables %v", u)
					}
					for name, rs := range res {
						for _, r := range rs {
							if r["error"] != nil {
								t.Errorf("%s: %v", name, r["error"])
							}
						}
					}
					if it.Workflow != "" {
						instructions[filepath.Base(filepath.Dir(it.Workflow))] = checkPreload(t, s, turn, res)
					} else if len(res) == 0 {
						t.Errorf("exec %s ran no tool", it.Exec)
					}
				})
			}
		})
	}

	for id, entry := range map[string]bool{"product-lead": true, "retro-coach": true, "story-writer": false} {
		if a, ok := c.Find(id); !ok || a.EntryPoint != entry {
			t.Errorf("agent %s: found %v, want entry point %v", id, ok, entry)
		}
	}
	folders, err := filepath.Glob(filepath.Join(dir, "*", "workflows", "*", "workflow.yaml"))
	if err != nil || len(folders) < 4 {
		t.Fatalf("workflow folders %v, %v", folders, err)
	}
	for _, f := range folders {
		name := filepath.Base(filepath.Dir(f))
		if _, ok := instructions[name]; !ok {
			t.Errorf("workflow %s is on no agent's menu", name)
		}
	}
	if !strings.Contains(instructions["prd"], "{input_brief}") {
		t.Error("the prd workflow does not read the product brief ({input_brief})")
	}
}

// The core embedded in the binary holds the two tasks bundles name, and no
// placeholder.
func TestCoreTasks(t *testing.T) {
	terms := map[string][]string{
		"tasks/workflow.md":   {"preload_workflow", "save_output", "<ask>", "template-output", "elicit-required", "{{", "/outputs", "yolo"},
		"tasks/adv-elicit.md": {"<methods>", "Continue", "Apply"},
	}
	files, _ := fs.Glob(core.FS, "tasks/*")
	for _, name := range files {
		data, err := fs.ReadFile(core.FS, name)
		if lines := strings.Count(string(data), "\n"); err != nil || lines < 40 {
			t.Errorf("core task %s has %d lines (%v); it looks like a placeholder", name, lines, err)
		}
		for _, term := range terms[name] {
			if !strings.Contains(string(data), term) {
				t.Errorf("core task %s never mentions %q", name, term)
			}
		}
		delete(terms, name)
		if n := len(regexp.MustCompile(`<m n="\d+" name="[^"]+">`).FindAll(data, -1)); name == "tasks/adv-elicit.md" && (n < 8 || n > 10) {
			t.Errorf("adv-elicit.md offers %d methods, want 8 to 10", n)
		}
	}
	for name := range terms {
		t.Errorf("the core has no %s (has %v)", name, files)
	}
}

// The text checks must be able to fail.
func TestTextProblems(t *testing.T) {
	good := "<critical>The workflow engine is " + engineTask + "</critical>\n<workflow>\n" +
		`<step n="1" goal="a"><ask>q</ask></step><step n="2" goal="b"><template-output file="x">y</template-output></step></workflow>`
	for _, tc := range [][3]string{
		{good, "# {{title}}", ""},
		{strings.Replace(good, engineTask, "somewhere", 1), "# {{t}}", "engine"},
		{strings.Replace(good, `n="2"`, `n="3"`, 1), "# {{t}}", "step 3"},
		{strings.Replace(good, "</step>", "", 1), "# {{t}}", "</step>"},
		{strings.Replace(good, "<template-output", "<x", 1), "# {{t}}", "template-output"},
		{good, "# {title} {{t}}", "{title}"},
		{good, "# no placeholders", "{{placeholders}}"},
	} {
		if p := strings.Join(textProblems(tc[0], tc[1]), "; "); !strings.Contains(p, tc[2]) || (p == "") != (tc[2] == "") {
			t.Errorf("problems %q, want %q", p, tc[2])
		}
	}
}

// Broken copies of product-team, through the catalog and the engine: each
// mistake shows in the preload result the model gets.
func TestBrokenBundleCopies(t *testing.T) {
	cases := []struct {
		name, file, old, new, agent, item string
		coreFS                            fs.FS
		key, want, absent                 string // result[key] mentions want; result[absent] is missing
	}{
		{"instructions missing", "workflows/prd/instructions.md", "", "", "product-lead", "prd", nil, "notes", "instructions.md: not found", "instructions"},
		{"template missing", "workflows/prd/template.md", "", "", "product-lead", "prd", nil, "notes", "template.md: not found", "template"},
		{"menu names a missing workflow", "agents/product-lead.md", "workflows/prd/workflow.yaml", "workflows/prdd/workflow.yaml", "product-lead", "prd", nil, "error", "nearby: /project/workflows/prd/", "workflow_yaml"},
		{"config key missing", "workflows/prd/workflow.yaml", "{config_source}:project_name", "{config_source}:team_size", "product-lead", "prd", nil, "unresolved_variables", "team_size", "error"},
		{"core lacks the workflow engine", "", "", "", "retro-coach", "retro", fstest.MapFS{"tasks/adv-elicit.md": {Data: []byte("x")}}, "notes", "no workflow engine", "workflow_engine"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.CopyFS(root, os.DirFS(fixtures.Bundles(t))); err != nil {
				t.Fatal(err)
			}
			if tc.file != "" {
				edit(t, filepath.Join(root, "product-team", filepath.FromSlash(tc.file)), tc.old, tc.new)
			}
			a, _ := load(t, root).Find(tc.agent)
			i := slices.IndexFunc(a.Menu, func(it catalog.MenuItem) bool { return it.Trigger == tc.item })
			_, _, res := pick(t, a, a.Menu[i], tc.coreFS)
			pre := res[engine.ToolPreloadWorkflow]
			if len(pre) != 1 || !strings.Contains(fmt.Sprint(pre[0][tc.key]), tc.want) || pre[0][tc.absent] != nil {
				t.Errorf("want %s mentioning %q and no %s; preload result %v", tc.key, tc.want, tc.absent, pre)
			}
			if strings.Contains(fmt.Sprint(pre), root) {
				t.Errorf("host path leaked: %v", pre)
			}
		})
	}
}

// edit replaces old with new in path, or removes the file when old is empty.
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	switch {
	case old == "":
		err = os.Remove(path)
	case err != nil || !strings.Contains(string(data), old):
		t.Fatalf("%s does not contain %q (%v)", path, old, err)
	default:
		err = os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

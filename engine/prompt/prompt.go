package prompt

import (
	"fmt"
	"sort"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/vars"
)

// fileRules are the standing rules about files and tools; each offered
// tool adds its own rule after them. They are part of the byte-stable
// system prompt.
const fileRules = `## How you work with files
- Files are reached only through tools.
- Folders: /project is the agent's bundle or project, /core the core tasks, /inputs files the user shared, /skills shared skills (all read-only); /outputs holds this session's documents.
- Variables in {single braces} are resolved for you by the tools; {{double}} placeholders are yours to fill from the conversation.
- If a tool returns an error, read it and recover: fix the path or the arguments, or ask the user.`

// talkRules say how to talk in a chat thread.
const talkRules = `## How you talk
- This is a chat thread. Keep messages short and scannable, use Markdown, and number every list of choices.
- Ask one question at a time when you need input, then stop and wait for the answer.
- Stay in character until the user exits.`

// toolRules renders the rules of files and of each offered tool (rules).
func toolRules(rules []string) string {
	var b strings.Builder
	b.WriteString(fileRules)
	for _, r := range rules {
		if r != "" {
			b.WriteString("\n- ")
			b.WriteString(r)
		}
	}
	b.WriteString("\n\n")
	b.WriteString(talkRules)
	return b.String()
}

// defaultHandlers say how to run each kind of menu item, for an agent that
// brings no menu handlers of its own.
const defaultHandlers = "\n## Menu handlers\n- workflow / run-workflow: call preload_workflow with the path, then follow the workflow engine it returns.\n- exec: if the path ends in workflow.yaml, call preload_workflow; otherwise read_file it and follow it exactly.\n- tmpl / data: read_file the file and use it with the chosen action.\n- action: \"#id\" runs the prompt with that id below; other text is the instruction itself.\n- validate-workflow: preload the workflow and check the document against its validation checklist.\n"

// System renders the byte-stable system prompt of a session: persona,
// activation, rules, menu, handlers, prompts, tool rules and variables. It
// holds no clock and no ids.
func System(a *catalog.Agent, v vars.Vars, skills []*catalog.Skill, rules []string) string {
	x := expander(v)
	var b strings.Builder
	writeIdentity(&b, a)
	b.WriteString(" Fully embody this persona and follow its instructions.\n")
	writePersona(&b, a.Persona, x)
	if len(a.Activation) > 0 {
		b.WriteString("\n## Activation (already done by the runtime: the config below is loaded and the greeting was shown; keep following the standing instructions)\n")
		for i, s := range a.Activation {
			fmt.Fprintf(&b, "%d. %s\n", i+1, oneBlock(x(s)))
		}
	}
	if len(a.Rules) > 0 {
		b.WriteString("\n## Rules\n")
		for _, r := range a.Rules {
			fmt.Fprintf(&b, "- %s\n", oneBlock(x(r)))
		}
	}
	writeAgentMenu(&b, a.Menu, x)
	writeDependencies(&b, a.Dependencies, v["bundle-root"])
	writeHandlers(&b, a.Handlers, x)
	writePrompts(&b, a.Prompts, x)
	writeSkills(&b, skills, "")
	b.WriteString("\n")
	b.WriteString(toolRules(rules))
	writeVariables(&b, v)
	return b.String()
}

// writePersona writes the persona's fields that are set, if any is.
func writePersona(b *strings.Builder, p catalog.Persona, x func(string) string) {
	if p.Role+p.Identity+p.CommunicationStyle+p.Principles == "" {
		return
	}
	b.WriteString("\n## Persona\n")
	field(b, "Role", x(p.Role))
	field(b, "Identity", x(p.Identity))
	field(b, "Communication style", x(p.CommunicationStyle))
	field(b, "Principles", x(p.Principles))
}

// writeAgentMenu writes an agent's numbered menu, each item with its
// handler attributes (workflow, exec, tmpl, ...) resolved.
func writeAgentMenu(b *strings.Builder, menu []catalog.MenuItem, x func(string) string) {
	if len(menu) == 0 {
		return
	}
	b.WriteString("\n## Menu\nThe user may pick an item by number, by *command, by its short code or by describing it.\n")
	for i, it := range menu {
		fmt.Fprintf(b, "%d. %s", i+1, MenuLabel(it))
		for _, kv := range [][2]string{{"workflow", it.Workflow}, {"exec", it.Exec}, {"tmpl", it.Tmpl}, {"data", it.Data}, {"action", it.Action}, {"validate-workflow", it.ValidateWorkflow}} {
			if kv[1] != "" {
				fmt.Fprintf(b, " [%s: %s]", kv[0], x(kv[1]))
			}
		}
		b.WriteString("\n")
	}
}

// writeDependencies writes an agent's dependencies by kind, sorted, and
// where under bundleRoot they are.
func writeDependencies(b *strings.Builder, deps map[string][]string, bundleRoot string) {
	if len(deps) == 0 {
		return
	}
	kinds := make([]string, 0, len(deps))
	for k := range deps {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Fprintf(b, "\n## Dependencies\nLoad these with read_file only when a command needs them, at %s/<kind>/<name>.\n", bundleRoot)
	for _, k := range kinds {
		fmt.Fprintf(b, "- %s: %s\n", k, strings.Join(deps[k], ", "))
	}
}

// writeHandlers writes the agent's own menu handlers, else the default ones.
func writeHandlers(b *strings.Builder, handlers string, x func(string) string) {
	h := strings.TrimSpace(handlers)
	if h == "" {
		b.WriteString(defaultHandlers)
		return
	}
	b.WriteString("\n## Menu handlers\n")
	b.WriteString(x(h))
	b.WriteString("\n")
}

// writePrompts writes the agent's named prompts, resolved.
func writePrompts(b *strings.Builder, prompts []catalog.Prompt, x func(string) string) {
	if len(prompts) == 0 {
		return
	}
	b.WriteString("\n## Prompts\n")
	for _, pr := range prompts {
		fmt.Fprintf(b, "### #%s\n%s\n", pr.ID, x(pr.Content))
	}
}

func field(b *strings.Builder, name, val string) {
	if val != "" {
		fmt.Fprintf(b, "- %s: %s\n", name, oneBlock(val))
	}
}

// oneBlock indents continuation lines so a multi-line value stays one item.
func oneBlock(s string) string {
	return strings.ReplaceAll(s, "\n", "\n   ")
}

// expander resolves the variables of v in prompt text, leaving unknown
// names for the model.
func expander(v vars.Vars) func(string) string {
	return func(s string) string {
		out, _ := vars.ExpandPartial(s, v)
		return strings.TrimSpace(out)
	}
}

// writeIdentity writes "You are Name, Title Icon."
func writeIdentity(b *strings.Builder, a *catalog.Agent) {
	fmt.Fprintf(b, "You are %s", a.Name)
	if a.Title != "" {
		fmt.Fprintf(b, ", %s", a.Title)
	}
	if a.Icon != "" {
		fmt.Fprintf(b, " %s", a.Icon)
	}
	b.WriteString(".")
}

// writeVariables lists the session's variables, sorted. The date lives in
// a message, so the prompt stays byte-stable; customization fields have
// their own sections.
func writeVariables(b *strings.Builder, v vars.Vars) {
	b.WriteString("\n\n## Variables\n")
	keys := make([]string, 0, len(v))
	for k := range v {
		if k != "date" && isRuntimeVar(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "- {%s} = %s\n", k, v[k])
	}
}

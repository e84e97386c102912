package engine

import (
	"regexp"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/menu"
	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
)

// MatchMenu finds the menu item an input picks (see menu.Match).
func MatchMenu(items []catalog.MenuItem, input string) (int, string, bool) {
	return menu.Match(items, input)
}

// MatchIntent finds the menu item a first message clearly names (see
// menu.Intent).
func MatchIntent(items []catalog.MenuItem, input string) (int, bool) {
	return menu.Intent(items, input)
}

// IsPlainHelp reports whether a menu item is a plain *help (see
// menu.PlainHelp).
func IsPlainHelp(it catalog.MenuItem) bool { return menu.PlainHelp(it) }

// shortcutCalls returns the tool calls the engine makes itself for a picked
// menu item of agent a, so that starting a workflow costs one model call:
// the calls of its handler, then a read of its tmpl and data files; for a
// v4 command, a read of the task, template and checklist it runs.
func shortcutCalls(a *catalog.Agent, it catalog.MenuItem, exists func(string) bool) []transcript.ToolCall {
	calls := handlerCalls(it, exists)
	if len(calls) == 0 {
		for _, p := range a.CommandFiles(it) {
			calls = append(calls, pathCall(ToolReadFile, "path", p))
		}
		return calls
	}
	for _, p := range []string{it.Tmpl, it.Data} {
		if p != "" {
			calls = append(calls, pathCall(ToolReadFile, "path", p))
		}
	}
	return calls
}

// handlerCalls returns the calls that start a menu item's handler: its
// skill (named or mentioned by its prompt) loaded, its workflow preloaded,
// or its exec file read; none for an item the model must carry out itself.
func handlerCalls(it catalog.MenuItem, exists func(string) bool) []transcript.ToolCall {
	switch {
	case it.Skill != "":
		return []transcript.ToolCall{newCall(ToolLoadSkill, loadSkillArgs{Name: it.Skill})}
	case it.Prompt != "":
		if m := skillMention.FindStringSubmatch(it.Prompt); m != nil {
			return []transcript.ToolCall{newCall(ToolLoadSkill, loadSkillArgs{Name: m[1]})}
		}
	case it.Workflow != "" && !strings.EqualFold(it.Workflow, "todo"):
		return []transcript.ToolCall{pathCall(ToolPreloadWorkflow, "workflow_path", it.Workflow)}
	case it.ValidateWorkflow != "":
		return validateCalls(it.ValidateWorkflow, exists)
	case it.Exec != "":
		return execCalls(it.Exec)
	}
	return nil
}

// validateCalls reads the core validate-workflow task, where it exists, and
// preloads the workflow whose document it checks.
func validateCalls(workflow string, exists func(string) bool) []transcript.ToolCall {
	var calls []transcript.ToolCall
	for _, p := range []string{sandbox.CoreDir + "/tasks/validate-workflow.xml", sandbox.CoreDir + "/tasks/validate-workflow.md"} {
		if exists(p) {
			calls = append(calls, pathCall(ToolReadFile, "path", p))
			break
		}
	}
	return append(calls, pathCall(ToolPreloadWorkflow, "workflow_path", workflow))
}

// execCalls preloads an exec that is a workflow.yaml and reads one that is
// a file path; an exec that is neither is an instruction for the model.
func execCalls(exec string) []transcript.ToolCall {
	switch {
	case strings.HasSuffix(exec, ".yaml") || strings.HasSuffix(exec, ".yml"):
		return []transcript.ToolCall{pathCall(ToolPreloadWorkflow, "workflow_path", exec)}
	case strings.ContainsAny(exec, "/{") && !strings.Contains(exec, " "):
		return []transcript.ToolCall{pathCall(ToolReadFile, "path", exec)}
	}
	return nil
}

// pathCall is a call of tool with the one argument key set to a path.
func pathCall(tool, key, path string) transcript.ToolCall {
	return newCall(tool, map[string]string{key: path})
}

// skillMention finds the first `bmad-…` or skill: name a prompt names.
var skillMention = regexp.MustCompile("(?:`|skill:)([a-z0-9][a-z0-9-]*[a-z0-9])`?")

// namedSkill finds the skill a message asks for by its name alone
// ("bmad-workflow-builder", "/bmad-workflow-builder", "skill:NAME"), as
// people invoke skills in coding tools; agents are picked, not loaded.
func namedSkill(cat *catalog.Catalog, s *Session, input string) (catalog.MenuItem, bool) {
	name := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(input), "/"), "skill:")
	if name == "" || strings.ContainsAny(name, " \t\n") {
		return catalog.MenuItem{}, false
	}
	sk, ok := cat.FindSkill(s.AgentDef, name)
	if !ok || sk.Kind == catalog.SkillAgent {
		return catalog.MenuItem{}, false
	}
	return catalog.MenuItem{Cmd: sk.Name, Skill: sk.Name, Description: catalog.OneLine(sk.Description, 100)}, true
}

// picked returns the item a turn's input picks: the menu item matched
// (idx, ok), else a skill asked for by name, with index -1.
func picked(cat *catalog.Catalog, s *Session, idx int, ok bool, input string) (catalog.MenuItem, int, bool) {
	if ok {
		return s.AgentDef.Menu[idx], idx, true
	}
	if it, hit := namedSkill(cat, s, input); hit {
		return it, -1, true
	}
	return catalog.MenuItem{}, idx, false
}

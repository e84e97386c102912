package engine

import (
	"regexp"
	"strings"

	"agentbot/engine/sandbox"
	"agentbot/engine/vars"
)

var (
	// enginePath finds the workflow engine task an instructions file names.
	enginePath = regexp.MustCompile(`\{[A-Za-z0-9_.-]+\}(?:/[A-Za-z0-9_.-]+)*/tasks/workflow\.(?:xml|md)`)
	// elicitPath finds the elicitation task an instructions file names.
	elicitPath = regexp.MustCompile(`\{[A-Za-z0-9_.-]+\}(?:/[A-Za-z0-9_.-]+)*/tasks/adv-elicit\.(?:xml|md)`)
)

// preload loads a workflow in one result: workflow.yaml resolved, its
// instructions, template and config, the workflow engine task, and the
// elicitation task when the instructions use it.
func (t *toolRun) preload(p string) toolResult {
	if strings.EqualFold(strings.TrimSpace(p), "todo") {
		return errResult("this menu item's workflow is not implemented yet (its path is \"todo\"); tell the user")
	}
	raw, virtual, err := t.sb.ReadFile(p)
	if err != nil {
		return toolResult{"error": err.Error()}
	}
	if !strings.HasSuffix(virtual, ".yaml") && !strings.HasSuffix(virtual, ".yml") {
		// Not a workflow.yaml (newer BMAD uses workflow.md files): hand it over as is.
		return toolResult{"workflow": virtual, "instructions": file(virtual, string(raw)), "note": "not a workflow.yaml; follow this file's instructions directly"}
	}
	readConfig := func(cp string) (vars.Vars, error) {
		data, _, err := t.sb.ReadFile(cp)
		if err != nil {
			return nil, err
		}
		return vars.ParseConfig(data)
	}
	wf, err := vars.ResolveWorkflow(raw, vars.Vars(t.s.Vars), readConfig)
	if err != nil {
		return errResult("workflow %s: %v", virtual, err)
	}
	res := toolResult{"workflow": virtual, "workflow_yaml": wf.Resolved}
	var notes []string
	instructions := ""
	if wf.Instructions != "" {
		if data, v, err := t.sb.ReadFile(wf.Instructions); err == nil {
			instructions = string(data)
			res["instructions"] = file(v, instructions)
		} else {
			notes = append(notes, "instructions: "+err.Error())
		}
	}
	if wf.Template != "" {
		if data, v, err := t.sb.ReadFile(wf.Template); err == nil {
			res["template"] = file(v, string(data))
		} else {
			notes = append(notes, "template: "+err.Error())
		}
	}
	if wf.ConfigSource != "" {
		if data, v, err := t.sb.ReadFile(wf.ConfigSource); err == nil {
			res["config"] = file(v, string(data))
		} else {
			notes = append(notes, "config: "+err.Error())
		}
	}
	if f := t.coreTask(instructions, enginePath, "workflow"); f != nil {
		res["workflow_engine"] = f
	} else {
		notes = append(notes, "no workflow engine task found under /core/tasks")
	}
	if strings.Contains(instructions, "elicit-required") || strings.Contains(instructions, "adv-elicit") {
		if f := t.coreTask(instructions, elicitPath, "adv-elicit"); f != nil {
			res["elicitation"] = f
		}
	}
	notes = append(notes, wf.Notes...)
	if len(wf.Unresolved) > 0 {
		res["unresolved_variables"] = wf.Unresolved
		notes = append(notes, "ask the user for the unresolved variables when a step needs them")
	}
	res["output_folder"] = sandbox.OutputDir
	if len(notes) > 0 {
		res["notes"] = notes
	}
	return res
}

// coreTask reads the core task the instructions name, or the default one
// under /core/tasks.
func (t *toolRun) coreTask(instructions string, re *regexp.Regexp, stem string) map[string]string {
	var candidates []string
	if m := re.FindString(instructions); m != "" {
		if p, err := vars.Expand(m, vars.Vars(t.s.Vars)); err == nil {
			candidates = append(candidates, p)
		}
	}
	candidates = append(candidates, sandbox.CoreDir+"/tasks/"+stem+".xml", sandbox.CoreDir+"/tasks/"+stem+".md")
	for _, c := range candidates {
		if data, v, err := t.sb.ReadFile(c); err == nil {
			return file(v, string(data))
		}
	}
	return nil
}

func file(path, content string) map[string]string {
	return map[string]string{"path": path, "content": content}
}

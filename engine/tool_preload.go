package engine

import (
	"context"
	"errors"
	"fmt"
	"path"
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

// ToolPreloadWorkflow is the name of the tool that loads a workflow in one call.
const ToolPreloadWorkflow = "preload_workflow"

// PreloadResult is preload_workflow's answer: everything a workflow needs.
type PreloadResult struct {
	Workflow       string       `json:"workflow"`
	WorkflowYAML   string       `json:"workflow_yaml,omitempty"`
	Instructions   *FileContent `json:"instructions,omitempty"`
	Template       *FileContent `json:"template,omitempty"`
	Config         *FileContent `json:"config,omitempty"`
	WorkflowEngine *FileContent `json:"workflow_engine,omitempty"`
	Elicitation    *FileContent `json:"elicitation,omitempty"`
	Unresolved     []string     `json:"unresolved_variables,omitempty"`
	OutputFolder   string       `json:"output_folder,omitempty"`
	Note           string       `json:"note,omitempty"`
	Notes          []string     `json:"notes,omitempty"`
}

// Failure is "" for a preload that worked.
func (PreloadResult) Failure() string { return "" }

type preloadArgs struct {
	WorkflowPath string `json:"workflow_path"`
	Path         string `json:"path"`
}

func (a preloadArgs) path() string {
	if a.WorkflowPath != "" {
		return a.WorkflowPath
	}
	return a.Path
}

// preloadTool loads a workflow.yaml and everything it names in one call.
var preloadTool = define(Tool{
	Name:        ToolPreloadWorkflow,
	Description: "Load a workflow in one call: its workflow.yaml with variables resolved, its instructions, template and config, the workflow engine task, and the elicitation task when the instructions use it. Call it before running any workflow.",
	Schema:      `{"type":"object","properties":{"workflow_path":{"type":"string","description":"Path of the workflow.yaml, as given in the menu"}},"required":["workflow_path"],"additionalProperties":false}`,
	Rule:        "To start a workflow, call preload_workflow with its workflow.yaml path, then follow the workflow engine it returns.",
	Offered:     func(o Offer) bool { return !o.SkillFormat },
	Summary: summarize(func(r PreloadResult, size int) string {
		return fmt.Sprintf("workflow %s loaded (%d bytes)", r.Workflow, size)
	}),
}, `{"workflow_path": "{project-root}/workflows/prd/workflow.yaml"}`,
	func(a preloadArgs) string {
		return "loading workflow " + path.Base(path.Dir(strings.ReplaceAll(a.path(), "\\", "/")))
	},
	func(_ context.Context, env *toolEnv, a preloadArgs) (ToolResult, error) {
		p := a.path()
		if p == "" {
			return nil, errors.New("preload_workflow needs a workflow_path")
		}
		return (&workflowLoad{sb: env.sb, vars: env.s.Vars}).preload(p)
	})

// workflowLoad is one preload_workflow call: the sandbox it reads in and
// the session's variables.
type workflowLoad struct {
	sb   *sandbox.Sandbox
	vars map[string]string
}

// preload loads a workflow in one result: workflow.yaml resolved, its
// instructions, template and config, the workflow engine task, and the
// elicitation task when the instructions use it.
func (t *workflowLoad) preload(p string) (ToolResult, error) {
	if strings.EqualFold(strings.TrimSpace(p), "todo") {
		return nil, errors.New("this menu item's workflow is not implemented yet (its path is \"todo\"); tell the user")
	}
	raw, virtual, err := t.sb.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(virtual, ".yaml") && !strings.HasSuffix(virtual, ".yml") {
		// Not a workflow.yaml (newer BMAD uses workflow.md files): hand it over as is.
		return PreloadResult{Workflow: virtual, Instructions: file(virtual, string(raw)), Note: "not a workflow.yaml; follow this file's instructions directly"}, nil
	}
	wf, err := vars.ResolveWorkflow(raw, vars.Vars(t.vars), t.readConfig)
	if err != nil {
		return nil, fmt.Errorf("workflow %s: %v", virtual, err)
	}
	res := PreloadResult{Workflow: virtual, WorkflowYAML: wf.Resolved}
	notes := t.workflowFiles(&res, wf)
	instructions := ""
	if res.Instructions != nil {
		instructions = res.Instructions.Content
	}
	notes = append(notes, t.coreTasks(&res, instructions)...)
	notes = append(notes, wf.Notes...)
	if len(wf.Unresolved) > 0 {
		res.Unresolved = wf.Unresolved
		notes = append(notes, "ask the user for the unresolved variables when a step needs them")
	}
	res.OutputFolder = sandbox.OutputDir
	res.Notes = notes
	return res, nil
}

// readConfig reads and parses a config file a workflow.yaml names.
func (t *workflowLoad) readConfig(p string) (vars.Vars, error) {
	data, _, err := t.sb.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return vars.ParseConfig(data)
}

// workflowFiles reads into res the instructions, template and config files
// a resolved workflow names, and returns a note for each that cannot be
// read.
func (t *workflowLoad) workflowFiles(res *PreloadResult, wf *vars.Workflow) []string {
	var notes []string
	for _, f := range []struct {
		label, path string
		dst         **FileContent
	}{
		{"instructions", wf.Instructions, &res.Instructions},
		{"template", wf.Template, &res.Template},
		{"config", wf.ConfigSource, &res.Config},
	} {
		if f.path == "" {
			continue
		}
		if data, v, err := t.sb.ReadFile(f.path); err == nil {
			*f.dst = file(v, string(data))
		} else {
			notes = append(notes, f.label+": "+err.Error())
		}
	}
	return notes
}

// coreTasks puts into res the workflow engine task the instructions name
// (or the default one), and the elicitation task when they use it. It
// returns a note when no workflow engine task is found.
func (t *workflowLoad) coreTasks(res *PreloadResult, instructions string) []string {
	var notes []string
	if f := t.coreTask(instructions, enginePath, "workflow"); f != nil {
		res.WorkflowEngine = f
	} else {
		notes = append(notes, "no workflow engine task found under /core/tasks")
	}
	if strings.Contains(instructions, "elicit-required") || strings.Contains(instructions, "adv-elicit") {
		res.Elicitation = t.coreTask(instructions, elicitPath, "adv-elicit")
	}
	return notes
}

// coreTask reads the core task the instructions name, or the default one
// under /core/tasks.
func (t *workflowLoad) coreTask(instructions string, re *regexp.Regexp, stem string) *FileContent {
	var candidates []string
	if m := re.FindString(instructions); m != "" {
		if p, err := vars.Expand(m, vars.Vars(t.vars)); err == nil {
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

// file is a file handed to the model.
func file(path, content string) *FileContent {
	return &FileContent{Path: path, Content: content}
}

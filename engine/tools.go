package engine

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/sandbox"
)

// The tools the model may call.
const (
	ToolReadFile        = "read_file"
	ToolSaveOutput      = "save_output"
	ToolPreloadWorkflow = "preload_workflow"
)

// toolDefs are the tool definitions sent with every request, in a fixed
// order so requests stay byte-stable.
var toolDefs = []openai.Tool{
	fn(ToolReadFile, "Read a text file: a bundle or project file under /project, a core task under /core, a document under /outputs or a file the user shared under /inputs. {variables} in the path are resolved.",
		`{"type":"object","properties":{"path":{"type":"string","description":"File path, e.g. {project-root}/bmad/bmm/config.yaml or /outputs/prd.md"}},"required":["path"],"additionalProperties":false}`),
	fn(ToolSaveOutput, "Save a document to this session's output folder (/outputs). Relative paths and {output_folder} land there; folders are created. Saving the same path again makes a new version. The user receives every save as a file.",
		`{"type":"object","properties":{"path":{"type":"string","description":"Where to save, e.g. prd.md or {output_folder}/product-brief.md"},"content":{"type":"string","description":"The whole document"}},"required":["path","content"],"additionalProperties":false}`),
	fn(ToolPreloadWorkflow, "Load a workflow in one call: its workflow.yaml with variables resolved, its instructions, template and config, the workflow engine task, and the elicitation task when the instructions use it. Call it before running any workflow.",
		`{"type":"object","properties":{"workflow_path":{"type":"string","description":"Path of the workflow.yaml, as given in the menu"}},"required":["workflow_path"],"additionalProperties":false}`),
}

func fn(name, desc, schema string) openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: name, Description: desc, Parameters: json.RawMessage(schema),
	}}
}

// toolResult is the JSON a tool returns: content or an error, never empty.
type toolResult map[string]any

func errResult(format string, args ...any) toolResult {
	return toolResult{"error": fmt.Sprintf(format, args...)}
}

func (r toolResult) failed() bool { _, ok := r["error"]; return ok }

func (r toolResult) String() string {
	b, err := json.Marshal(map[string]any(r))
	if err != nil || len(b) == 0 {
		return `{"error":"tool result could not be encoded"}`
	}
	return string(b)
}

// toolRun is one tool call of a turn, with what it needs.
type toolRun struct {
	e  *Engine
	s  *Session
	sb *sandbox.Sandbox
	// saved collects outputs written by this call, for events and the session.
	saved func(virtual string, size int64) *Output
}

// call runs one tool call. It never panics on bad input: malformed JSON and
// unknown tools become error results the model can recover from.
func (t *toolRun) call(tc openai.ToolCall) toolResult {
	name := tc.Function.Name
	args := strings.TrimSpace(tc.Function.Arguments)
	if args == "" {
		args = "{}"
	}
	switch name {
	case ToolReadFile:
		var a struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return errResult("invalid JSON arguments for read_file (%v); expected {\"path\": \"...\"}", err)
		}
		if a.Path == "" {
			return errResult("read_file needs a path, e.g. {\"path\": \"/project/config.yaml\"}")
		}
		return t.readFile(a.Path)
	case ToolSaveOutput:
		var a struct {
			Path    string  `json:"path"`
			Content *string `json:"content"`
		}
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return errResult("invalid JSON arguments for save_output (%v); expected {\"path\": \"...\", \"content\": \"...\"}", err)
		}
		if a.Path == "" || a.Content == nil {
			return errResult("save_output needs a path and the content, e.g. {\"path\": \"prd.md\", \"content\": \"# PRD...\"}")
		}
		return t.saveOutput(a.Path, *a.Content)
	case ToolPreloadWorkflow:
		var a struct {
			WorkflowPath string `json:"workflow_path"`
			Path         string `json:"path"`
		}
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return errResult("invalid JSON arguments for preload_workflow (%v); expected {\"workflow_path\": \"...\"}", err)
		}
		p := a.WorkflowPath
		if p == "" {
			p = a.Path
		}
		if p == "" {
			return errResult("preload_workflow needs a workflow_path")
		}
		return t.preload(p)
	default:
		return errResult("unknown tool %q; the tools are read_file, save_output and preload_workflow", name)
	}
}

func (t *toolRun) readFile(p string) toolResult {
	data, virtual, err := t.sb.ReadFile(p)
	if err != nil {
		return toolResult{"error": err.Error()}
	}
	if len(data) == 0 {
		return toolResult{"path": virtual, "content": "", "note": "the file is empty"}
	}
	return toolResult{"path": virtual, "content": string(data)}
}

func (t *toolRun) saveOutput(p, content string) toolResult {
	if strings.Contains(p, "{{") {
		return errResult("the file name %s still has a {{placeholder}}; fill it in (e.g. prd-checkout.md) and save again", p)
	}
	if content == "" {
		return errResult("refusing to save an empty document to %s; send the full content", p)
	}
	virtual, err := t.sb.WriteFile(p, []byte(content))
	if err != nil {
		return toolResult{"error": err.Error()}
	}
	out := t.saved(virtual, int64(len(content)))
	return toolResult{"path": virtual, "bytes": len(content), "version": out.Version, "shared": "the user receives this file in the thread"}
}

// toolStatus is the short human line for a tool call ("reading instructions.md").
func toolStatus(tc openai.ToolCall) string {
	var a struct {
		Path         string `json:"path"`
		WorkflowPath string `json:"workflow_path"`
	}
	_ = json.Unmarshal([]byte(tc.Function.Arguments), &a)
	switch tc.Function.Name {
	case ToolReadFile:
		return "reading " + baseName(a.Path)
	case ToolSaveOutput:
		return "saving " + baseName(a.Path)
	case ToolPreloadWorkflow:
		p := a.WorkflowPath
		if p == "" {
			p = a.Path
		}
		return "loading workflow " + path.Base(path.Dir(strings.ReplaceAll(p, "\\", "/")))
	}
	return "running " + tc.Function.Name
}

func baseName(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	if p == "" {
		return "a file"
	}
	return path.Base(p)
}

// ToolDefinitions returns the tools offered to the model, in request order.
func ToolDefinitions() []openai.Tool {
	return append([]openai.Tool(nil), toolDefs...)
}

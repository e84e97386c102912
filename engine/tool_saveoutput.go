package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"agentbot/engine/project"
	"agentbot/engine/sandbox"
)

// SaveResult is save_output's answer: where the document went and its size.
type SaveResult struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Version int    `json:"version"`
	Shared  string `json:"shared"`
}

// Failure is "" for a save that worked.
func (SaveResult) Failure() string { return "" }

type saveArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// saveOutputTool writes a whole document under /outputs.
var saveOutputTool = define(Tool{
	Name:        ToolSaveOutput,
	Description: "Save a whole document under /outputs (relative paths and {output_folder} land there). Saving a path again makes a new version; the user gets each document as a file.",
	Schema:      `{"type":"object","properties":{"path":{"type":"string","description":"e.g. prd.md or {output_folder}/brief.md"},"content":{"type":"string","description":"the whole document"}},"required":["path","content"],"additionalProperties":false}`,
	Rule:        "Save each document you produce with save_output after every step that changes it, not only at the end.",
	Summary: summarize(func(r SaveResult, size int) string {
		return fmt.Sprintf("saved %s (%d bytes)", r.Path, r.Bytes)
	}),
}, `{"path": "prd.md", "content": "# PRD..."}`,
	func(a saveArgs) string { return "saving " + baseName(a.Path) },
	func(ctx context.Context, env *toolEnv, a saveArgs) (ToolResult, error) {
		if a.Path == "" || a.Content == nil {
			return nil, errors.New(`save_output needs a path and the content, e.g. {"path": "prd.md", "content": "# PRD..."}`)
		}
		return env.write(ctx, a.Path, []byte(*a.Content))
	})

// ToolSaveOutput is the name of the tool that saves documents.
const ToolSaveOutput = "save_output"

// write saves a whole document under /outputs and records it.
func (env *toolEnv) write(ctx context.Context, p string, content []byte) (SaveResult, error) {
	if strings.Contains(p, "{{") {
		return SaveResult{}, fmt.Errorf("the file name %s still has a {{placeholder}}; fill it in (e.g. prd-checkout.md) and save again", p)
	}
	if len(content) == 0 {
		return SaveResult{}, fmt.Errorf("refusing to save an empty document to %s; send the full content", p)
	}
	if d := env.docs; d != nil {
		return projectSaved(d.Save(ctx, p, content))
	}
	virtual, err := env.sb.WriteFile(p, content)
	if err != nil {
		return SaveResult{}, err
	}
	out, err := env.out.save(ctx, virtual, content, nil, "")
	if err != nil {
		return SaveResult{}, err
	}
	return SaveResult{Path: virtual, Bytes: len(content), Version: out.Version, Shared: "the user receives this file in the thread"}, nil
}

// projectSaved is the result of a save or an edit of a project document.
func projectSaved(v project.Saved, err error) (SaveResult, error) {
	if err != nil {
		return SaveResult{}, err
	}
	return SaveResult{Path: v.Path, Bytes: v.Bytes, Version: v.Version, Shared: "the user receives this file in the thread; every thread of the project sees it"}, nil
}

// outputRel is a virtual path under /outputs relative to that folder.
func outputRel(virtual string) string {
	return strings.TrimPrefix(strings.TrimPrefix(virtual, sandbox.OutputDir), "/")
}

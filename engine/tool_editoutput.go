package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ToolEditOutput is the name of the tool that appends to, or replaces one
// passage of, a saved document.
const ToolEditOutput = "edit_output"

type editArgs struct {
	Path    string  `json:"path"`
	Append  *string `json:"append"`
	OldText *string `json:"old_text"`
	NewText *string `json:"new_text"`
}

// editOutputTool changes a document without resending it whole: step-file
// workflows build documents a section at a time.
var editOutputTool = define(Tool{
	Name:        ToolEditOutput,
	Description: "Change a document under /outputs without resending it: append text at its end (creating it if missing), or replace old_text (which must occur once) with new_text.",
	Schema:      `{"type":"object","properties":{"path":{"type":"string"},"append":{"type":"string"},"old_text":{"type":"string"},"new_text":{"type":"string"}},"required":["path"],"additionalProperties":false}`,
	Rule:        "To add a section or change a passage, use edit_output, not a full resend.",
	Summary: summarize(func(r SaveResult, _ int) string {
		return fmt.Sprintf("edited %s (now %d bytes)", r.Path, r.Bytes)
	}),
}, `{"path": "prd.md", "append": "\n## Goals\n..."}`,
	func(a editArgs) string { return "editing " + baseName(a.Path) },
	func(ctx context.Context, env *toolEnv, a editArgs) (ToolResult, error) {
		if a.Path == "" {
			return nil, errors.New(`edit_output needs a path, e.g. {"path": "prd.md", "append": "..."}`)
		}
		switch {
		case a.Append != nil && a.OldText == nil:
			return env.appendOutput(ctx, a.Path, *a.Append)
		case a.OldText != nil && a.Append == nil:
			newText := ""
			if a.NewText != nil {
				newText = *a.NewText
			}
			return env.replaceOutput(ctx, a.Path, *a.OldText, newText)
		}
		return nil, errors.New("edit_output takes either append, or old_text with new_text")
	})

// appendOutput adds text at the end of a document, creating it if missing.
func (env *toolEnv) appendOutput(ctx context.Context, p, text string) (ToolResult, error) {
	if text == "" {
		return nil, errors.New("nothing to append; send the text")
	}
	if d := env.docs; d != nil {
		if v, ok := d.AppendLanded(ctx, p, text); ok {
			return projectSaved(v, nil)
		}
	}
	return env.editDocument(ctx, p, func(old []byte) ([]byte, error) {
		return append(old, text...), nil
	})
}

// replaceOutput replaces the one occurrence of oldText in a document.
func (env *toolEnv) replaceOutput(ctx context.Context, p, oldText, newText string) (ToolResult, error) {
	if oldText == "" {
		return nil, errors.New("old_text is empty; give the passage to replace, or use append")
	}
	return env.editDocument(ctx, p, func(old []byte) ([]byte, error) {
		if len(old) == 0 {
			return nil, fmt.Errorf("%s does not exist yet; save it first with save_output or append", p)
		}
		switch n := strings.Count(string(old), oldText); n {
		case 0:
			return nil, fmt.Errorf("old_text does not occur in %s; read it back and copy the passage exactly", p)
		case 1:
		default:
			return nil, fmt.Errorf("old_text occurs %d times in %s; include more of the surrounding text so it occurs once", n, p)
		}
		return []byte(strings.Replace(string(old), oldText, newText, 1)), nil
	})
}

// editDocument applies edit to the latest text of a document and saves
// the result: in a project atomically in the store, so edits of other
// threads are never lost; else under the session's edit lock.
func (env *toolEnv) editDocument(ctx context.Context, p string, edit func(old []byte) ([]byte, error)) (ToolResult, error) {
	if d := env.docs; d != nil {
		return projectSaved(d.Edit(ctx, p, false, edit))
	}
	env.editMu.Lock()
	defer env.editMu.Unlock()
	old, err := env.readOutput(p)
	if err != nil {
		return nil, err
	}
	data, err := edit(old)
	if err != nil {
		return nil, err
	}
	return env.write(ctx, p, data)
}

// readOutput reads a document under /outputs; a missing one is empty.
func (env *toolEnv) readOutput(p string) ([]byte, error) {
	virtual, err := env.sb.Resolve(p, true)
	if err != nil {
		return nil, err
	}
	if !env.sb.Exists(virtual) {
		return nil, nil
	}
	data, _, err := env.sb.ReadFile(virtual)
	return data, err
}

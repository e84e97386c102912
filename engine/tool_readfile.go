package engine

import (
	"context"
	"errors"
	"fmt"
)

// ReadResult is read_file's answer: the file's virtual path and content.
type ReadResult struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Note    string `json:"note,omitempty"`
}

// Failure is "" for a read that worked.
func (ReadResult) Failure() string { return "" }

type readArgs struct {
	Path string `json:"path"`
}

// readFileTool reads a file under an allowed folder.
var readFileTool = define(Tool{
	Name:        ToolReadFile,
	Description: "Read a text file under /project, /core, /outputs, /inputs or /skills. {variables} in the path resolve.",
	Schema:      `{"type":"object","properties":{"path":{"type":"string","description":"e.g. {project-root}/docs/brief.md or /outputs/prd.md"}},"required":["path"],"additionalProperties":false}`,
	Rule:        "Load files with read_file; never say you read or followed a file you did not load in this conversation, and never merely acknowledge an instruction to load something.",
	Summary: summarize(func(r ReadResult, size int) string {
		return fmt.Sprintf("%s (%d bytes)", r.Path, len(r.Content))
	}),
}, `{"path": "/project/config.yaml"}`,
	func(a readArgs) string { return "reading " + baseName(a.Path) },
	func(ctx context.Context, env *toolEnv, a readArgs) (ToolResult, error) {
		if a.Path == "" {
			return nil, errors.New(`read_file needs a path, e.g. {"path": "/project/config.yaml"}`)
		}
		data, virtual, err := env.readFile(ctx, a.Path)
		if err != nil {
			return nil, err
		}
		if len(data) == 0 {
			return ReadResult{Path: virtual, Note: "the file is empty"}, nil
		}
		return ReadResult{Path: virtual, Content: string(data)}, nil
	})

// ToolReadFile is the name of the tool that reads files.
const ToolReadFile = "read_file"

// readFile reads a file for the model; a project's document is brought up
// to date first and recorded as seen.
func (env *toolEnv) readFile(ctx context.Context, p string) ([]byte, string, error) {
	if d := env.docs; d != nil {
		return d.Read(ctx, p)
	}
	return env.sb.ReadFile(p)
}

package engine

import (
	"context"
	"errors"
	"fmt"

	"agentbot/engine/sandbox"
)

// ToolListFiles is the name of the tool that lists files by pattern.
const ToolListFiles = "list_files"

// ListResult is list_files's answer: the matching paths.
type ListResult struct {
	Pattern string   `json:"pattern"`
	Files   []string `json:"files"`
	Note    string   `json:"note,omitempty"`
}

// Failure is "" for a listing that worked.
func (ListResult) Failure() string { return "" }

type listArgs struct {
	Glob string `json:"glob"`
}

// listFilesTool lists files by glob, for skills that scan for earlier runs.
var listFilesTool = define(Tool{
	Name:        ToolListFiles,
	Description: "List files matching a glob, e.g. /outputs/**/*.md or {planning_artifacts}/prds/*/prd.md (** spans folders; folders end in /).",
	Schema:      `{"type":"object","properties":{"glob":{"type":"string"}},"required":["glob"],"additionalProperties":false}`,
	Summary: summarize(func(r ListResult, _ int) string {
		return fmt.Sprintf("%d files match %s", len(r.Files), r.Pattern)
	}),
}, `{"glob": "/outputs/**/*.md"}`,
	func(a listArgs) string { return "listing " + a.Glob },
	func(_ context.Context, env *toolEnv, a listArgs) (ToolResult, error) {
		if a.Glob == "" {
			return nil, errors.New(`list_files needs a glob, e.g. {"glob": "/outputs/**/*.md"}`)
		}
		files, err := env.sb.Glob(a.Glob)
		res := ListResult{Pattern: a.Glob, Files: files}
		switch {
		case errors.Is(err, sandbox.ErrGlobTruncated):
			res.Note = fmt.Sprintf("only the first %d matches are listed; narrow the pattern", len(files))
		case err != nil:
			return nil, err
		case len(files) == 0:
			res.Note = "nothing matches"
		}
		return res, nil
	})

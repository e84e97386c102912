// Package core holds agentbot's own core, embedded in the binary: the
// workflow engine task and the elicitation task that bundles reference as
// {core-root}/tasks/....
package core

import "embed"

//go:embed tasks
var files embed.FS

// FS is the embedded core, rooted so that "tasks/workflow.md" opens.
var FS = files

package engine

import "context"

// ContextStep runs what context management costs each model call of a
// turn, for benchmarks: the estimate and check of fitContext and building
// the request.
func ContextStep(e *Engine, s *Session) int {
	tools := toolsTokens(definitions(e.toolsFor(s)))
	_ = e.win.Fit(context.Background(), view(s), nil, tools, false)
	return len(e.win.Request(view(s)))
}

package engine

import "context"

// ContextStep runs what context management costs each model call of a
// turn, for benchmarks: the estimate and check of fitContext and building
// the request.
func ContextStep(e *Engine, s *Session) int {
	tools := toolsTokens(definitions(e.toolsFor(s)))
	_ = e.fitContext(context.Background(), s, nil, tools, false)
	return len(requestMessages(s))
}

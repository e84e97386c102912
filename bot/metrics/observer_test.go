package metrics_test

import (
	"agentbot/bot"
	"agentbot/bot/metrics"
	"agentbot/engine"
)

// Metrics is what the bot reports to, and its methods fit the engine's and
// the model client's hooks.
var (
	_ bot.Observer = (*metrics.Metrics)(nil)
	_              = engine.Config{OnToolRecord: (*metrics.Metrics)(nil).ToolRecord}
	_ func()       = (*metrics.Metrics)(nil).ModelRetry
)

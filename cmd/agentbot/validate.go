package main

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"agentbot/cmd/agentbot/check"
	"agentbot/cmd/agentbot/flagargs"
	"agentbot/engine/model"
)

// rangeCheck is one setting's allowed range (flagargs.Range).
type rangeCheck = flagargs.Range[Config]

// checks are the ranges of the settings that have one.
var checks = []rangeCheck{
	flagargs.Between("max-iterations", "AGENTBOT_MAX_ITERATIONS", 1, 1000, func(c *Config) int64 { return int64(c.MaxIterations) }),
	flagargs.Positive("turn-timeout", "AGENTBOT_TURN_TIMEOUT", func(c *Config) time.Duration { return c.TurnTimeout }),
	flagargs.Positive("call-timeout", "AGENTBOT_CALL_TIMEOUT", func(c *Config) time.Duration { return c.CallTimeout }),
	{Flag: "approval-timeout", Env: "AGENTBOT_APPROVAL_TIMEOUT", Bad: func(c *Config) (string, string, bool) {
		return c.ApprovalTimeout.String(), "a duration from 1s to 7 days, such as 15m", c.ApprovalTimeout < time.Second || c.ApprovalTimeout > 7*24*time.Hour
	}},
	{Flag: "lease-ttl", Env: "AGENTBOT_LEASE_TTL", Bad: func(c *Config) (string, string, bool) {
		return c.LeaseTTL.String(), "a duration from 100ms to 10m, such as 15s", c.LeaseTTL < 100*time.Millisecond || c.LeaseTTL > 10*time.Minute
	}},
	flagargs.Between("context-tokens", "AGENTBOT_CONTEXT_TOKENS", 2000, 10_000_000, func(c *Config) int64 { return int64(c.ContextBudget) }),
	flagargs.Between("max-file-bytes", "AGENTBOT_MAX_FILE_BYTES", 1, 1<<30, func(c *Config) int64 { return c.MaxFileBytes }),
	flagargs.Between("max-upload-bytes", "AGENTBOT_MAX_UPLOAD_BYTES", 1, 1<<31, func(c *Config) int64 { return c.MaxUploadBytes }),
	flagargs.Between("max-concurrent-turns", "AGENTBOT_MAX_CONCURRENT_TURNS", 1, 1000, func(c *Config) int64 { return int64(c.MaxTurns) }),
	flagargs.Between("max-tokens", "AGENTBOT_MAX_TOKENS", 0, 10_000_000, func(c *Config) int64 { return int64(c.MaxTokens) }),
	flagargs.Between("session-token-budget", "AGENTBOT_SESSION_TOKEN_BUDGET", 0, 1<<40, func(c *Config) int64 { return int64(c.SessionTokenBudget) }),
	flagargs.Between("daily-token-budget", "AGENTBOT_DAILY_TOKEN_BUDGET", 0, 1<<40, func(c *Config) int64 { return int64(c.DailyTokenBudget) }),
	{Flag: "session-ttl", Env: "AGENTBOT_SESSION_TTL", Bad: func(c *Config) (string, string, bool) {
		return c.SessionTTL.String(), "0 (keep forever) or a duration above zero, such as 720h", c.SessionTTL < 0
	}},
	flagargs.OneOf("slack-mode", "AGENTBOT_SLACK_MODE", func(c *Config) string { return c.SlackMode }, "socket", "http"),
	flagargs.OneOf("log-level", "AGENTBOT_LOG_LEVEL", func(c *Config) string { return c.LogLevel }, "debug", "info", "warn", "error"),
	flagargs.OneOf("log-format", "AGENTBOT_LOG_FORMAT", func(c *Config) string { return c.LogFormat }, "text", "json"),
	{Flag: "base-url", Env: "OPENAI_BASE_URL", Bad: func(c *Config) (string, string, bool) {
		return strconv.Quote(c.BaseURL), "a URL starting with http:// or https://, such as https://api.openai.com/v1 or http://localhost:11434/v1", !check.BaseURLOK(c.BaseURL)
	}},
	flagargs.OneOf("api-type", "OPENAI_API_TYPE", func(c *Config) string { return c.APIType }, "openai", "azure", "azure_ad"),
	flagargs.OneOf("api", "AGENTBOT_API", func(c *Config) string { return c.API }, model.APIAuto, model.APIChat, model.APIResponses),
	{Flag: "reasoning-effort", Env: "AGENTBOT_REASONING_EFFORT", Bad: func(c *Config) (string, string, bool) {
		v := strings.ToLower(c.ReasoningEffort)
		return strconv.Quote(c.ReasoningEffort), "empty (the model's default) or one of " + strings.Join(model.Efforts, ", "), v != "" && !slices.Contains(model.Efforts, v)
	}},
	{Flag: "temperature", Env: "AGENTBOT_TEMPERATURE", Bad: func(c *Config) (string, string, bool) {
		t := strings.TrimSpace(c.Temperature)
		if t == "" {
			return "", "", false
		}
		f, err := strconv.ParseFloat(t, 64)
		return strconv.Quote(c.Temperature), "empty (the provider's default) or a number from 0 to 2", err != nil || f < 0 || f > 2
	}},
	{Flag: "public-url", Env: "AGENTBOT_PUBLIC_URL", Bad: func(c *Config) (string, string, bool) {
		return strconv.Quote(c.PublicURL), "empty or an https URL without query, such as https://agentbot.example.com (http only on a loopback host)", !check.PublicURLOK(c.PublicURL)
	}},
	{Flag: "listen", Env: "AGENTBOT_LISTEN", Bad: func(c *Config) (string, string, bool) {
		_, port, err := net.SplitHostPort(c.Listen)
		return strconv.Quote(c.Listen), "host:port, such as :8080 or 127.0.0.1:8080", err != nil || port == ""
	}},
}

// validate checks the range of every setting in use (all when use is
// nil), as flagargs.Validate says.
func validate(c *Config, use map[string]bool) error { return flagargs.Validate(c, checks, use) }

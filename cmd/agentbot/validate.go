package main

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"agentbot/cmd/agentbot/check"
	"agentbot/engine/model"
)

// rangeCheck is one setting's allowed range, checked after flags and
// environment are applied.
type rangeCheck struct {
	flag, env string
	bad       func(c *Config) (value string, want string, bad bool)
}

// positive checks a duration that must be above zero.
func positive(flag, env string, get func(c *Config) time.Duration) rangeCheck {
	return rangeCheck{flag, env, func(c *Config) (string, string, bool) {
		d := get(c)
		return d.String(), "a duration above zero, such as 15m", d <= 0
	}}
}

// between checks an integer range.
func between(flag, env string, lo, hi int64, get func(c *Config) int64) rangeCheck {
	return rangeCheck{flag, env, func(c *Config) (string, string, bool) {
		n := get(c)
		return strconv.FormatInt(n, 10), fmt.Sprintf("a whole number from %d to %d", lo, hi), n < lo || n > hi
	}}
}

// oneOf checks an enumeration.
func oneOf(flag, env string, get func(c *Config) string, values ...string) rangeCheck {
	return rangeCheck{flag, env, func(c *Config) (string, string, bool) {
		v := get(c)
		return strconv.Quote(v), "one of " + strings.Join(values, ", "), !slices.Contains(values, strings.ToLower(v))
	}}
}

// checks are the ranges of the settings that have one.
var checks = []rangeCheck{
	between("max-iterations", "AGENTBOT_MAX_ITERATIONS", 1, 1000, func(c *Config) int64 { return int64(c.MaxIterations) }),
	positive("turn-timeout", "AGENTBOT_TURN_TIMEOUT", func(c *Config) time.Duration { return c.TurnTimeout }),
	positive("call-timeout", "AGENTBOT_CALL_TIMEOUT", func(c *Config) time.Duration { return c.CallTimeout }),
	{"approval-timeout", "AGENTBOT_APPROVAL_TIMEOUT", func(c *Config) (string, string, bool) {
		return c.ApprovalTimeout.String(), "a duration from 1s to 7 days, such as 15m", c.ApprovalTimeout < time.Second || c.ApprovalTimeout > 7*24*time.Hour
	}},
	{"lease-ttl", "AGENTBOT_LEASE_TTL", func(c *Config) (string, string, bool) {
		return c.LeaseTTL.String(), "a duration from 100ms to 10m, such as 15s", c.LeaseTTL < 100*time.Millisecond || c.LeaseTTL > 10*time.Minute
	}},
	between("context-tokens", "AGENTBOT_CONTEXT_TOKENS", 2000, 10_000_000, func(c *Config) int64 { return int64(c.ContextBudget) }),
	between("max-file-bytes", "AGENTBOT_MAX_FILE_BYTES", 1, 1<<30, func(c *Config) int64 { return c.MaxFileBytes }),
	between("max-upload-bytes", "AGENTBOT_MAX_UPLOAD_BYTES", 1, 1<<31, func(c *Config) int64 { return c.MaxUploadBytes }),
	between("max-concurrent-turns", "AGENTBOT_MAX_CONCURRENT_TURNS", 1, 1000, func(c *Config) int64 { return int64(c.MaxTurns) }),
	between("max-tokens", "AGENTBOT_MAX_TOKENS", 0, 10_000_000, func(c *Config) int64 { return int64(c.MaxTokens) }),
	between("session-token-budget", "AGENTBOT_SESSION_TOKEN_BUDGET", 0, 1<<40, func(c *Config) int64 { return int64(c.SessionTokenBudget) }),
	between("daily-token-budget", "AGENTBOT_DAILY_TOKEN_BUDGET", 0, 1<<40, func(c *Config) int64 { return int64(c.DailyTokenBudget) }),
	{"session-ttl", "AGENTBOT_SESSION_TTL", func(c *Config) (string, string, bool) {
		return c.SessionTTL.String(), "0 (keep forever) or a duration above zero, such as 720h", c.SessionTTL < 0
	}},
	oneOf("slack-mode", "AGENTBOT_SLACK_MODE", func(c *Config) string { return c.SlackMode }, "socket", "http"),
	oneOf("log-level", "AGENTBOT_LOG_LEVEL", func(c *Config) string { return c.LogLevel }, "debug", "info", "warn", "error"),
	oneOf("log-format", "AGENTBOT_LOG_FORMAT", func(c *Config) string { return c.LogFormat }, "text", "json"),
	{"base-url", "OPENAI_BASE_URL", func(c *Config) (string, string, bool) {
		return strconv.Quote(c.BaseURL), "a URL starting with http:// or https://, such as https://api.openai.com/v1 or http://localhost:11434/v1", !check.BaseURLOK(c.BaseURL)
	}},
	oneOf("api-type", "OPENAI_API_TYPE", func(c *Config) string { return c.APIType }, "openai", "azure", "azure_ad"),
	oneOf("api", "AGENTBOT_API", func(c *Config) string { return c.API }, model.APIAuto, model.APIChat, model.APIResponses),
	{"reasoning-effort", "AGENTBOT_REASONING_EFFORT", func(c *Config) (string, string, bool) {
		v := strings.ToLower(c.ReasoningEffort)
		return strconv.Quote(c.ReasoningEffort), "empty (the model's default) or one of " + strings.Join(model.Efforts, ", "), v != "" && !slices.Contains(model.Efforts, v)
	}},
	{"temperature", "AGENTBOT_TEMPERATURE", func(c *Config) (string, string, bool) {
		t := strings.TrimSpace(c.Temperature)
		if t == "" {
			return "", "", false
		}
		f, err := strconv.ParseFloat(t, 64)
		return strconv.Quote(c.Temperature), "empty (the provider's default) or a number from 0 to 2", err != nil || f < 0 || f > 2
	}},
	{"public-url", "AGENTBOT_PUBLIC_URL", func(c *Config) (string, string, bool) {
		return strconv.Quote(c.PublicURL), "empty or an https URL without query, such as https://agentbot.example.com (http only on a loopback host)", !check.PublicURLOK(c.PublicURL)
	}},
	{"listen", "AGENTBOT_LISTEN", func(c *Config) (string, string, bool) {
		_, port, err := net.SplitHostPort(c.Listen)
		return strconv.Quote(c.Listen), "host:port, such as :8080 or 127.0.0.1:8080", err != nil || port == ""
	}},
}

// validate checks the range of every setting in use (all when use is
// nil); the error names the flag, its environment variable, the value and
// the expected form.
func validate(c *Config, use map[string]bool) error {
	for _, ch := range checks {
		if use != nil && !use[ch.flag] {
			continue
		}
		if v, want, bad := ch.bad(c); bad {
			return fmt.Errorf("--%s ($%s) = %s: want %s", ch.flag, ch.env, v, want)
		}
	}
	return nil
}

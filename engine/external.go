package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// ExternalTool is one tool from outside the engine offered to a session,
// such as an MCP server's tool: what the model sees, the approval policy,
// and how a call runs. Each is one value; the engine never imports where it
// comes from.
type ExternalTool struct {
	// Name is what the model calls ("server__tool"); Server is where the
	// tool comes from (the MCP server's name), for the audit and metrics.
	Name        string
	Server      string
	Description string
	// Schema is the JSON schema of the arguments, an object schema.
	Schema json.RawMessage
	// Policy is PolicyAuto or PolicyAsk; "" means PolicyAsk.
	Policy string
	// Call runs the tool with the call's arguments (a JSON object). text
	// is the result the model reads; isError marks a failed call. A Go
	// error (the caller gave up, the tool's source is closed) becomes an
	// error result too: the model can recover from either.
	Call func(ctx context.Context, args json.RawMessage) (text string, isError bool, err error)
}

// ask reports whether a call of t waits for a person's approval.
func (t ExternalTool) ask() bool { return t.Policy != PolicyAuto }

// ExternalResult is the result of an external tool's successful call.
type ExternalResult struct {
	Result string `json:"result"`
	// Truncated is set when the result was cut to the size cap.
	Truncated bool `json:"truncated,omitempty"`
}

// Failure is always "" for a successful call.
func (ExternalResult) Failure() string { return "" }

// externalTools returns the external tools of a session, by name, and their
// order; names taken by a built-in tool are left out.
func (e *Engine) externalTools(ctx context.Context, s *Session) (map[string]ExternalTool, []ExternalTool) {
	if e.cfg.ExternalTools == nil {
		return nil, nil
	}
	byName := map[string]ExternalTool{}
	var order []ExternalTool
	for _, t := range e.cfg.ExternalTools(ctx, s) {
		if t.Name == "" || t.Call == nil {
			continue
		}
		if _, builtin := lookupTool(t.Name); builtin {
			e.cfg.Logger.Warn("external tool left out: its name is a built-in tool's", "tool", t.Name, "server", t.Server)
			continue
		}
		if _, dup := byName[t.Name]; dup {
			continue
		}
		byName[t.Name] = t
		order = append(order, t)
	}
	return byName, order
}

// runExternal runs a call of an external tool; the result is cut to the
// engine's read cap and made valid UTF-8.
func (env *toolEnv) runExternal(ctx context.Context, t ExternalTool, args string) ToolResult {
	text, isErr, err := t.Call(ctx, json.RawMessage(args))
	if err != nil {
		return errResult("tool %s failed: %v", t.Name, err)
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	cut := false
	if max := int(env.e.cfg.MaxRead); len(text) > max {
		text, cut = CutUTF8(text, max), true
	}
	if isErr {
		if text == "" {
			text = "tool " + t.Name + " failed"
		}
		return ErrorResult{Error: text}
	}
	return ExternalResult{Result: text, Truncated: cut}
}

// CutUTF8 cuts s to at most n bytes without splitting a character.
func CutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}

// ArgsDigest is the audit digest of a call's arguments: "sha256:" and the
// hex SHA-256 of the text.
func ArgsDigest(args string) string {
	sum := sha256.Sum256([]byte(args))
	return "sha256:" + hex.EncodeToString(sum[:])
}

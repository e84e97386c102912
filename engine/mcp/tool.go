package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"path"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
)

// Limits on what a server may hand the model about a tool.
const (
	maxToolName    = 64 // OpenAI's limit on a function name
	maxSchemaBytes = 64 << 10
	maxDescBytes   = 4 << 10
	maxTools       = 512 // per server
	maxErrBytes    = 4 << 10
)

// Tool is one MCP server tool as the model sees it.
type Tool struct {
	// Name is "server__tool", limited to [a-zA-Z0-9_-] and 64 characters.
	Name string
	// Server is the configured server name.
	Server string
	// Description is the server's description of the tool (cut to 4 KiB).
	Description string
	// Schema is the server's JSON schema for the arguments, an object schema.
	Schema json.RawMessage
	// ReadOnly is the server's readOnlyHint annotation.
	ReadOnly bool
	// Policy is PolicyAuto or PolicyAsk: the first config rule that matches
	// the tool's own name; else auto for a read-only tool, ask otherwise.
	Policy string

	remote string // the tool's name on the server
	c      *conn
}

// Remote is the tool's own name on its server.
func (t Tool) Remote() string { return t.remote }

// Result is what a tool call gives the model.
type Result struct {
	// Text is the text content joined by newlines or, when the server sent
	// structured content and no text, that content as JSON. Valid UTF-8, with
	// the server's own configured secrets replaced by "[redacted]", cut
	// to the size cap with a note at the end.
	Text string
	// IsError is set when the tool failed or the server could not be reached.
	IsError bool
	// Bytes is the size of the full text before any cut.
	Bytes int
	// Truncated is set when Text was cut.
	Truncated bool
}

// Call runs the tool with args, a JSON object (empty or null means {}). Whatever goes
// wrong with the server (unreachable, crashed, no answer within the server's
// timeout, a bad answer) is an error Result, and the session is reconnected
// on a later call. The error is non-nil only when ctx ends first (the caller
// gave up) or the Manager is closed.
func (t Tool) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	if t.c == nil {
		return Result{}, errors.New("mcp: call of a Tool not listed by a Manager")
	}
	var m map[string]any
	if a := bytes.TrimSpace(args); len(a) > 0 && string(a) != "null" {
		if err := json.Unmarshal(a, &m); err != nil || m == nil {
			return t.c.errResult(fmt.Sprintf("tool %s: arguments must be a JSON object", t.remote)), nil
		}
	}
	return t.c.call(ctx, t.remote, m)
}

// build turns a server's tool list into Tools after the config filters; a
// tool with an unusable schema is left out with a Problem.
func (c *conn) build(raw []*sdk.Tool) ([]Tool, []Problem) {
	var out []Tool
	var probs []Problem
	for _, rt := range raw {
		if rt == nil || !c.srv.wanted(rt.Name) {
			continue
		}
		schema, err := checkSchema(rt.InputSchema)
		if err != nil {
			probs = append(probs, Problem{Server: c.srv.Name, Reason: fmt.Sprintf("tool %q left out: invalid input schema: %v", clean(rt.Name, 80), err)})
			continue
		}
		t := Tool{
			Name:        toolName(c.srv.Name, rt.Name),
			Server:      c.srv.Name,
			Description: clean(rt.Description, maxDescBytes),
			Schema:      schema,
			ReadOnly:    rt.Annotations != nil && rt.Annotations.ReadOnlyHint,
			remote:      rt.Name,
			c:           c,
		}
		t.Policy = c.srv.policy(rt.Name, t.ReadOnly)
		out = append(out, t)
	}
	return out, probs
}

// wanted applies the include and exclude globs to a tool's own name.
func (s *Server) wanted(name string) bool {
	for _, g := range s.Exclude {
		if ok, _ := path.Match(g, name); ok {
			return false
		}
	}
	if len(s.Include) == 0 {
		return true
	}
	for _, g := range s.Include {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// policy is the approval policy of the tool called name.
func (s *Server) policy(name string, readOnly bool) string {
	for _, r := range s.Policy {
		if ok, _ := path.Match(r.Glob, name); ok {
			return r.Policy
		}
	}
	if readOnly {
		return PolicyAuto
	}
	return PolicyAsk
}

// toolName is "server__tool" in the OpenAI function-name charset; a name
// over 64 characters is cut and ends in a hash of the whole.
func toolName(server, tool string) string {
	full := server + "__" + tool
	b := []byte(full)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			b[i] = '_'
		}
	}
	if len(b) <= maxToolName && string(b) == full {
		return full
	}
	if len(b) <= maxToolName {
		return string(b)
	}
	h := fnv.New32a()
	h.Write([]byte(full))
	return fmt.Sprintf("%s_%08x", b[:maxToolName-9], h.Sum32())
}

// checkSchema returns the schema as JSON if it is an object schema the model
// can be given: a JSON object of type "object", with "properties" an object
// of schemas and "required" a list of strings when present.
func checkSchema(s any) (json.RawMessage, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if len(data) > maxSchemaBytes {
		return nil, fmt.Errorf("%d bytes, over the %d-byte limit", len(data), maxSchemaBytes)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return nil, errors.New("not a JSON object")
	}
	var typ string
	if err := json.Unmarshal(m["type"], &typ); err != nil || typ != "object" {
		return nil, errors.New(`"type" must be "object"`)
	}
	if p, ok := m["properties"]; ok {
		var props map[string]json.RawMessage
		if err := json.Unmarshal(p, &props); err != nil || props == nil {
			return nil, errors.New(`"properties" must be an object`)
		}
		for k, v := range props {
			var sub map[string]json.RawMessage
			var b bool
			if json.Unmarshal(v, &sub) != nil && json.Unmarshal(v, &b) != nil {
				return nil, fmt.Errorf("property %q: not a schema", clean(k, 80))
			}
		}
	}
	if r, ok := m["required"]; ok {
		var req []string
		if err := json.Unmarshal(r, &req); err != nil {
			return nil, errors.New(`"required" must be a list of strings`)
		}
	}
	return data, nil
}

// toResult converts a call result, capped at max bytes of text, after
// redact has scrubbed the server's secrets from it.
func toResult(r *sdk.CallToolResult, max int, redact func(string) string) Result {
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown]", clean(c.MIMEType, 100), len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", clean(c.MIMEType, 100), len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", clean(c.URI, 1000)))
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %d bytes, not shown]", clean(c.Resource.URI, 1000), len(c.Resource.Blob)))
			}
		}
	}
	text := strings.Join(parts, "\n")
	if len(parts) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			text = string(b)
		}
	}
	text = redact(strings.ToValidUTF8(text, "\uFFFD"))
	res := Result{IsError: r.IsError, Bytes: len(text)}
	if len(text) > max {
		shown := engine.CutUTF8(text, max)
		text = shown + fmt.Sprintf("\n[result cut: %d of %d bytes shown]", len(shown), res.Bytes)
		res.Truncated = true
	}
	res.Text = text
	return res
}

// clean makes a server-supplied string valid UTF-8 of at most n bytes.
func clean(s string, n int) string {
	return engine.CutUTF8(strings.ToValidUTF8(s, "\uFFFD"), n)
}

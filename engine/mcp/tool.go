package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"mime"
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

	remote string // the tool's name on the server; "" for read_resource
	c      *conn
	// who is the person a tool of an identity user server acts as;
	// connect marks the tool standing for the server's tools until they
	// have connected their account (see connectTool).
	who     Identity
	connect bool
}

// readResource is the own name of the tool a server with resources gets:
// it reads a resource (resources/read) by its URI, such as one a tool's
// resource link gives.
const readResource = "read_resource"

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
	// Files are the images, audio and binary resources of the result, for
	// people to see or hear; Text says they are there.
	Files []engine.ExternalFile
}

// Call runs the tool with args, a JSON object (empty or null means {}). Whatever goes
// wrong with the server (unreachable, crashed, no answer within the server's
// timeout, a bad answer) is an error Result, and the session is reconnected
// on a later call. The error is non-nil only when ctx ends first (the caller
// gave up) or the Manager is closed.
func (t Tool) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	return t.CallProgress(ctx, args, nil)
}

// CallProgress is Call with a progress token: progress (when not nil) is
// given a status line for each notifications/progress of the call, and
// each gives the call the server's timeout again, up to its max_timeout.
func (t Tool) CallProgress(ctx context.Context, args json.RawMessage, progress func(status string)) (Result, error) {
	if t.c == nil {
		return Result{}, errors.New("mcp: call of a Tool not listed by a Manager")
	}
	var m map[string]any
	if a := bytes.TrimSpace(args); len(a) > 0 && string(a) != "null" {
		if err := json.Unmarshal(a, &m); err != nil || m == nil {
			return t.c.errResult(fmt.Sprintf("tool %s: arguments must be a JSON object", t.remote)), nil
		}
	}
	switch {
	case t.connect:
		return t.c.connectCall(ctx, t.who)
	case t.remote == "":
		return t.c.read(ctx, t.who, m)
	}
	return t.c.call(ctx, t.who, t.remote, m, progress)
}

// read runs the read_resource tool as who: resources/read of the "uri"
// argument.
func (c *conn) read(ctx context.Context, who Identity, args map[string]any) (Result, error) {
	uri, _ := args["uri"].(string)
	if uri == "" {
		return c.errResult(readResource + `: give {"uri": "…"}, the URI of a resource link`), nil
	}
	l := c.use(who)
	defer c.done(l)
	s, err := l.session(ctx)
	if err != nil {
		return l.unusable(ctx, readResource, err)
	}
	rctx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	res, err := s.cs.ReadResource(rctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return c.errResult(fmt.Sprintf("%s %s: %s", readResource, clean(uri, 1000), err)), nil
	}
	out := &sdk.CallToolResult{}
	for _, rc := range res.Contents {
		if rc != nil {
			out.Content = append(out.Content, &sdk.EmbeddedResource{Resource: rc})
		}
	}
	return toResult(out, c.m.opts.MaxResultBytes, c.redact), nil
}

// readTool is the read_resource tool of a server that offers resources.
func (c *conn) readTool() Tool {
	t := Tool{
		Name: toolName(c.srv.Name, readResource), Server: c.srv.Name, ReadOnly: true,
		Description: "Read a resource of the MCP server " + c.srv.Name + " by its URI, such as one of a resource link in a tool's result.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string","description":"the resource's URI"}},"required":["uri"]}`),
		c:           c,
	}
	t.Policy = c.srv.policy(readResource, true)
	return t
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
		if _, task := c.taskOnly.Load(rt.Name); task {
			probs = append(probs, Problem{Server: c.srv.Name, Reason: fmt.Sprintf("tool %q left out: it must be called as an MCP task (execution.taskSupport \"required\"), which agentbot does not do", clean(rt.Name, 80))})
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
// redact has scrubbed the server's secrets from it. Images, audio and
// binary resources become Files; resource links keep their name,
// description and MIME type, and say how to read them.
func toResult(r *sdk.CallToolResult, max int, redact func(string) string) Result {
	var parts []string
	var files []engine.ExternalFile
	for _, c := range r.Content {
		part, file := contentPart(c, len(files))
		if file != nil {
			files = append(files, *file)
		}
		if part != "" {
			parts = append(parts, part)
		}
	}
	text := strings.Join(parts, "\n")
	if len(parts) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			text = string(b)
		}
	}
	text = redact(strings.ToValidUTF8(text, "\uFFFD"))
	res := Result{IsError: r.IsError, Bytes: len(text), Files: files}
	if len(text) > max {
		shown := engine.CutUTF8(text, max)
		text = shown + fmt.Sprintf("\n[result cut: %d of %d bytes shown]", len(shown), res.Bytes)
		res.Truncated = true
	}
	res.Text = text
	return res
}

// contentPart is the text the model reads for one content item, and the
// file people get from it (nil for text). n counts the files so far.
func contentPart(c sdk.Content, n int) (string, *engine.ExternalFile) {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text, nil
	case *sdk.ImageContent:
		return "", &engine.ExternalFile{Name: fmt.Sprintf("image-%d%s", n+1, extOf(c.MIMEType)), MIMEType: clean(c.MIMEType, 100), Data: c.Data}
	case *sdk.AudioContent:
		return "", &engine.ExternalFile{Name: fmt.Sprintf("audio-%d%s", n+1, extOf(c.MIMEType)), MIMEType: clean(c.MIMEType, 100), Data: c.Data}
	case *sdk.ResourceLink:
		return linkText(c), nil
	case *sdk.EmbeddedResource:
		if c.Resource == nil {
			return "", nil
		}
		if c.Resource.Blob == nil {
			return c.Resource.Text, nil
		}
		name := path.Base(c.Resource.URI)
		if name == "." || name == "/" || path.Ext(name) == "" {
			name = fmt.Sprintf("resource-%d%s", n+1, extOf(c.Resource.MIMEType))
		}
		return "", &engine.ExternalFile{Name: name, MIMEType: clean(c.Resource.MIMEType, 100), Data: c.Resource.Blob}
	}
	return "", nil
}

// linkText describes a resource link for the model.
func linkText(l *sdk.ResourceLink) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[resource link %s", clean(l.URI, 1000))
	if l.Name != "" {
		fmt.Fprintf(&b, ", name %q", clean(l.Name, 200))
	}
	if l.Title != "" {
		fmt.Fprintf(&b, ", title %q", clean(l.Title, 200))
	}
	if l.MIMEType != "" {
		fmt.Fprintf(&b, ", %s", clean(l.MIMEType, 100))
	}
	if l.Size != nil {
		fmt.Fprintf(&b, ", %d bytes", *l.Size)
	}
	if l.Description != "" {
		fmt.Fprintf(&b, ": %s", clean(strings.Join(strings.Fields(l.Description), " "), 500))
	}
	b.WriteString("; read it with the server's " + readResource + " tool]")
	return b.String()
}

// extOf is the file extension of a MIME type ("" when unknown).
func extOf(mimeType string) string {
	if exts, err := mime.ExtensionsByType(mimeType); err == nil && len(exts) > 0 {
		for _, e := range exts { // prefer the usual short ones
			if e == ".png" || e == ".jpg" || e == ".wav" || e == ".mp3" || e == ".txt" || e == ".gz" {
				return e
			}
		}
		return exts[0]
	}
	switch mimeType {
	case "audio/wav", "audio/x-wav":
		return ".wav"
	case "audio/mpeg":
		return ".mp3"
	}
	return ""
}

// clean makes a server-supplied string valid UTF-8 of at most n bytes.
func clean(s string, n int) string {
	return engine.CutUTF8(strings.ToValidUTF8(s, "\uFFFD"), n)
}

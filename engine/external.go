package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode"

	"agentbot/engine/argtext"
	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
	"agentbot/engine/window"
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
	// Call runs the tool with the call's arguments (a JSON object) and
	// what the engine gives the call (a progress reporter). A Go error (the
	// caller gave up, the tool's source is closed) becomes an error result
	// too: the model can recover from either.
	Call func(ctx context.Context, args json.RawMessage, call ExternalCall) (ExternalReply, error)
	// NeedsConnection, when set, reports whether the person the turn acts
	// as must first connect their account at Server (MCP authorization
	// per person): a call then waits, like one that asks for approval,
	// with a connect gate (transcript.GateConnect) until they connect,
	// decline or the wait expires.
	NeedsConnection func(ctx context.Context) bool
}

// ExternalCall is what the engine gives a call of an external tool besides
// its arguments.
type ExternalCall struct {
	// Progress reports how the call is going ("step 3 of 5"); the person
	// sees it as the call's status (Slack's task card, the terminal). Never
	// nil.
	Progress func(status string)
	// Ask asks the person the call acts for a Question and waits for
	// their answer (or ctx's end); ErrNobodyToAsk when nobody can be
	// asked. Never nil.
	Ask func(ctx context.Context, q Question) (Answer, error)
	// Sample has the agent's model answer what the tool asks
	// (sampling), once the person the call acts for allows it; its tokens
	// count in the turn. Never nil.
	Sample func(ctx context.Context, req Sampling) (SamplingReply, error)
}

// ExternalReply is what a call of an external tool gives back.
type ExternalReply struct {
	// Text is the result the model reads; IsError marks a failed call.
	Text    string
	IsError bool
	// Files are what the tool returned for people to see or hear (images,
	// audio, binary resources): each is saved as a document of the session
	// under /outputs (shared in Slack, written to disk in the terminal), and
	// the model is told where.
	Files []ExternalFile
}

// ExternalFile is one file a tool returned.
type ExternalFile struct {
	// Name is a file name suggested by the tool's source ("image-1.png");
	// the engine keeps it under /outputs, made unique.
	Name     string
	MIMEType string
	Data     []byte
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

// loadExternal sets the external tools of the turn: all of them by name,
// and the ones offered to the model, in order (see externals.offer); names
// taken by a built-in tool are left out. Notices from the tools' source (a
// server whose tools are unavailable) go to the user as EventNotice.
func (env *toolEnv) loadExternal(ctx context.Context, input string, emit func(Event)) {
	e := env.e
	if e.cfg.ExternalTools == nil {
		return
	}
	byName := map[string]ExternalTool{}
	var order []ExternalTool
	notify := func(text string) { emit(Event{Kind: EventNotice, Text: text}) }
	for _, t := range e.cfg.ExternalTools(ctx, env.s, notify) {
		if t.Name == "" || t.Call == nil {
			continue
		}
		if _, builtin := lookupTool(t.Name); builtin || t.Name == findToolsName {
			e.cfg.Logger.Warn("external tool left out: its name is a built-in tool's", "tool", t.Name, "server", t.Server)
			continue
		}
		if _, dup := byName[t.Name]; dup {
			continue
		}
		byName[t.Name] = t
		order = append(order, t)
	}
	env.ext.byName = byName
	env.ext.list = env.ext.offer(len(e.toolsFor(env.s)), input, env.s, e.cfg.Logger, order)
	for _, t := range env.ext.list {
		if t.Name == findToolsName {
			byName[t.Name] = t
		}
	}
}

// runExternal runs a call of an external tool: its progress becomes the
// call's status, the files it returns are saved as documents, and the
// result is cut to the engine's read cap and made valid UTF-8.
func (env *toolEnv) runExternal(ctx context.Context, t ExternalTool, tc transcript.ToolCall, args string) ToolResult {
	progress := func(status string) {
		if env.emit != nil {
			env.emit(Event{Kind: EventToolStart, Tool: tc.Function.Name, CallID: tc.ID, Status: status})
		}
	}
	reply, err := t.Call(ctx, json.RawMessage(args), ExternalCall{Progress: progress, Ask: env.asker(tc.Function.Name, tc.ID),
		Sample: env.sampler(tc.Function.Name, tc.ID)})
	if err != nil {
		return errResult("tool %s failed: %v", t.Name, err)
	}
	text := strings.ToValidUTF8(reply.Text, "\uFFFD")
	if saved := env.saveFiles(ctx, t, reply.Files); saved != "" {
		text = strings.TrimRight(text+"\n"+saved, "\n")
	}
	cut := false
	if max := int(env.e.cfg.MaxRead); len(text) > max {
		text, cut = CutUTF8(text, max), true
	}
	if reply.IsError {
		if text == "" {
			text = "tool " + t.Name + " failed"
		}
		return ErrorResult{Error: text}
	}
	return ExternalResult{Result: text, Truncated: cut}
}

// saveFiles saves the files a call returned under /outputs and says, one
// line each, where each went (or why not), for the model.
func (env *toolEnv) saveFiles(ctx context.Context, t ExternalTool, files []ExternalFile) string {
	if len(files) == 0 {
		return ""
	}
	env.editMu.Lock() // parallel calls must not pick the same free name
	defer env.editMu.Unlock()
	var b strings.Builder
	for i, f := range files {
		name := fileName(f.Name, t.Server, i)
		p := "/outputs/" + name
		for n := 2; env.sb.Exists(p); n++ { // never overwrite a document
			p = "/outputs/" + strings.TrimSuffix(name, path.Ext(name)) + "-" + strconv.Itoa(n) + path.Ext(name)
		}
		virtual, err := env.sb.WriteFile(p, f.Data)
		if err == nil && env.out != nil {
			_, err = env.out.save(ctx, virtual, f.Data, nil, "")
		}
		if err != nil {
			fmt.Fprintf(&b, "[%s, %s: not saved: %v]\n", f.MIMEType, sandbox.SizeText(int64(len(f.Data))), err)
			continue
		}
		fmt.Fprintf(&b, "[%s, %s: saved to %s and shared with the user]\n", f.MIMEType, sandbox.SizeText(int64(len(f.Data))), virtual)
	}
	return b.String()
}

// fileName is a safe file name for a file a tool returned: its own name's
// letters, digits, dots, dashes and underscores, else server-file-N.
func fileName(name, server string, i int) string {
	clean := strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == '_') {
			return r
		}
		return '-'
	}, path.Base(name))
	clean = strings.Trim(clean, ".-")
	if clean == "" || name == "" {
		clean = fmt.Sprintf("%s-file-%d", server, i+1)
	}
	return CutUTF8(clean, 100)
}

// CutUTF8 cuts s to at most n bytes without splitting a character.
func CutUTF8(s string, n int) string { return argtext.CutUTF8(s, n) }

// DisplayArgs renders a call's arguments for a person asked to approve
// it, in at most about max bytes (see argtext.Render).
func DisplayArgs(args string, max int) string { return argtext.Render(args, max) }

// WireCallID returns the id a stored tool-call id is sent as (see
// window.WireCallID).
func WireCallID(id string) string { return window.WireCallID(id) }

// ArgsDigest is the audit digest of a call's arguments: "sha256:" and the
// hex SHA-256 of the text.
func ArgsDigest(args string) string {
	sum := sha256.Sum256([]byte(args))
	return "sha256:" + hex.EncodeToString(sum[:])
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/cmd/agentbot/admin"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/mcp/mcptest"
	"agentbot/engine/transcript"
)

// toolAgent is a minimal agent file.
const toolAgent = "# Toolie\n\n```xml\n<agent id=\"toolie\" name=\"Toolie\" title=\"Tool user\" icon=\"🔧\">\n" +
	"  <persona><role>Uses tools</role></persona>\n" +
	"  <cmds>\n    <c cmd=\"*help\">Show numbered cmd list</c>\n    <c cmd=\"*exit\">Exit</c>\n  </cmds>\n</agent>\n```\n"

// mcpSecret is the value of the secret the MCP config refers to; it must
// never be printed.
const mcpSecret = "s3cr3t-mcp-value-123"

// mcpVars is the environment of a command with a bundle whose agent
// toolie names the MCP servers local (the stdio test server) and ghost
// (in no config), and an MCP config of extra servers besides local.
func mcpVars(t *testing.T, fm *fakemodel.Server, extra string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"bundles/tools/bundle.yaml":      "type: bundle\nname: tools\nmcp: [local]\nagents:\n  - id: toolie\n    file: agents/toolie.md\n    entry_point: true\n    mcp: [ghost]\n",
		"bundles/tools/agents/toolie.md": toolAgent,
		"mcp.yaml": fmt.Sprintf("servers:\n  - name: local\n    transport: stdio\n    command: %s\n    timeout: 5s\n    env:\n      API_KEY: {env: MCP_SECRET}\n%s",
			mcptest.BuildStdio(t), extra),
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vars := chatVars(t, fm)
	vars["AGENTBOT_BUNDLES"] = filepath.Join(dir, "bundles")
	vars["AGENTBOT_MCP_CONFIG"] = filepath.Join(dir, "mcp.yaml")
	vars["MCP_SECRET"] = mcpSecret
	vars["AGENTBOT_LOG_LEVEL"] = "debug"
	return vars
}

// noteCall is a write_note call (policy ask) whose arguments hold a
// secret-looking value.
func noteCall() fakemodel.ToolCall {
	args, _ := json.Marshal(map[string]string{"text": "remember the milk", "api_token": mcpSecret})
	return fakemodel.ToolCall{ID: "n1", Name: "local__write_note", Arguments: string(args)}
}

// toolResultIn returns the content of the tool result for id in the
// request.
func toolResultIn(t *testing.T, req fakemodel.Request, id string) string {
	t.Helper()
	for _, m := range sentMessages(t, req) {
		if m.Role == transcript.RoleTool && m.ToolCallID == engine.WireCallID(id) {
			return m.Content
		}
	}
	t.Fatalf("no result for %s in request %d", id, req.N)
	return ""
}

// The terminal approves: the call runs, the model gets its result, and the
// session's audit names the approver; no secret is shown anywhere.
func TestChatMCPApproveOnTerminal(t *testing.T) {
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{noteCall()}}, fakemodel.Reply{Text: "Noted."})
	vars := mcpVars(t, fm, "")
	r := runCmd(t, vars, "note this please\ny\n", "chat", "--agent", "toolie", "--session", "notes")
	r.wantCode(t, 0)
	contains(t, "chat", r.stdout, "The agent wants to run local__write_note")
	contains(t, "chat", r.stdout, "Approve? [y/N]")
	contains(t, "chat", r.stdout, `"text": "remember the milk"`)
	contains(t, "chat", r.stdout, `"api_token": "[masked]"`)
	contains(t, "chat", r.stdout, "Noted.")
	lacks(t, "chat stdout", r.stdout, mcpSecret)
	lacks(t, "chat log", r.stderr, mcpSecret)
	lacks(t, "chat log", r.stderr, "remember the milk")
	if fm.Calls() != 2 {
		t.Fatalf("model calls = %d", fm.Calls())
	}
	if got := toolResultIn(t, fm.Requests()[1], "n1"); !strings.Contains(got, "saved") {
		t.Fatalf("write_note result = %s", got)
	}
	// The offered tools are the agent's servers' tools, as server__tool.
	var names []string
	for _, tl := range fm.Requests()[0].Tools {
		names = append(names, tl.Function.Name)
	}
	contains(t, "tools", strings.Join(names, ","), "local__echo")

	show := runCmd(t, vars, "", "sessions", "show", "chat/notes")
	show.wantCode(t, 0)
	contains(t, "sessions show", show.stdout, "1 tool call(s)")
	contains(t, "sessions show", show.stdout, "local__write_note")
	contains(t, "sessions show", show.stdout, "terminal")
	contains(t, "sessions show", show.stdout, "sha256:")
	lacks(t, "sessions show", show.stdout, "remember the milk")
	exp := runCmd(t, vars, "", "sessions", "export", "chat/notes")
	exp.wantCode(t, 0)
	contains(t, "export", exp.stdout, "## Tool calls")
	contains(t, "export", exp.stdout, "| local__write_note | local | n1 | ok | terminal |")
	lacks(t, "export", exp.stdout, mcpSecret)
}

// Anything but y denies: the model gets "denied by terminal".
func TestChatMCPDenyOnTerminal(t *testing.T) {
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{noteCall(), {ID: "e1", Name: "local__echo", Arguments: `{"text":"hi"}`}}},
		fakemodel.Reply{Text: "Fine, not saved."})
	vars := mcpVars(t, fm, "")
	r := runCmd(t, vars, "note this please\nn\n", "chat", "--agent", "toolie")
	r.wantCode(t, 0)
	contains(t, "chat", r.stdout, "Fine, not saved.")
	if got := toolResultIn(t, fm.Requests()[1], "n1"); !strings.Contains(got, "denied by terminal") {
		t.Fatalf("denied result = %s", got)
	}
	if got := toolResultIn(t, fm.Requests()[1], "e1"); !strings.Contains(got, `"result":"hi"`) {
		t.Fatalf("echo result = %s", got)
	}
	// The end of the input denies too.
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{noteCall()}}, fakemodel.Reply{Text: "ok"})
	r = runCmd(t, vars, "again\n", "chat", "--agent", "toolie")
	r.wantCode(t, 0)
	if got := toolResultIn(t, fm.Requests()[3], "n1"); !strings.Contains(got, "denied by terminal") {
		t.Fatalf("denied at EOF = %s", got)
	}
}

// check connects to each server and lists its tools; an unreachable
// server, a missing variable, a bad glob and an invalid tool schema are
// reported, without a secret; an agent naming an unknown server is a
// warning.
func TestCheckMCPServers(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := mcpVars(t, fm, `  - name: down
    transport: http
    url: http://127.0.0.1:1/mcp
    timeout: 2s
    headers:
      Authorization: "Bearer ${MCP_SECRET}"
  - name: nokey
    transport: stdio
    command: /bin/true
    env:
      TOKEN: {env: MCP_MISSING_VAR}
  - name: globby
    transport: stdio
    command: /bin/true
    include: ["[bad"]
`)
	r := runCmd(t, vars, "", "check")
	out := r.stdout
	contains(t, "check", out, "✓ MCP config:")
	contains(t, "check", out, "✓ MCP server local:")
	contains(t, "check", out, "local__echo")
	contains(t, "check", out, "local__write_note")
	contains(t, "check", out, "✗ MCP server down:")
	contains(t, "check", out, "✗ MCP server nokey:")
	contains(t, "check", out, "MCP_MISSING_VAR")
	contains(t, "check", out, "✗ MCP server globby:")
	contains(t, "check", out, "bad_schema")
	contains(t, "check", out, "invalid input schema")
	contains(t, "check", out, `agent toolie: MCP server "ghost": no such server in the MCP config`)
	lacks(t, "check", out+r.stderr, mcpSecret)
	if r.code != 1 {
		t.Fatalf("check exit %d, want 1", r.code)
	}
}

// agents --json shows each agent's servers with their tools and policies;
// an unknown server is a problem entry.
func TestAgentsJSONShowsMCPTools(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := mcpVars(t, fm, "")
	r := runCmd(t, vars, "", "agents", "--json")
	r.wantCode(t, 0)
	var out struct {
		Agents []admin.AgentJSON `json:"agents"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(out.Agents) != 1 || strings.Join(out.Agents[0].MCP, ",") != "local,ghost" || len(out.Agents[0].Tools) != 2 {
		t.Fatalf("agents = %+v", out.Agents)
	}
	local, ghost := out.Agents[0].Tools[0], out.Agents[0].Tools[1]
	policy := map[string]string{}
	for _, tl := range local.Tools {
		policy[tl.Name] = tl.Policy
	}
	if local.Server != "local" || policy["local__echo"] != "auto" || policy["local__write_note"] != "ask" {
		t.Fatalf("local = %+v", local)
	}
	if ghost.Server != "ghost" || len(ghost.Tools) != 0 || !strings.Contains(ghost.Problem, "no such server") {
		t.Fatalf("ghost = %+v", ghost)
	}
}

// A config file that cannot be read or parsed stops chat and serve with
// exit 2 and a clear message; a missing variable only leaves its server
// out, and the chat works.
func TestMCPBadConfig(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := mcpVars(t, fm, "")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("servers: [unclosed\n"), 0o644)
	for _, path := range []string{bad, filepath.Join(t.TempDir(), "missing.yaml")} {
		v := map[string]string{}
		for k, val := range vars {
			v[k] = val
		}
		v["AGENTBOT_MCP_CONFIG"] = path
		r := runCmd(t, v, "hello\n", "chat", "--agent", "toolie")
		r.wantCode(t, 2)
		contains(t, "chat", r.stderr, "MCP config (AGENTBOT_MCP_CONFIG)")
		v["SLACK_BOT_TOKEN"], v["SLACK_APP_TOKEN"] = "xoxb-1-2-abc", "xapp-1-A-1-abc"
		r = runCmd(t, v, "", "serve")
		r.wantCode(t, 2)
		contains(t, "serve", r.stderr, "MCP config (AGENTBOT_MCP_CONFIG)")
	}

	delete(vars, "MCP_SECRET") // local's secret is missing: local is left out
	fm.Enqueue(fakemodel.Reply{Text: "Hello without tools."})
	r := runCmd(t, vars, "hello\n", "chat", "--agent", "toolie")
	r.wantCode(t, 0)
	contains(t, "chat", r.stdout, "Hello without tools.")
	contains(t, "chat log", r.stderr, "MCP_SECRET")
	for _, tl := range fm.Requests()[0].Tools {
		if strings.HasPrefix(tl.Function.Name, "local__") {
			t.Fatalf("a server with a missing variable was offered: %s", tl.Function.Name)
		}
	}
}

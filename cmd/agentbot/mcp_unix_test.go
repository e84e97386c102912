//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"agentbot/engine/fakemodel"
)

// A stdio server lives while chat runs and is stopped when it ends.
func TestChatStopsStdioServer(t *testing.T) {
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "p1", Name: "local__pid", Arguments: `{}`}}}, fakemodel.Reply{Text: "got it"})
	vars := mcpVars(t, fm, "    policy: {pid: auto}\n")
	r := runCmd(t, vars, "which pid?\n", "chat", "--agent", "toolie")
	r.wantCode(t, 0)
	var res struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal([]byte(toolResultIn(t, fm.Requests()[1], "p1")), &res); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Result))
	if err != nil || pid <= 0 {
		t.Fatalf("pid result %q", res.Result)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the stdio server %d still runs after chat ended (kill 0: %v)", pid, err)
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
	"agentbot/engine/mcp/mcptest"
)

// BenchmarkStdioCallOverhead compares the p50 latency of an echo call
// through a Manager Tool with a direct go-sdk ClientSession.CallTool to the
// same stdio server binary; the difference is the Manager's overhead.
func BenchmarkStdioCallOverhead(b *testing.B) {
	bin := mcptest.BuildStdio(b)
	cfg, probs, err := ParseConfig([]byte("servers: [{name: s, transport: stdio, command: "+bin+"}]"), nil)
	if err != nil || len(probs) > 0 {
		b.Fatal(err, probs)
	}
	m := NewManager(cfg, Options{Logger: discardLogger})
	defer m.Close()
	ctx := context.Background()
	list, toolProbs := m.Tools(ctx, []string{"s"})
	var echo Tool
	for _, t := range list {
		if t.Remote() == "echo" {
			echo = t
		}
	}
	if echo.Name == "" {
		b.Fatalf("no echo tool (problems: %v)", toolProbs)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(bin)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	args := json.RawMessage(`{"text":"ping"}`)
	viaManager := make([]time.Duration, 0, b.N)
	direct := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		r, err := echo.Call(ctx, args)
		t1 := time.Now()
		if err != nil || r.IsError || r.Text != "ping" {
			b.Fatalf("manager call: %+v %v", r, err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "ping"}})
		t2 := time.Now()
		if err != nil || res.IsError {
			b.Fatalf("direct call: %v", err)
		}
		viaManager = append(viaManager, t1.Sub(t0))
		direct = append(direct, t2.Sub(t1))
	}
	b.StopTimer()
	pm, pd := p50(viaManager), p50(direct)
	b.ReportMetric(float64(pm.Nanoseconds()), "manager-p50-ns")
	b.ReportMetric(float64(pd.Nanoseconds()), "direct-p50-ns")
	b.ReportMetric(float64((pm - pd).Nanoseconds()), "overhead-p50-ns")
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkTurnListingWithHangingServer is a turn's wait for its tool
// list (SessionTools, as the engine calls it at the start of each turn)
// when one of its two servers hangs: a stdio server that never answers,
// beside a healthy one. Before background listing each turn waited the
// hung server's whole timeout (30s); now it waits the listing budget.
func BenchmarkTurnListingWithHangingServer(b *testing.B) {
	bin := mcptest.BuildStdio(b)
	y := "servers:\n  - {name: ok, transport: stdio, command: " + bin + "}\n" +
		"  - {name: hung, transport: stdio, command: sleep, args: [\"3600\"], timeout: 30s}\n"
	cfg, probs, err := ParseConfig([]byte(y), nil)
	if err != nil || len(probs) > 0 {
		b.Fatal(err, probs)
	}
	m := NewManager(cfg, Options{Logger: discardLogger})
	defer m.Close()
	servers := []string{"hung", "ok"}
	m.Warm(servers)
	if _, probs := m.ToolsWait(context.Background(), []string{"ok"}); len(probs) > 1 {
		b.Fatalf("healthy server: %v", probs)
	}
	ext := m.SessionTools(func(*engine.Session) []string { return servers }, nil)
	s := &engine.Session{}
	s.ID = "bench"
	var worst time.Duration
	for b.Loop() {
		start := time.Now()
		tools := ext(context.Background(), s, nil)
		worst = max(worst, time.Since(start))
		if len(tools) < 5 {
			b.Fatalf("%d tools offered", len(tools))
		}
	}
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}

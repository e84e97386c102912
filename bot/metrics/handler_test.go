package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestHealthz(t *testing.T) {
	var healthErr error
	srv := httptest.NewServer(New().Handler(func(context.Context) error { return healthErr }))
	defer srv.Close()

	code, body := get(t, srv.URL+"/healthz")
	if code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("healthy: %d %q, want 200 \"ok\"", code, body)
	}

	healthErr = errors.New("slack socket mode disconnected")
	code, body = get(t, srv.URL+"/healthz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "slack socket mode disconnected") {
		t.Errorf("unhealthy: %d %q, want 503 with the error", code, body)
	}

	resp, err := http.Post(srv.URL+"/healthz", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: %d, want 405", resp.StatusCode)
	}
	if code, _ := get(t, srv.URL+"/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope: %d, want 404", code)
	}
}

func TestHealthzNilHealthIsHealthy(t *testing.T) {
	srv := httptest.NewServer(New().Handler(nil))
	defer srv.Close()
	if code, _ := get(t, srv.URL+"/healthz"); code != http.StatusOK {
		t.Errorf("nil health: %d, want 200", code)
	}
}

func TestCheckHealthGivesUpOnAHang(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	err := checkHealth(context.Background(), func(context.Context) error { <-release; return nil }, 20*time.Millisecond)
	if !errors.Is(err, errHealthTimeout) {
		t.Errorf("hanging health: %v, want %v", err, errHealthTimeout)
	}
}

func TestMetricsEndpointServesRegistry(t *testing.T) {
	m := New()
	srv := httptest.NewServer(m.Handler(nil))
	defer srv.Close()

	m.EventReceived("app_mention")
	m.TurnStarted()
	m.TurnFinished(2*time.Second, 2, 300, 100, 20, 7, errors.New("boom"))
	m.ToolRecord(builtinCall("preload_workflow", false))
	m.Uploaded(nil)
	m.QueueDepth(5)

	want := `
# HELP agentbot_events_received_total Slack events received, by kind (event type, slash_command, interactive).
# TYPE agentbot_events_received_total counter
agentbot_events_received_total{kind="app_mention"} 1
# HELP agentbot_turns_finished_total Agent turns finished, by result (ok or error; error means the turn failed).
# TYPE agentbot_turns_finished_total counter
agentbot_turns_finished_total{result="error"} 1
agentbot_turns_finished_total{result="ok"} 0
# HELP agentbot_tool_calls_total Tool calls, by MCP server (empty for a built-in tool), tool (its own name) and outcome (ok, error, denied or expired).
# TYPE agentbot_tool_calls_total counter
agentbot_tool_calls_total{outcome="ok",server="",tool="preload_workflow"} 1
# HELP agentbot_queue_depth Inbound messages waiting for their thread's turn.
# TYPE agentbot_queue_depth gauge
agentbot_queue_depth 5
# HELP agentbot_model_calls_total Model calls made by finished turns (one per loop iteration).
# TYPE agentbot_model_calls_total counter
agentbot_model_calls_total 2
`
	if err := testutil.ScrapeAndCompare(srv.URL+"/metrics", strings.NewReader(want),
		"agentbot_events_received_total", "agentbot_turns_finished_total", "agentbot_tool_calls_total",
		"agentbot_queue_depth", "agentbot_model_calls_total"); err != nil {
		t.Error(err)
	}

	code, body := get(t, srv.URL+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, name := range []string{
		"agentbot_events_deduped_total 0",
		"agentbot_turns_started_total 1",
		"agentbot_model_retries_total 0",
		`agentbot_tokens_total{kind="cached"} 100`,
		`agentbot_tokens_total{kind="completion"} 20`,
		`agentbot_tokens_total{kind="reasoning"} 7`,
		`agentbot_tokens_total{kind="prompt"} 300`,
		"agentbot_turn_duration_seconds_count 1",
		`agentbot_uploads_total{result="ok"} 1`,
		`agentbot_uploads_total{result="error"} 0`,
		"go_goroutines ",
		"process_cpu_seconds_total ",
	} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %q", name)
		}
	}
}

func TestMetricsLint(t *testing.T) {
	m := New()
	problems, err := testutil.GatherAndLint(m.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "agentbot_") {
			t.Errorf("lint %s: %s", p.Metric, p.Text)
		}
	}
}

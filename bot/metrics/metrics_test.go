package metrics

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"agentbot/engine/transcript"
)

// value returns the current value of a single-series collector.
func value(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	return testutil.ToFloat64(c)
}

// histogram returns the sample count and sum of h.
func histogram(t *testing.T, h prometheus.Histogram) (uint64, float64) {
	t.Helper()
	var out dto.Metric
	if err := h.Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetHistogram().GetSampleCount(), out.GetHistogram().GetSampleSum()
}

func TestEventsAndTurnsCount(t *testing.T) {
	m := New()
	m.EventReceived("app_mention")
	m.EventReceived("app_mention")
	m.EventReceived("message")
	m.EventDeduped()
	m.TurnStarted()
	m.TurnStarted()
	m.ModelRetry()
	m.QueueDepth(3)

	if got := value(t, m.eventsReceived.WithLabelValues("app_mention")); got != 2 {
		t.Errorf("events_received{app_mention} = %v, want 2", got)
	}
	if got := value(t, m.eventsReceived.WithLabelValues("message")); got != 1 {
		t.Errorf("events_received{message} = %v, want 1", got)
	}
	if got := value(t, m.eventsDeduped); got != 1 {
		t.Errorf("events_deduped = %v, want 1", got)
	}
	if got := value(t, m.turnsStarted); got != 2 {
		t.Errorf("turns_started = %v, want 2", got)
	}
	if got := value(t, m.modelRetries); got != 1 {
		t.Errorf("model_retries = %v, want 1", got)
	}
	if got := value(t, m.queueDepth); got != 3 {
		t.Errorf("queue_depth = %v, want 3", got)
	}
	m.QueueDepth(0)
	if got := value(t, m.queueDepth); got != 0 {
		t.Errorf("queue_depth after QueueDepth(0) = %v, want 0", got)
	}
}

func TestTurnFinishedRecordsResultUsageAndDuration(t *testing.T) {
	m := New()
	m.TurnFinished(1500*time.Millisecond, 3, 1000, 600, 50, nil)
	m.TurnFinished(4*time.Minute, 2, 200, 0, 10, errors.New("model: 500"))

	if got := value(t, m.turnsFinished.WithLabelValues(ResultOK)); got != 1 {
		t.Errorf("turns_finished{ok} = %v, want 1", got)
	}
	if got := value(t, m.turnsFinished.WithLabelValues(ResultError)); got != 1 {
		t.Errorf("turns_finished{error} = %v, want 1", got)
	}
	if got := value(t, m.modelCalls); got != 5 {
		t.Errorf("model_calls = %v, want 5", got)
	}
	for kind, want := range map[string]float64{TokensPrompt: 1200, TokensCached: 600, TokensCompletion: 60} {
		if got := value(t, m.tokens.WithLabelValues(kind)); got != want {
			t.Errorf("tokens{%s} = %v, want %v", kind, got, want)
		}
	}
	// Two observations: 1.5 s lands in le=2, 240 s in le=300.
	want := `
# HELP agentbot_turn_duration_seconds Wall time of finished agent turns.
# TYPE agentbot_turn_duration_seconds histogram
agentbot_turn_duration_seconds_bucket{le="0.5"} 0
agentbot_turn_duration_seconds_bucket{le="1"} 0
agentbot_turn_duration_seconds_bucket{le="2"} 1
agentbot_turn_duration_seconds_bucket{le="5"} 1
agentbot_turn_duration_seconds_bucket{le="10"} 1
agentbot_turn_duration_seconds_bucket{le="20"} 1
agentbot_turn_duration_seconds_bucket{le="30"} 1
agentbot_turn_duration_seconds_bucket{le="60"} 1
agentbot_turn_duration_seconds_bucket{le="120"} 1
agentbot_turn_duration_seconds_bucket{le="180"} 1
agentbot_turn_duration_seconds_bucket{le="300"} 2
agentbot_turn_duration_seconds_bucket{le="450"} 2
agentbot_turn_duration_seconds_bucket{le="600"} 2
agentbot_turn_duration_seconds_bucket{le="+Inf"} 2
agentbot_turn_duration_seconds_sum 241.5
agentbot_turn_duration_seconds_count 2
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want), "agentbot_turn_duration_seconds"); err != nil {
		t.Error(err)
	}
}

func TestTurnFinishedIgnoresNegativeNumbers(t *testing.T) {
	m := New()
	// A counter panics on a negative Add; bad numbers must not crash the bot.
	m.TurnFinished(-time.Second, -1, -5, -5, -5, nil)
	if got := value(t, m.turnsFinished.WithLabelValues(ResultOK)); got != 1 {
		t.Errorf("turns_finished{ok} = %v, want 1", got)
	}
	if got := value(t, m.modelCalls); got != 0 {
		t.Errorf("model_calls = %v, want 0", got)
	}
	if got := value(t, m.tokens.WithLabelValues(TokensPrompt)); got != 0 {
		t.Errorf("tokens{prompt} = %v, want 0", got)
	}
	if n, sum := histogram(t, m.turnDuration); n != 1 || sum != 0 {
		t.Errorf("turn_duration after a negative duration: count %d sum %v, want 1 and 0", n, sum)
	}
	m.QueueDepth(-4)
	if got := value(t, m.queueDepth); got != 0 {
		t.Errorf("queue_depth after QueueDepth(-4) = %v, want 0", got)
	}
}

func TestToolCallsAndUploads(t *testing.T) {
	m := New()
	m.ToolRecord(builtinCall("read_file", false))
	m.ToolRecord(builtinCall("read_file", false))
	m.ToolRecord(builtinCall("read_file", true))
	m.ToolRecord(builtinCall("save_output", true))
	m.Uploaded(nil)
	m.Uploaded(errors.New("upload: rate limited"))
	m.Uploaded(errors.New("upload: too large"))

	for _, c := range []struct {
		tool, result string
		want         float64
	}{
		{"read_file", ResultOK, 2},
		{"read_file", ResultError, 1},
		{"save_output", ResultError, 1},
		{"save_output", ResultOK, 0},
	} {
		if got := value(t, m.toolCalls.WithLabelValues("", c.tool, c.result)); got != c.want {
			t.Errorf("tool_calls{%s,%s} = %v, want %v", c.tool, c.result, got, c.want)
		}
	}
	if got := value(t, m.uploads.WithLabelValues(ResultOK)); got != 1 {
		t.Errorf("uploads{ok} = %v, want 1", got)
	}
	if got := value(t, m.uploads.WithLabelValues(ResultError)); got != 2 {
		t.Errorf("uploads{error} = %v, want 2", got)
	}
}

func TestFreeFormLabelsAreBounded(t *testing.T) {
	m := New()
	// Invalid UTF-8 makes the Prometheus client panic; it must be cleaned.
	m.ToolRecord(builtinCall("bad\xff\xfename", true))
	m.ToolRecord(builtinCall("", false))
	m.EventReceived(strings.Repeat("k", 500))
	if got := value(t, m.toolCalls.WithLabelValues("", "bad?name", ResultError)); got != 1 {
		t.Errorf("tool_calls{bad?name} = %v, want 1", got)
	}
	if got := value(t, m.toolCalls.WithLabelValues("", labelUnknown, ResultOK)); got != 1 {
		t.Errorf("tool_calls{unknown} = %v, want 1", got)
	}
	if got := value(t, m.eventsReceived.WithLabelValues(strings.Repeat("k", maxLabelLen))); got != 1 {
		t.Errorf("long kind not cut to %d bytes", maxLabelLen)
	}

	// A model inventing tool names cannot grow the series without bound.
	for i := range maxLabelValues * 2 {
		m.ToolRecord(builtinCall("tool_"+strings.Repeat("x", i%60)+string(rune('a'+i%26))+string(rune('a'+i/26)), false))
	}
	if n := testutil.CollectAndCount(m.toolCalls); n > 2*maxLabelValues+2 {
		t.Errorf("tool_calls has %d series, want at most %d", n, 2*maxLabelValues+2)
	}
	if got := value(t, m.toolCalls.WithLabelValues("", labelOther, ResultOK)); got == 0 {
		t.Error(`tool names past the bound were not counted under "other"`)
	}
}

func TestNilMetricsIsANoOp(t *testing.T) {
	var m *Metrics
	m.EventReceived("message")
	m.EventDeduped()
	m.TurnStarted()
	m.TurnFinished(time.Second, 1, 1, 1, 1, nil)
	m.ModelRetry()
	m.ToolRecord(builtinCall("read_file", false))
	m.Uploaded(nil)
	m.QueueDepth(1)
	if m.Registry() != nil {
		t.Error("nil Metrics has a registry")
	}
}

func TestConcurrentUse(t *testing.T) {
	m := New()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				m.EventReceived("message")
				m.ToolRecord(builtinCall("read_file", false))
				m.TurnFinished(time.Second, 1, 10, 5, 1, nil)
				m.QueueDepth(2)
			}
		})
	}
	wg.Wait()
	if got := value(t, m.eventsReceived.WithLabelValues("message")); got != 800 {
		t.Errorf("events_received = %v, want 800", got)
	}
	if got := value(t, m.tokens.WithLabelValues(TokensPrompt)); got != 8000 {
		t.Errorf("tokens{prompt} = %v, want 8000", got)
	}
}

func TestNewRegistriesAreIndependent(t *testing.T) {
	a, b := New(), New()
	a.TurnStarted()
	if got := value(t, b.turnsStarted); got != 0 {
		t.Errorf("second Metrics saw the first's turn: %v", got)
	}
}

func TestToolOutcomesAndApprovals(t *testing.T) {
	m := New()
	m.ToolOutcome("notes", "write_note", OutcomeOK)
	m.ToolOutcome("notes", "write_note", OutcomeDenied)
	m.ToolOutcome("notes", "write_note", OutcomeDenied)
	m.ToolOutcome("", "read_file", OutcomeError)
	m.ToolOutcome("notes", "echo", "weird")
	m.ApprovalDecided(DecisionApproved)
	m.ApprovalDecided(DecisionExpired)
	m.ApprovalDecided("maybe")
	for _, c := range []struct {
		server, tool, outcome string
		want                  float64
	}{
		{"notes", "write_note", OutcomeOK, 1},
		{"notes", "write_note", OutcomeDenied, 2},
		{"", "read_file", OutcomeError, 1},
		{"notes", "echo", labelOther, 1},
	} {
		if got := value(t, m.toolCalls.WithLabelValues(c.server, c.tool, c.outcome)); got != c.want {
			t.Errorf("tool_calls{%s,%s,%s} = %v, want %v", c.server, c.tool, c.outcome, got, c.want)
		}
	}
	for d, want := range map[string]float64{DecisionApproved: 1, DecisionDenied: 0, DecisionExpired: 1, labelOther: 1} {
		if got := value(t, m.approvals.WithLabelValues(d)); got != want {
			t.Errorf("approvals{%s} = %v, want %v", d, got, want)
		}
	}
	// Server and tool names past the bound count as "other".
	for i := range maxLabelValues + 5 {
		m.ToolOutcome("srv", strings.Repeat("t", 1+i%50)+string(rune('a'+i%26))+string(rune('a'+i/26%26)), OutcomeOK)
	}
	if got := value(t, m.toolCalls.WithLabelValues("other", labelOther, OutcomeOK)); got == 0 {
		t.Error("tool names past the bound were not counted under other")
	}
}

// An MCP tool's record counts under its server, with the tool's own name
// (without the "server__" prefix), and its outcome, denied included.
func TestToolRecordOfMCPTools(t *testing.T) {
	m := New()
	m.ToolRecord(transcript.ToolRecord{Tool: "notes__write_note", Server: "notes", Outcome: transcript.OutcomeDenied})
	m.ToolRecord(transcript.ToolRecord{Tool: "notes__write_note", Server: "notes", Outcome: transcript.OutcomeOK})
	if got := value(t, m.toolCalls.WithLabelValues("notes", "write_note", OutcomeDenied)); got != 1 {
		t.Fatalf("notes/write_note/denied = %v, want 1", got)
	}
	if n := testutil.CollectAndCount(m.toolCalls); n != 2 {
		t.Fatalf("%d series, want 2 (ok and denied of notes/write_note)", n)
	}
}

// builtinCall is the audit record of a call of a built-in tool.
func builtinCall(tool string, failed bool) transcript.ToolRecord {
	outcome := transcript.OutcomeOK
	if failed {
		outcome = transcript.OutcomeError
	}
	return transcript.ToolRecord{Tool: tool, Outcome: outcome}
}

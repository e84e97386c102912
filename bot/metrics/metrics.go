// Package metrics holds agentbot's Prometheus metrics and serves them, with
// a health check, over HTTP (/metrics and /healthz).
//
// Metrics uses its own registry, never the global one, so every Metrics (and
// every test) counts on its own. Its methods are cheap, safe for concurrent
// use and no-ops on a nil *Metrics, so callers may hold a nil one when
// metrics are off.
package metrics

import (
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"agentbot/engine/transcript"
)

// Label values of result labels.
const (
	ResultOK    = "ok"
	ResultError = "error"
)

// Token kinds, the values of agentbot_tokens_total's kind label.
const (
	TokensPrompt     = "prompt"
	TokensCached     = "cached"
	TokensCompletion = "completion"
)

// TurnBuckets are the bounds, in seconds, of agentbot_turn_duration_seconds:
// an LLM turn takes from half a second (a short answer) to minutes (a
// workflow step with many tool calls), and turns time out at 15 minutes by
// default.
var TurnBuckets = []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 180, 300, 450, 600}

// maxLabelValues bounds the distinct values of a free-form label (event
// kind, tool name); later values are counted under "other".
const maxLabelValues = 64

// Metrics is agentbot's set of metrics on a private registry.
type Metrics struct {
	reg *prometheus.Registry

	eventsReceived *prometheus.CounterVec
	eventsDeduped  prometheus.Counter
	turnsStarted   prometheus.Counter
	turnsFinished  *prometheus.CounterVec
	modelCalls     prometheus.Counter
	modelRetries   prometheus.Counter
	toolCalls      *prometheus.CounterVec
	tokens         *prometheus.CounterVec
	turnDuration   prometheus.Histogram
	uploads        *prometheus.CounterVec
	queueDepth     prometheus.Gauge
	feedback       *prometheus.CounterVec
	approvals      *prometheus.CounterVec

	kinds, tools      *labelSet
	agents, workflows *labelSet
}

// New returns Metrics registered on a new private registry, together with
// the Go runtime and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		eventsReceived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbot_events_received_total",
			Help: "Slack events received, by kind (event type, slash_command, interactive).",
		}, []string{"kind"}),
		eventsDeduped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentbot_events_deduped_total",
			Help: "Slack events dropped as duplicates (redelivered or seen under another event).",
		}),
		turnsStarted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentbot_turns_started_total",
			Help: "Agent turns started.",
		}),
		turnsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbot_turns_finished_total",
			Help: "Agent turns finished, by result (ok or error; error means the turn failed).",
		}, []string{"result"}),
		modelCalls: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentbot_model_calls_total",
			Help: "Model calls made by finished turns (one per loop iteration).",
		}),
		modelRetries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentbot_model_retries_total",
			Help: "Model call attempts retried after a transient failure.",
		}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbot_tool_calls_total",
			Help: "Tool calls, by MCP server (empty for a built-in tool), tool (its own name) and outcome (ok, error, denied or expired).",
		}, []string{"server", "tool", "outcome"}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbot_tool_approvals_total",
			Help: "Decisions on tool calls that needed approval, by decision (approved, denied or expired).",
		}, []string{"decision"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbot_tokens_total",
			Help: "Model tokens used by finished turns, by kind: prompt, cached (the part of prompt served from the provider's cache) and completion.",
		}, []string{"kind"}),
		turnDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "agentbot_turn_duration_seconds",
			Help:    "Wall time of finished agent turns.",
			Buckets: TurnBuckets,
		}),
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbot_uploads_total",
			Help: "Output files uploaded to Slack, by result (ok or error).",
		}, []string{"result"}),
		queueDepth: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentbot_queue_depth",
			Help: "Inbound messages waiting for their thread's turn.",
		}),
		feedback: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentbot_feedback_total",
			Help: "Feedback button clicks on agents' answers, by agent, workflow (the active skill or the last menu item picked; empty when none) and value (positive or negative).",
		}, []string{"agent", "workflow", "value"}),
		kinds:     newLabelSet(maxLabelValues),
		tools:     newLabelSet(maxLabelValues),
		agents:    newLabelSet(maxLabelValues),
		workflows: newLabelSet(maxLabelValues),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.eventsReceived, m.eventsDeduped, m.turnsStarted, m.turnsFinished,
		m.modelCalls, m.modelRetries, m.toolCalls, m.tokens, m.turnDuration,
		m.uploads, m.queueDepth, m.feedback, m.approvals,
	)
	// Show the fixed label values at zero from the start, so rate() and
	// alerts work before the first failure.
	for _, r := range []string{ResultOK, ResultError} {
		m.turnsFinished.WithLabelValues(r)
		m.uploads.WithLabelValues(r)
	}
	for _, d := range []string{DecisionApproved, DecisionDenied, DecisionExpired} {
		m.approvals.WithLabelValues(d)
	}
	for _, k := range []string{TokensPrompt, TokensCached, TokensCompletion} {
		m.tokens.WithLabelValues(k)
	}
	return m
}

// Registry returns the private registry, for callers that add their own
// collectors or gather directly.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// EventReceived counts one Slack event of the given kind.
func (m *Metrics) EventReceived(kind string) {
	if m == nil {
		return
	}
	m.eventsReceived.WithLabelValues(m.kinds.value(kind)).Inc()
}

// EventDeduped counts one event dropped as a duplicate.
func (m *Metrics) EventDeduped() {
	if m == nil {
		return
	}
	m.eventsDeduped.Inc()
}

// TurnStarted counts one turn started.
func (m *Metrics) TurnStarted() {
	if m == nil {
		return
	}
	m.turnsStarted.Inc()
}

// TurnFinished records one finished turn: its duration, its model calls
// (iterations), its token usage and whether it failed (err != nil).
// Negative numbers are ignored.
func (m *Metrics) TurnFinished(d time.Duration, iterations int, prompt, cached, completion int, err error) {
	if m == nil {
		return
	}
	m.turnsFinished.WithLabelValues(result(err != nil)).Inc()
	m.turnDuration.Observe(max(d, 0).Seconds())
	addCount(m.modelCalls, iterations)
	addCount(m.tokens.WithLabelValues(TokensPrompt), prompt)
	addCount(m.tokens.WithLabelValues(TokensCached), cached)
	addCount(m.tokens.WithLabelValues(TokensCompletion), completion)
}

// ModelRetry counts one retried model call attempt.
func (m *Metrics) ModelRetry() {
	if m == nil {
		return
	}
	m.modelRetries.Inc()
}

// ToolRecord counts one tool call from its audit record (the engine's
// OnToolRecord hook): built-in tools and MCP tools, with their server and
// outcome (ToolOutcome).
func (m *Metrics) ToolRecord(rec transcript.ToolRecord) {
	m.ToolOutcome(rec.Server, strings.TrimPrefix(rec.Tool, rec.Server+"__"), rec.Outcome)
}

// Outcomes of a tool call (agentbot_tool_calls_total's outcome label) and
// decisions on a call that needed approval: the values the session's
// audit trail records (transcript), so the two never drift apart.
const (
	OutcomeOK        = transcript.OutcomeOK
	OutcomeError     = transcript.OutcomeError
	OutcomeDenied    = transcript.OutcomeDenied
	OutcomeExpired   = transcript.OutcomeExpired
	DecisionApproved = transcript.DecisionApproved
	DecisionDenied   = transcript.DecisionDenied
	DecisionExpired  = transcript.DecisionExpired
)

// ToolOutcome counts one tool call: server is the MCP server ("" for a
// built-in tool), tool the tool's name as configured, outcome ok, error,
// denied or expired (anything else counts as "other"). Server and tool
// names are bounded: past maxLabelValues distinct pairs, new ones count as
// "other".
func (m *Metrics) ToolOutcome(server, tool, outcome string) {
	if m == nil {
		return
	}
	switch outcome {
	case OutcomeOK, OutcomeError, OutcomeDenied, OutcomeExpired:
	default:
		outcome = labelOther
	}
	srv, name := "", labelOther
	if v := m.tools.value(server + "\x00" + tool); v != labelOther {
		name = clean(tool)
		if server != "" {
			srv = clean(server)
		}
	} else if server != "" {
		srv = labelOther
	}
	m.toolCalls.WithLabelValues(srv, name, outcome).Inc()
}

// ApprovalDecided counts one decision on a tool call that needed approval
// (approved, denied or expired; anything else counts as "other").
func (m *Metrics) ApprovalDecided(decision string) {
	if m == nil {
		return
	}
	switch decision {
	case DecisionApproved, DecisionDenied, DecisionExpired:
	default:
		decision = labelOther
	}
	m.approvals.WithLabelValues(decision).Inc()
}

// Uploaded counts one output upload; err != nil means it failed.
func (m *Metrics) Uploaded(err error) {
	if m == nil {
		return
	}
	m.uploads.WithLabelValues(result(err != nil)).Inc()
}

// QueueDepth sets the number of inbound messages waiting (negative: 0).
func (m *Metrics) QueueDepth(n int) {
	if m == nil {
		return
	}
	m.queueDepth.Set(float64(max(n, 0)))
}

// Values of agentbot_feedback_total's value label.
const (
	FeedbackPositive = "positive"
	FeedbackNegative = "negative"
)

// Feedback counts one feedback click on an answer of agent, in workflow
// ("" when none), with value positive or negative (anything else counts as
// "other").
func (m *Metrics) Feedback(agent, workflow, value string) {
	if m == nil {
		return
	}
	if value != FeedbackPositive && value != FeedbackNegative {
		value = labelOther
	}
	wf := ""
	if workflow != "" {
		wf = m.workflows.value(workflow)
	}
	m.feedback.WithLabelValues(m.agents.value(agent), wf, value).Inc()
}

// result is the result label value for a failure flag.
func result(failed bool) string {
	if failed {
		return ResultError
	}
	return ResultOK
}

// addCount adds n to c when n is positive (a counter panics on negatives).
func addCount(c prometheus.Counter, n int) {
	if n > 0 {
		c.Add(float64(n))
	}
}

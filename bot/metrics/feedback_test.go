package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestFeedbackCounted(t *testing.T) {
	m := New()
	m.Feedback("product-lead", "brief", FeedbackPositive)
	m.Feedback("product-lead", "brief", FeedbackPositive)
	m.Feedback("product-lead", "", FeedbackNegative)
	m.Feedback("retro-coach", "", "meh")
	var nilM *Metrics
	nilM.Feedback("x", "y", FeedbackPositive) // a nil Metrics is a no-op

	want := `
# HELP agentbot_feedback_total Feedback button clicks on agents' answers, by agent, workflow (the active skill or the last menu item picked; empty when none) and value (positive or negative).
# TYPE agentbot_feedback_total counter
agentbot_feedback_total{agent="product-lead",value="negative",workflow=""} 1
agentbot_feedback_total{agent="product-lead",value="positive",workflow="brief"} 2
agentbot_feedback_total{agent="retro-coach",value="other",workflow=""} 1
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want), "agentbot_feedback_total"); err != nil {
		t.Error(err)
	}
}

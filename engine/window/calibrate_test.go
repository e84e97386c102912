package window

import (
	"testing"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"
)

// Calibration learns within bounds, is not switched off by replies without
// usage, and does not learn from a provider that cut the prompt.
func TestCalibrate(t *testing.T) {
	s := &transcript.Session{}
	if Calibrate(s, 10000, 0) || s.TokenRatio != 0 {
		t.Fatalf("no usage changed the ratio to %v", s.TokenRatio)
	}
	Calibrate(s, 10000, 12000)
	if s.TokenRatio != 1.2 {
		t.Fatalf("ratio %v, want 1.2", s.TokenRatio)
	}
	Calibrate(s, 10000, 0)
	if s.TokenRatio != 1.2 {
		t.Fatalf("a reply without usage moved the ratio to %v", s.TokenRatio)
	}
	Calibrate(s, 100, 100000) // absurd: clamped at 4 before smoothing
	if s.TokenRatio > 0.7*1.2+0.3*4+1e-9 {
		t.Fatalf("ratio %v past the bound", s.TokenRatio)
	}
	before := s.TokenRatio
	if !Calibrate(s, 20000, 2050) || s.TokenRatio != before {
		t.Fatalf("a cut prompt (Ollama keeping half of 4096) was learned: %v", s.TokenRatio)
	}
	for _, tc := range []struct {
		est, rep int
		want     bool
	}{{20000, 2050, true}, {20000, 15000, false}, {1000, 100, false}, {20000, 0, false}} {
		if got := llm.PromptTruncated(tc.est, tc.rep); got != tc.want {
			t.Errorf("PromptTruncated(%d, %d) = %v", tc.est, tc.rep, got)
		}
	}
}

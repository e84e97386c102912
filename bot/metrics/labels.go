package metrics

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Label values for free-form labels that are not usable as is.
const (
	labelUnknown = "unknown" // empty value
	labelOther   = "other"   // past the cardinality bound
)

// maxLabelLen bounds the length of a free-form label value, in bytes.
const maxLabelLen = 64

// labelSet bounds the distinct values of a free-form label (a tool name
// comes from the model and may be anything): the first max values are kept,
// later new ones become "other". Values are made valid UTF-8 (the Prometheus
// client panics on invalid UTF-8) and cut to maxLabelLen bytes.
type labelSet struct {
	mu   sync.RWMutex
	max  int
	seen map[string]struct{}
}

func newLabelSet(max int) *labelSet {
	return &labelSet{max: max, seen: make(map[string]struct{})}
}

// value returns the label value to use for v.
func (s *labelSet) value(v string) string {
	v = clean(v)
	s.mu.RLock()
	_, ok := s.seen[v]
	s.mu.RUnlock()
	if ok {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[v]; ok {
		return v
	}
	if len(s.seen) >= s.max {
		return labelOther
	}
	s.seen[v] = struct{}{}
	return v
}

// clean makes v a short, valid UTF-8 label value.
func clean(v string) string {
	v = strings.TrimSpace(strings.ToValidUTF8(v, "?"))
	if len(v) > maxLabelLen {
		cut := maxLabelLen
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut]
	}
	if v == "" {
		return labelUnknown
	}
	return v
}

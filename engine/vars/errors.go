package vars

import (
	"errors"
	"fmt"
	"strings"
)

// maxKnownListed caps how many known names an UnknownError lists.
const maxKnownListed = 30

// Error reads like "unknown variable {foo}; known: core-root, date, …".
func (e *UnknownError) Error() string {
	var b strings.Builder
	b.WriteString("unknown variable {")
	b.WriteString(e.Name)
	b.WriteString("}; ")
	if len(e.Known) == 0 {
		b.WriteString("no variables are defined")
		return b.String()
	}
	b.WriteString("known: ")
	for i, k := range e.Known {
		if i == maxKnownListed {
			fmt.Fprintf(&b, ", … (%d more)", len(e.Known)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
	}
	return b.String()
}

// CycleError reports variables whose values refer to each other in a loop.
// Cycle starts and ends with the same name, e.g. [a b a].
type CycleError struct {
	Cycle []string
}

// Error reads like "variable cycle: {a} -> {b} -> {a}".
func (e *CycleError) Error() string {
	var b strings.Builder
	b.WriteString("variable cycle: ")
	for i, n := range e.Cycle {
		if i > 0 {
			b.WriteString(" -> ")
		}
		b.WriteString("{" + n + "}")
	}
	return b.String()
}

// Limits that keep expansion bounded whatever the input.
const (
	// MaxDepth is how deeply values may refer to values that refer to
	// values.
	MaxDepth = 64
	// MaxOutput caps the bytes substituted for variables in one call of
	// Expand, ExpandPartial or ResolveWorkflow.
	MaxOutput = 1 << 20
)

var (
	// ErrTooDeep is wrapped by errors for values nested beyond MaxDepth.
	ErrTooDeep = errors.New("variables nested too deeply")
	// ErrTooLarge is wrapped by errors for expansions beyond MaxOutput.
	ErrTooLarge = errors.New("expanded value too large")
)

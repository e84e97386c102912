package flagargs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Range is one setting's allowed range, checked after flags and the
// environment are applied to a configuration of type C: Bad returns the
// value as shown, the form wanted, and whether the value is out of range.
type Range[C any] struct {
	Flag, Env string
	Bad       func(c *C) (value string, want string, bad bool)
}

// Positive checks a duration that must be above zero.
func Positive[C any](flag, env string, get func(c *C) time.Duration) Range[C] {
	return Range[C]{flag, env, func(c *C) (string, string, bool) {
		d := get(c)
		return d.String(), "a duration above zero, such as 15m", d <= 0
	}}
}

// Between checks an integer range.
func Between[C any](flag, env string, lo, hi int64, get func(c *C) int64) Range[C] {
	return Range[C]{flag, env, func(c *C) (string, string, bool) {
		n := get(c)
		return strconv.FormatInt(n, 10), fmt.Sprintf("a whole number from %d to %d", lo, hi), n < lo || n > hi
	}}
}

// OneOf checks an enumeration (case does not matter).
func OneOf[C any](flag, env string, get func(c *C) string, values ...string) Range[C] {
	return Range[C]{flag, env, func(c *C) (string, string, bool) {
		v := get(c)
		return strconv.Quote(v), "one of " + strings.Join(values, ", "), !slices.Contains(values, strings.ToLower(v))
	}}
}

// Validate checks the range of every setting in use (all when use is
// nil); the error names the flag, its environment variable, the value
// and the expected form.
func Validate[C any](c *C, ranges []Range[C], use map[string]bool) error {
	for _, r := range ranges {
		if use != nil && !use[r.Flag] {
			continue
		}
		if v, want, bad := r.Bad(c); bad {
			return fmt.Errorf("--%s ($%s) = %s: want %s", r.Flag, r.Env, v, want)
		}
	}
	return nil
}

package custom

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// fuzzSeeds are TOML documents for both fuzz targets.
var fuzzSeeds = []string{
	"",
	teamFile,
	userFile,
	"[agent]\nicon = \"📋\"\nprinciples = [\"a\", \"b\"]\n[[agent.menu]]\ncode = \"CE\"\nskill = \"x\"\n",
	"[[agent.menu]]\ncode = 3\n",
	"[[agent.menu]]\ndescription = \"no code\"\n",
	"agent = \"plain\"\n",
	"[agent.icon]\nglyph = \"x\"\n",
	"a = [[1, 2], [\"x\"], [{id = \"i\"}]]\nb = nan\nc = -inf\nd = 1979-05-27T07:32:00Z\ne = 07:32:00\n",
	"[[t]]\nid = \"a\"\n[[t]]\nid = \"a\"\nx = 1\n",
	"= \"no key\"\n",
}

func FuzzMerge(f *testing.F) {
	for i, a := range fuzzSeeds {
		f.Add(a, fuzzSeeds[(i+1)%len(fuzzSeeds)])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ta, ea := parse([]byte(a))
		tb, eb := parse([]byte(b))
		if ea != nil || eb != nil {
			return
		}
		snapA, snapB := deepCopy(ta).(Table), deepCopy(tb).(Table)
		got, err := Merge(ta, tb)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("merge error %T %v is not an *Error", err, err)
			}
		} else if _, ok := got.(Table); !ok {
			t.Fatalf("merging two tables gave %T", got)
		}
		if !equal(ta, snapA) || !equal(tb, snapB) {
			t.Fatal("Merge changed its inputs")
		}
		for _, side := range []struct {
			name      string
			base, ovr Table
			want      Table
		}{
			{"empty base", Table{}, ta, snapA},
			{"empty override", ta, Table{}, snapA},
		} {
			got, err := Merge(side.base, side.ovr)
			if err != nil {
				t.Fatalf("%s: %v", side.name, err)
			}
			if !equal(got, side.want) {
				t.Fatalf("%s: got %s, want %s", side.name, Text(got), Text(side.want))
			}
		}
		layered, lerr := MergeLayers(ta, tb)
		if (lerr == nil) != (err == nil) || (err == nil && !equal(layered, got)) {
			t.Fatalf("MergeLayers(a, b) = %v, %v; Merge(a, b) = %v, %v", Text(layered), lerr, Text(got), err)
		}
		_ = Text(got)
	})
}

func FuzzLoad(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("\xef\xbb\xbfa = 1\n"))
	f.Add([]byte("a = \"\xff\"\n"))
	f.Add([]byte("a = [[[[[[[[[[1]]]]]]]]]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "layer.toml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := LoadFile(path, true)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Path != path {
				t.Fatalf("error %T %v is not an *Error naming the file", err, err)
			}
			if e.Line < 0 || e.Line > 1+len(data) {
				t.Fatalf("line %d out of range", e.Line)
			}
			if got != nil {
				t.Fatal("a table came with the error")
			}
			return
		}
		if got == nil {
			t.Fatal("nil table without an error")
		}
		checkTypes(t, got)
		_ = Text(got)
	})
}

// checkTypes fails on a value outside Table's documented types.
func checkTypes(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
	case string, int64, float64, bool, time.Time:
	case []any:
		for _, e := range x {
			checkTypes(t, e)
		}
	case map[string]any:
		for _, e := range x {
			checkTypes(t, e)
		}
	default:
		t.Fatalf("unexpected type %T", v)
	}
}

// deepCopy copies tables and arrays.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// equal is reflect.DeepEqual with NaN equal to NaN.
func equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !equal(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && (x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y))
	}
	return reflect.DeepEqual(a, b)
}

package custom

import (
	"reflect"
	"testing"
)

// Flatten names every value by its dotted path, nested tables too, and
// renders it with Text; Strings reads arrays as trimmed non-empty strings.
func TestFlattenAndStrings(t *testing.T) {
	tbl := Table{
		"icon":  "📋",
		"n":     int64(3),
		"list":  []any{" a ", "", int64(2), true},
		"inner": map[string]any{"x": "y", "deep": map[string]any{"z": 1.5}},
		"menu":  []any{map[string]any{"code": "PRD", "skill": "bmad-prd"}},
	}
	out := map[string]string{}
	Flatten("agent", tbl, out)
	want := map[string]string{
		"agent.icon":         "📋",
		"agent.n":            "3",
		"agent.list":         `[" a ","",2,true]`,
		"agent.inner":        `{"deep":{"z":1.5},"x":"y"}`,
		"agent.inner.x":      "y",
		"agent.inner.deep":   `{"z":1.5}`,
		"agent.inner.deep.z": "1.5",
		"agent.menu":         `[{"code":"PRD","skill":"bmad-prd"}]`,
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("Flatten = %#v\nwant %#v", out, want)
	}
	if got := Strings(tbl["list"]); !reflect.DeepEqual(got, []string{"a", "2", "true"}) {
		t.Fatalf("Strings = %q", got)
	}
	if got := Strings("not an array"); len(got) != 0 {
		t.Fatalf("Strings of a string = %q", got)
	}
}

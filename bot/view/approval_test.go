package view

import (
	"encoding/json"
	"strings"
	"testing"
)

// noteArgs are a call's arguments with secrets at several depths.
const noteArgs = `{"text":"hello","api_key":"sk-SECRET-4242","nested":{"Authorization":"Bearer tok-SECRET-77","list":[{"password":"pw-SECRET-9"}]}}`

// MaskArgs masks secret-looking keys at any depth, case-insensitively,
// and cuts long values with their size (engine.DisplayArgs).
func TestMaskArgs(t *testing.T) {
	got := MaskArgs(noteArgs)
	if strings.Contains(got, "SECRET") {
		t.Errorf("masked args: %q shows a secret", got)
	}
	for _, want := range []string{`"api_key": "[masked]"`, `"Authorization": "[masked]"`, `"password": "[masked]"`, `"text": "hello"`} {
		if !strings.Contains(got, want) {
			t.Errorf("masked args: %q lacks %q", got, want)
		}
	}
	long := MaskArgs(`{"text":"` + strings.Repeat("x", 10000) + `"}`)
	if len(long) > 3000 || !strings.Contains(long, "9.8 KiB in all") {
		t.Fatalf("long args not cut: %d bytes", len(long))
	}
	if bad := MaskArgs(`{"token": "abc`); strings.Contains(bad, "abc") {
		t.Fatalf("invalid JSON shown: %q", bad)
	}
	if fence := MaskArgs(`{"text":"a` + "```" + `b"}`); strings.Contains(fence, "```") {
		t.Fatalf("a fence in a value is kept: %q", fence)
	}
	var v any
	if err := json.Unmarshal([]byte(MaskArgs(`{"a":[1,{"cookie":{"x":1}}]}`)), &v); err != nil {
		t.Fatalf("masked args are not JSON: %v", err)
	}
}

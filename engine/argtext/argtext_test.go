package argtext_test

import (
	"encoding/json"
	"strings"
	"testing"

	"agentbot/engine/argtext"
)

// Secrets are masked by the key's exact name or suffix, in any spelling,
// never by a substring; credential-looking strings are masked whatever
// their key.
func TestDisplayArgsMasksByNameOrSuffix(t *testing.T) {
	got := argtext.Render(`{"path":"a.md","API_Key":"k1","nested":{"Authorization":"x1","list":["Bearer abc","plain"]},
		"cookie":[1,2],"n":3,"accessToken":"t1","X-Api-Key":"k2","db_password":"p1","client_secret":{"v":"s1"},
		"keywords":["go","slack"],"sort_key":"name","monkey":"banana","max_tokens":100,"author":"ann"}`, 0)
	for _, want := range []string{`"path": "a.md"`, `"API_Key": "[masked]"`, `"Authorization": "[masked]"`,
		`"plain"`, `"n": 3`, `"keywords": [`, `"slack"`, `"sort_key": "name"`, `"monkey": "banana"`,
		`"max_tokens": 100`, `"author": "ann"`} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %s:\n%s", want, got)
		}
	}
	for _, bad := range []string{"k1", "k2", "x1", "t1", "p1", "s1", "Bearer abc", "1,"} {
		if strings.Contains(got, bad) {
			t.Errorf("shows %q:\n%s", bad, got)
		}
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if got := argtext.Render("password=hunter2", 0); strings.Contains(got, "hunter2") || !strings.Contains(got, "not JSON") {
		t.Errorf("non-JSON arguments shown: %s", got)
	}
}

// A write_file with 100 KB of content shows its path first and in full,
// the content cut with its size, and stays within the cap; an edit_file's
// edits are cut one by one.
func TestDisplayArgsShowsWhereFirstAndCutsLongValues(t *testing.T) {
	content := strings.Repeat("lorem ipsum ", 100<<10/12)
	args, _ := json.Marshal(map[string]any{"content": content, "path": "/data/notes/plan.md", "mode": "w"})
	got := argtext.Render(string(args), 2500)
	if len(got) > 2500+100 {
		t.Fatalf("%d bytes, over the cap", len(got))
	}
	if !strings.HasPrefix(got, "{\n  \"path\": \"/data/notes/plan.md\",") {
		t.Fatalf("path is not first:\n%s", got)
	}
	if !strings.Contains(got, `"mode": "w"`) || !strings.Contains(got, "KiB in all") {
		t.Fatalf("short value or size missing:\n%s", got)
	}
	edits := `{"edits":[{"oldText":"` + strings.Repeat("a", 5000) + `","newText":"b"}],"filePath":"x/y.go","dryRun":false}`
	got = argtext.Render(edits, 2500)
	if !strings.HasPrefix(got, "{\n  \"filePath\": \"x/y.go\"") || !strings.Contains(got, `"newText": "b"`) ||
		!strings.Contains(got, "4.9 KiB in all") || !strings.Contains(got, `"dryRun": false`) {
		t.Fatalf("edit_file shown as:\n%s", got)
	}
	many := `{"path":"p","items":[` + strings.TrimSuffix(strings.Repeat("1,", 100), ",") + `]}`
	if got := argtext.Render(many, 0); !strings.Contains(got, "80 more items") {
		t.Fatalf("long list not cut:\n%s", got)
	}
	// Over the cap after the values are cut: the lead keys stay, the tail goes.
	var wide strings.Builder
	wide.WriteString(`{"url":"https://example.com/x"`)
	for i := range 40 {
		wide.WriteString(`,"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":"` + strings.Repeat("z", 250) + `"`)
	}
	wide.WriteString("}")
	got = argtext.Render(wide.String(), 1000)
	if !strings.Contains(got, `"url": "https://example.com/x"`) || !strings.Contains(got, "more bytes not shown") || len(got) > 1100 {
		t.Fatalf("wide args:\n%s", got)
	}
}

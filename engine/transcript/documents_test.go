package transcript

import (
	"encoding/json"
	"strings"
	"testing"
)

// SourceOf names a Slack thread's channel and nothing for any other key.
func TestSourceOf(t *testing.T) {
	for key, want := range map[string]string{
		"T1/C1/1700000000.000100":  "T1/C1",
		"T2/D9/1.2":                "T2/D9",
		"chat/demo":                "",
		"chat/pm/x":                "",
		"":                         "",
		"T1/C1":                    "",
		"T1//1.1":                  "",
		"/C1/1.1":                  "",
		"T1/C1/1.1/extra":          "",
		"agentbot projects import": "",
	} {
		if got := SourceOf(key); got != want {
			t.Errorf("SourceOf(%q) = %q, want %q", key, got, want)
		}
	}
}

// A version's source is kept in its JSON, and left out when it has none.
func TestDocVersionSourceJSON(t *testing.T) {
	data, err := json.Marshal(DocVersion{Path: "a.md", Source: "T1/C1"})
	if err != nil || !strings.Contains(string(data), `"source":"T1/C1"`) {
		t.Fatalf("marshal = %s, %v", data, err)
	}
	var back DocVersion
	if err := json.Unmarshal(data, &back); err != nil || back.Source != "T1/C1" {
		t.Fatalf("unmarshal = %+v, %v", back, err)
	}
	if data, _ := json.Marshal(DocVersion{Path: "a.md"}); strings.Contains(string(data), "source") {
		t.Fatalf("a version without a source marshals as %s", data)
	}
}

package transcript

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Reasoning items round-trip through a message's JSON, a message without
// them writes no reasoning key (old transcripts read and write unchanged),
// and usage adds reasoning tokens.
func TestReasoningItemsJSON(t *testing.T) {
	old := `{"role":"assistant","content":"hi","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	var m Message
	if err := json.Unmarshal([]byte(old), &m); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(m); string(again) != old {
		t.Errorf("old message re-encoded as %s", again)
	}
	m.ReasoningItems = []ReasoningItem{{ID: "rs_1", EncryptedContent: "gAAAAA+/=", Summary: []string{"thought"}}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Message
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, m) {
		t.Errorf("round trip: %v %+v", err, back)
	}
	if n := m.ReasoningItems[0].Bytes(); n != len("rs_1")+len("gAAAAA+/=")+len("thought") {
		t.Errorf("Bytes = %d", n)
	}
	if u := (Usage{Completion: 10, Reasoning: 4}).Add(Usage{Completion: 5, Reasoning: 2}); u.Reasoning != 6 || u.Completion != 15 {
		t.Errorf("Add = %+v", u)
	}
}

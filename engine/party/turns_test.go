package party

import (
	"fmt"
	"strings"
	"testing"
)

const round = "_The room leans in._\n" +
	"📊 **Mary:** The data says otherwise.\nLook at churn.\n" +
	"🏗️ **Winston:** Churn is a symptom. **Boring** tech wins.\n" +
	"**John:** Why?\n" +
	"Note **this:** not a header.\n"

var roster = []Member{{Name: "Mary", Icon: "📊", Title: "Business Analyst"}, {Name: "John", Icon: "📋", Title: "Product Manager"}}

func TestSplit(t *testing.T) {
	turns := Split(round, roster)
	var got []string
	for _, tr := range turns {
		got = append(got, fmt.Sprintf("[%s] %s", tr.Speaker.Label(), tr.Text))
	}
	want := []string{
		"[] _The room leans in._",
		"[📊 Mary, Business Analyst] The data says otherwise.\nLook at churn.",
		"[🏗️ Winston] Churn is a symptom. **Boring** tech wins.",
		"[📋 John, Product Manager] Why?\nNote **this:** not a header.",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("turns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Streamed in pieces of any size, the answer splits the same, and no text
// is lost or repeated.
func TestSplitterStreamed(t *testing.T) {
	for _, size := range []int{1, 2, 3, 5, 7, 13, 1000} {
		s := &Splitter{Roster: roster}
		var pieces []Piece
		b := []byte(round)
		for i := 0; i < len(b); i += size {
			pieces = append(pieces, s.Write(string(b[i:min(i+size, len(b))]))...)
		}
		pieces = append(pieces, s.Flush()...)
		var turns []Turn
		for _, p := range pieces {
			if p.Start || len(turns) == 0 {
				turns = append(turns, Turn{Speaker: p.Speaker})
			}
			turns[len(turns)-1].Text += p.Text
		}
		whole := Split(round, roster)
		if len(turns) != len(whole) {
			t.Fatalf("size %d: %d turns, want %d", size, len(turns), len(whole))
		}
		for i := range turns {
			if strings.TrimSpace(turns[i].Text) != whole[i].Text || turns[i].Speaker != whole[i].Speaker {
				t.Errorf("size %d turn %d: %+v, want %+v", size, i, turns[i], whole[i])
			}
		}
	}
}

// A plain answer is one orchestrator turn.
func TestSplitPlain(t *testing.T) {
	turns := Split("Hello there.\n- a list\n**Bold:** line without icon\n", nil)
	if len(turns) != 1 || turns[0].Speaker.Persona() {
		t.Fatalf("%+v", turns)
	}
}

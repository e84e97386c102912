package chat

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"agentbot/engine/transcript"
)

// A read waiting for a line that does not come ends when its context
// does; the lines that do come arrive in order, and the input's end (and
// its error) is seen.
func TestLineReaderEndsWithItsContext(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	in := newLineReader(pr)
	go func() { _, _ = io.WriteString(pw, "one\ntwo\n") }()
	for _, want := range []string{"one", "two"} {
		if got, ok := in.Next(context.Background()); !ok || got != want {
			t.Fatalf("Next = %q, %v; want %q", got, ok, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan bool)
	go func() { _, ok := in.Next(ctx); ended <- ok }()
	cancel()
	select {
	case ok := <-ended:
		if ok {
			t.Fatal("Next returned a line after its context ended")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next waited for the input after its context ended")
	}
	if _, ok := in.Next(ctx); ok {
		t.Fatal("Next with an ended context read a line")
	}
	if in.Err() != nil {
		t.Fatalf("Err before the end: %v", in.Err())
	}
	boom := errors.New("boom")
	pw.CloseWithError(boom)
	if _, ok := in.Next(context.Background()); ok {
		t.Fatal("Next read past a failed input")
	}
	if !errors.Is(in.Err(), boom) {
		t.Fatalf("Err = %v, want the input's", in.Err())
	}
}

// An approval asked while the chat is interrupted is denied without
// waiting for an answer.
func TestApprovalDeniedOnInterrupt(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	p := transcript.Approval{Tool: "fs__write", Args: `{"path":"a.txt"}`}
	if got := askApproval(ctx, &out, newLineReader(pr), false, p); got != transcript.DecisionDenied {
		t.Fatalf("decision %q, want denied", got)
	}
}

package fakeslack

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/slack-go/slack/socketmode"
)

// envelopeIDs drains n events_api envelopes from events and returns their
// envelope ids.
func envelopeIDs(t *testing.T, events <-chan socketmode.Event, n int) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	for len(got) < n {
		got[nextOf(t, events, socketmode.EventTypeEventsAPI).Request.EnvelopeID] = true
	}
	return got
}

// Envelopes spread round-robin over an app's websockets; one for a given
// websocket goes there, waiting while it is not connected, without holding
// up the others; RedeliverTo retries an event on a chosen websocket.
func TestEnvelopesTargetAConnection(t *testing.T) {
	fake := New(t)
	eventsA := startSocketMode(t, fake)
	eventsB := startSocketMode(t, fake)
	ids := fake.ConnIDs()
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("ConnIDs = %v, want two", ids)
	}
	a, b := ids[0], ids[1]
	msg := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":"message","channel":"C1","user":"U1","text":"m%d","ts":"1.00000%d"}`, i, i))
	}

	var spread []string
	for i := range 4 {
		spread = append(spread, fake.SendEvent(msg(i)))
	}
	toA, toB := envelopeIDs(t, eventsA, 2), envelopeIDs(t, eventsB, 2)
	if len(toA) != 2 || len(toB) != 2 {
		t.Fatalf("round-robin gave A %d and B %d envelopes, want 2 each", len(toA), len(toB))
	}

	later := fake.SendEventWith(msg(5), EventOptions{Conn: 99}) // not connected
	onB := fake.SendEventWith(msg(6), EventOptions{Conn: b})
	if got := envelopeIDs(t, eventsB, 1); !got[onB] {
		t.Fatalf("B got %v, want the envelope sent to it", got)
	}
	if fake.Pending() != 1 {
		t.Fatalf("Pending = %d, want the envelope for websocket 99", fake.Pending())
	}
	again, err := fake.RedeliverTo(spread[1], "timeout", a)
	if err != nil {
		t.Fatal(err)
	}
	if got := envelopeIDs(t, eventsA, 1); !got[again] {
		t.Fatalf("A got %v, want the redelivery", got)
	}
	for _, e := range fake.Envelopes() {
		switch e.ID {
		case later:
			if !e.Sent.IsZero() {
				t.Error("the envelope for a websocket that is not connected was sent")
			}
		case onB:
			if e.Conn != b {
				t.Errorf("envelope for B went to %d", e.Conn)
			}
		case again:
			if e.Conn != a || e.RetryAttempt != 1 {
				t.Errorf("redelivery went to %d with retry %d, want %d and 1", e.Conn, e.RetryAttempt, a)
			}
		}
	}
}

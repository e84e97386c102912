package signals

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The first signal cancels; the process exits with 128+signal when the
// command does not stop within the grace, or at once on a second signal.
func TestWatch(t *testing.T) {
	for _, c := range []struct {
		sigs []os.Signal
		code int
		says string
	}{
		{[]os.Signal{syscall.SIGTERM}, 143, "still busy"},
		{[]os.Signal{os.Interrupt}, 130, "still busy"},
		{[]os.Signal{os.Interrupt, os.Interrupt}, 130, "second signal"},
	} {
		sigs := make(chan os.Signal, 2)
		for _, s := range c.sigs {
			sigs <- s
		}
		cancelled := make(chan struct{})
		var out bytes.Buffer
		code := make(chan int, 1)
		grace := time.Hour
		if len(c.sigs) == 1 {
			grace = 10 * time.Millisecond
		}
		go Watch(sigs, func() { close(cancelled) }, grace, &out, func(n int) { code <- n })
		select {
		case got := <-code:
			if got != c.code || !strings.Contains(out.String(), c.says) {
				t.Errorf("%v: exit %d, said %q", c.sigs, got, out.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: no exit", c.sigs)
		}
		select {
		case <-cancelled:
		default:
			t.Errorf("%v: the context was not cancelled", c.sigs)
		}
	}
}

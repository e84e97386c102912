// Package signals stops a command on SIGINT or SIGTERM: the first signal
// cancels its context; a second one, or the command still busy after a
// grace, ends the process with 128+signal.
package signals

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Stop starts handling SIGINT and SIGTERM (see Watch) and returns the
// context the first of them cancels; the process exits after grace.
func Stop(grace time.Duration) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go Watch(sigs, cancel, grace, os.Stderr, os.Exit)
	return ctx
}

// Watch cancels on the first signal of sigs and exits with 128+signal when
// the command does not stop within grace, or at once on a second signal.
func Watch(sigs <-chan os.Signal, cancel func(), grace time.Duration, stderr io.Writer, exit func(int)) {
	first := <-sigs
	cancel()
	code := 130 // SIGINT
	if first == syscall.SIGTERM {
		code = 143
	}
	select {
	case <-sigs:
		fmt.Fprintln(stderr, "agentbot: second signal, exiting now")
	case <-time.After(grace):
		fmt.Fprintf(stderr, "agentbot: still busy %s after %s, exiting\n", grace, first)
	}
	exit(code)
}

// OnHangup calls fn at every SIGHUP until ctx ends or the returned stop
// is called; stop waits for a running fn to return.
func OnHangup(ctx context.Context, fn func()) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				fn()
			}
		}
	}()
	return func() { signal.Stop(hup); cancel(); <-done }
}

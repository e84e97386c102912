package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"agentbot/storage"
)

func init() {
	behaviours = append(behaviours, behaviour{"CancelledContextChangesNothing", cancelledChangesNothing})
}

// cancelledChangesNothing: a call whose context is done (a stopped turn, a
// shutdown) fails with the context's error and changes nothing; the store
// answers the next call as before.
func cancelledChangesNothing(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	done, cancel := context.WithCancel(ctx)
	cancel()
	canceled := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", what, err)
		}
	}
	_, err := b.NewSession(done, "T/C/1")
	canceled("NewSession", err)
	if s, err := b.FindSession(ctx, "T/C/1"); err != nil || s != nil {
		t.Fatalf("a cancelled NewSession created %+v, %v", s, err)
	}
	s := newSession(t, b, "T/C/1")
	s.Messages = append(s.Messages, msg("user", "hi"))
	canceled("SaveSession", b.SaveSession(done, s))
	canceled("SetMeta", b.SetMeta(done, "T/C/1", "k", "v"))
	a := <-Done(b.Admit(done, 0, []string{"ev1"}, time.Minute, "T/C/1", []byte(`{}`)))
	canceled("Admit", a.Err)
	_, _, err = b.TakeLease(done, "T/C/1", "a", time.Minute)
	canceled("TakeLease", err)
	_, err = b.SaveDocument(done, "p", storage.DocVersion{Path: "a.md"}, 0, []byte("x"))
	canceled("SaveDocument", err)

	got, err := storage.Session(ctx, b, "T/C/1")
	must(t, err)
	if len(got.Messages) != 0 || got.Meta["k"] != "" {
		t.Errorf("cancelled writes changed the session: %+v", got)
	}
	if items, err := b.Pending(ctx, "T/C/1"); err != nil || len(items) != 0 {
		t.Errorf("a cancelled Admit queued %+v, %v", items, err)
	}
	if dup, err := b.Seen(ctx, "ev1", time.Minute); err != nil || dup {
		t.Errorf("a cancelled Admit marked its key: %v, %v", dup, err)
	}
	if _, ok, err := b.TakeLease(ctx, "T/C/1", "b", time.Minute); err != nil || !ok {
		t.Errorf("a cancelled TakeLease holds the lease: %v, %v", ok, err)
	}
	if _, err := storage.FindProject(ctx, b, "p"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a cancelled SaveDocument created its project: %v", err)
	}
}

package render

import (
	"context"
	"errors"
	"time"
)

// Output is what a turn has shown in its thread. A reply reports it
// through Options.Record each time it changes, before it goes on, so the
// bot can keep it with the turn (under the thread's fence); a replica that
// resumes the turn passes it back as Options.Prior, and the reply closes
// what the earlier run left open instead of leaving a second answer
// beside it.
type Output struct {
	// StreamTS is the stream the turn opened last.
	StreamTS string `json:"stream,omitempty"`
	// Open is set while that stream may still be open.
	Open bool `json:"open,omitempty"`
	// AnswerTS is the first message of the posted final answer.
	AnswerTS string `json:"answer,omitempty"`
	// Done is set once the whole final answer is in the thread.
	Done bool `json:"done,omitempty"`
	// Starting is set while a stream is being opened: its ts is not known
	// yet, so a run that dies then leaves a stream the record cannot name
	// (the front end finds it: see bot's closeUnnamed).
	Starting bool `json:"starting,omitempty"`
	// Notice is a failure notice the turn posted while its message stays
	// queued (Outcome.Retry): it is not the answer. The turn runs again,
	// and its answer takes the notice's place, or the notice says the
	// answer follows.
	Notice string `json:"notice,omitempty"`
}

// noticeAnswered replaces a retry's failure notice once the answer is in
// the thread below it.
const noticeAnswered = "_The database was unreachable for a moment. Your message was kept and is answered below._"

// cutAnswered replaces the partial text of a stream an earlier run left
// cut mid-answer, once the whole answer is in the thread below it: the
// thread shows one answer.
const cutAnswered = "_⚠️ Interrupted. The whole answer is below._"

// InterruptedNote ends a stream the turn's earlier run left open.
func InterruptedNote() Chunk { return Chunk{Markdown: interruptedNote} }

// interruptedNote ends a stream the turn's earlier run left open (its
// process died, or lost the thread): the answer comes again below it.
const interruptedNote = "\n\n_⚠️ Interrupted. The answer continues below._"

// errFenced is what every Slack call of a reply answers once its guard
// refuses (Options.Guard): the replica lost the thread, so it posts
// nothing more.
var errFenced = errors.New("not posted: this replica no longer holds the thread")

// record reports the output so far (Options.Record).
func (r *Reply) record() {
	if r.opts.Record != nil {
		r.opts.Record(r.out)
	}
}

// closePrior closes the stream an earlier run of the turn left open, with
// a note that the answer follows; Slack may have closed it already.
func (r *Reply) closePrior(prior Output) {
	r.out.Notice = prior.Notice // a kept message's notice: the answer takes its place
	if !prior.Open || prior.StreamTS == "" {
		return
	}
	err := r.stopPrior(prior.StreamTS)
	if err != nil && !streamClosed(err) {
		return
	}
	if err != nil {
		r.priorTS = prior.StreamTS // Slack closed it: the answer may be whole in it
	}
	r.cutTS = prior.StreamTS
	r.out = Output{StreamTS: prior.StreamTS, Notice: prior.Notice}
	r.record()
}

// stopPrior stops a stream an earlier run left open with the interrupted
// note; a failure other than Slack's "closed already" is logged.
func (r *Reply) stopPrior(ts string) error {
	err := r.again("chat.stopStream", func() error {
		return r.p.StopStream(r.ctx, r.t.Channel, ts, InterruptedNote())
	})
	if err != nil && !streamClosed(err) {
		r.log.Error("close the stream an earlier run left open", "ts", ts, "err", err)
	}
	return err
}

// guarded is a Poster that asks guard before every call, and makes none
// once it refuses. A call the guard let through runs to its end, even when
// the lease's context ends meanwhile (detached): a call cut in flight may
// have been made all the same, and the reply, not knowing it, would make
// it again when the turn is replayed.
type guarded struct {
	Poster
	guard func() error
}

func (g guarded) check() error {
	if err := g.guard(); err != nil {
		return errors.Join(errFenced, err)
	}
	return nil
}

// guardedCallTimeout bounds a call the guard let through.
const guardedCallTimeout = 30 * time.Second

// detached is ctx for a call the guard let through: not cut when ctx
// ends, bounded by guardedCallTimeout.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), guardedCallTimeout)
}

func (g guarded) Post(ctx context.Context, channel, thread string, m Message) (string, error) {
	if err := g.check(); err != nil {
		return "", err
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	return g.Poster.Post(ctx, channel, thread, m)
}

func (g guarded) Update(ctx context.Context, channel, ts string, m Message) error {
	if err := g.check(); err != nil {
		return err
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	return g.Poster.Update(ctx, channel, ts, m)
}

func (g guarded) Delete(ctx context.Context, channel, ts string) error {
	if err := g.check(); err != nil {
		return err
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	return g.Poster.Delete(ctx, channel, ts)
}

func (g guarded) StartStream(ctx context.Context, t Thread) (string, error) {
	if err := g.check(); err != nil {
		return "", err
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	return g.Poster.StartStream(ctx, t)
}

func (g guarded) AppendStream(ctx context.Context, channel, ts string, c Chunk) error {
	if err := g.check(); err != nil {
		return err
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	return g.Poster.AppendStream(ctx, channel, ts, c)
}

func (g guarded) StopStream(ctx context.Context, channel, ts string, c Chunk) error {
	if err := g.check(); err != nil {
		return err
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	return g.Poster.StopStream(ctx, channel, ts, c)
}

func (g guarded) SetStatus(ctx context.Context, channel, thread, status string) error {
	if err := g.check(); err != nil {
		return err
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	return g.Poster.SetStatus(ctx, channel, thread, status)
}

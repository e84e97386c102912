// Package chat is agentbot chat's terminal front end: it reads a person's
// lines (and answers to approvals) from a terminal or a script, runs a turn
// of the conversation for each, and prints the turn's events. The command
// itself (its flags, the store, the model and the engine) is wired in
// package main.
package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/llm"
	"agentbot/engine/party"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Run runs a terminal session: it resumes rec, the stored session
// --session named (name), or, with none or a record that never got an
// agent, starts one under key with agent agentID; then it talks until the
// input ends and closes the session. It returns the exit code: 2 for a
// missing or unknown agent, 1 when the session could not open or the input
// or the last turn failed.
func (t *Terminal) Run(ctx context.Context, eng *engine.Engine, st storage.Backend, rec *transcript.Session, key, name, agentID string, cat *catalog.Catalog) int {
	var c *engine.Conversation
	code := 0
	if rec != nil {
		c, code = t.resume(ctx, eng, st, rec, name, agentID, cat)
	}
	if c == nil && code == 0 { // nothing to resume
		c, code = t.start(ctx, eng, st, key, agentID, cat)
	} else {
		t.Opening = "" // a resumed session is not started again
	}
	t.eng = eng
	if c == nil {
		return code
	}
	code = t.talk(ctx, c)
	if ctx.Err() != nil && t.interactive {
		fmt.Fprintln(t.out) // ^C: the shell's prompt starts on a line of its own
	}
	// An unanswered session is dropped even after an interrupt (^C).
	t.close(context.WithoutCancel(ctx), c, st)
	return code
}

// FindSession finds the session --session names, by its key ("chat/NAME") or
// by its id (agentbot sessions list); with none it returns the key a new
// session takes ("" for an unnamed one).
func FindSession(ctx context.Context, st storage.Backend, name string) (*transcript.Session, string, error) {
	if name == "" {
		return nil, "", nil
	}
	key := "chat/" + name
	rec, err := storage.Session(ctx, st, key)
	if errors.Is(err, storage.ErrNotFound) {
		if byID, idErr := st.SessionByID(ctx, name); idErr == nil {
			return byID, byID.Key, nil
		}
		return nil, key, nil
	}
	if err != nil {
		return nil, "", err
	}
	return rec, key, nil
}

// Terminal is the chat's front end: it reads lines (and approvals) from
// stdin and prints a conversation's events.
type Terminal struct {
	out, errOut io.Writer
	in          *lineReader
	interactive bool
	// sent is set once a line went to the agent: a session closed
	// before it was merely opened, and is dropped without a word.
	sent bool
	// Explain says, after "no agent ..." on errOut, why the agent asked
	// for is not in the catalog (nil: nothing more is said).
	Explain func(w io.Writer, cat *catalog.Catalog)
	// person is the terminal's user ($USER), the author of the documents
	// the session saves in its project.
	person string
	// Opening is sent as the first message of a new session (a party
	// --party asks for); "" for none.
	Opening string
	// eng is the engine of the session, for party mode's personas.
	eng *engine.Engine
	// Connect connects the person's account at an MCP server for a call
	// that waits on it (mcptools.Loopback), reporting whether they did;
	// nil: no server here needs one, and such a call is declined.
	Connect func(server string) bool
}

// New returns the terminal reading stdin and writing to stdout and, for
// errors, stderr; person is its user ($USER).
func New(stdin io.Reader, stdout, stderr io.Writer, person string) *Terminal {
	return &Terminal{out: stdout, errOut: stderr, in: newLineReader(stdin), interactive: isTerminal(stdin), person: person}
}

// decider decides a call a turn waits on: a connection is made through
// Connect; an approval is asked on the terminal, and an interrupt (ctx)
// while it asks denies it.
func (t *Terminal) decider(ctx context.Context) engine.Decider {
	return func(p transcript.Approval) (string, string, bool) {
		if p.Kind == transcript.GateConnect {
			if t.Connect != nil && t.Connect(p.Server) {
				return transcript.DecisionConnected, t.person, true
			}
			return transcript.DecisionDenied, t.person, true
		}
		return askApproval(ctx, t.out, t.in, t.interactive, p), "terminal", true
	}
}

// resume continues a stored session: the session talks to the agent it
// started with (found by the snapshot stored with it), whatever its id
// names today, and a turn cut short (the process died) is finished first,
// as the Slack bot does, instead of stacking a new message on it.
func (t *Terminal) resume(ctx context.Context, eng *engine.Engine, st storage.Backend, rec *transcript.Session, name, agentID string, cat *catalog.Catalog) (*engine.Conversation, int) {
	c, err := eng.Continue(st, rec)
	if err != nil {
		fmt.Fprintf(t.errOut, "agentbot chat: session %q: %v\n", name, err)
		return nil, 1
	}
	if c.Live.AgentDef == nil {
		return nil, 0 // a record that never got an agent: start it
	}
	if agentID != "" && agentID != c.Live.AgentID {
		fmt.Fprintf(t.errOut, "agentbot chat: session %q belongs to agent %s; resuming it with %s\n", name, c.Live.AgentID, c.Live.AgentID)
	}
	if now, ok := cat.Find(c.Live.AgentID); ok && now != c.Live.AgentDef {
		fmt.Fprintf(t.errOut, "agentbot chat: the id %s now names %s; this session keeps the agent it started with (%s, now %s)\n", c.Live.AgentID, now.Path, c.Live.AgentDef.Path, c.Live.AgentDef.ID)
	}
	fmt.Fprintf(t.out, "Resuming session %q with %s (%d messages).\n\n", name, c.Live.AgentID, len(c.Live.Messages))
	if !engine.Unfinished(c.Live) {
		if last := engine.LastAnswer(c.Live); last != "" {
			fmt.Fprintln(t.out, last)
		}
		return c, 0
	}
	fmt.Fprintln(t.out, "Resuming the unfinished turn…")
	if _, err := c.Run(ctx, "", printer(t.out), t.decider(ctx)); err != nil {
		turnFailed(t.errOut, err)
		if ctx.Err() != nil {
			return nil, 1
		}
	}
	fmt.Fprintln(t.out)
	return c, 0
}

// start opens a new session under key (a fresh name when "") with agent
// agentID and prints its greeting.
func (t *Terminal) start(ctx context.Context, eng *engine.Engine, st storage.Backend, key, agentID string, cat *catalog.Catalog) (*engine.Conversation, int) {
	if agentID == "" {
		fmt.Fprintln(t.errOut, "agentbot chat: --agent is required for a new session (agentbot agents lists the ids)")
		return nil, 2
	}
	a, ok := cat.Find(agentID)
	if !ok {
		fmt.Fprintf(t.errOut, "agentbot chat: no agent %q\n", agentID)
		if t.Explain != nil {
			t.Explain(t.errOut, cat)
		}
		return nil, 2
	}
	if key == "" {
		key = "chat/" + a.ID + "/" + eng.NewSessionName()
	}
	c, err := eng.Open(ctx, st, key)
	if err != nil {
		fmt.Fprintf(t.errOut, "agentbot chat: %v\n", err)
		return nil, 1
	}
	g, err := c.Start(ctx, a, nil)
	if err != nil {
		fmt.Fprintf(t.errOut, "agentbot chat: %v\n", err)
		// The session just made is dropped even when the start was interrupted.
		_ = st.DeleteSession(context.WithoutCancel(ctx), c.Live.ID)
		return nil, 1
	}
	fmt.Fprintf(t.out, "Session %s (resume: agentbot chat --session %s)\n\n", c.Live.ID, strings.TrimPrefix(key, "chat/"))
	fmt.Fprintln(t.out, g.Text)
	return c, 0
}

// talk runs a turn for each line read until the input ends or /quit; it
// returns 1 when the input fails or the last turn failed (scripts must see
// it).
func (t *Terminal) talk(ctx context.Context, c *engine.Conversation) int {
	c.Live.Person = t.person
	opening := t.Opening
	for {
		line, ok := opening, opening != ""
		if ok {
			opening = ""
			fmt.Fprintf(t.out, "\n> %s\n", line)
		} else if line, ok = t.readLine(ctx); !ok {
			break
		}
		fmt.Fprintln(t.out)
		t.sent = true
		var pool []party.Member
		if t.eng != nil && c.Live.Skill != nil && c.Live.Skill.Name == party.SkillName {
			pool = t.eng.PartyPool(c.Live)
		}
		sc := newScreen(t.out, c.Live, pool)
		res, err := c.Run(ctx, line, sc.emit, t.decider(ctx))
		sc.flush()
		if err != nil {
			turnFailed(t.errOut, err)
			if ctx.Err() != nil {
				return 1
			}
			continue
		}
		if res != nil && res.Text != "" {
			fmt.Fprintln(t.out)
		}
	}
	if err := t.in.Err(); err != nil {
		fmt.Fprintf(t.errOut, "agentbot chat: read input: %v\n", err)
		return 1
	}
	if c.Failed() {
		return 1
	}
	return 0
}

// close ends the conversation: a session that never got an answer is not
// kept (engine.Conversation.Close). The user is told so when they sent a
// message that got none; quitting before the first message is no failure.
func (t *Terminal) close(ctx context.Context, c *engine.Conversation, st engine.SessionDeleter) {
	deleted, err := c.Close(ctx, st)
	switch {
	case err != nil:
		fmt.Fprintf(t.errOut, "agentbot chat: %v\n", err)
	case deleted && t.sent:
		fmt.Fprintln(t.errOut, "agentbot chat: the session got no answer, so it is not kept; run the same command to try again")
	}
}

// readLine reads the next non-empty line, echoed when the input is a
// script; it reports false at the end of the input, on /quit, or when ctx
// ends (^C) while it waits.
func (t *Terminal) readLine(ctx context.Context) (string, bool) {
	for {
		if t.interactive {
			fmt.Fprint(t.out, "\n> ")
		}
		line, ok := t.in.Next(ctx)
		if !ok {
			return "", false
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if line == "/quit" || line == "/exit" {
			return "", false
		}
		if !t.interactive {
			fmt.Fprintf(t.out, "\n> %s\n", line)
		}
		return line, true
	}
}

// askApproval shows a call waiting for approval (its tool and its
// arguments, secrets masked) and reads the answer: y or yes approves,
// anything else, or the end of the input, denies.
func askApproval(ctx context.Context, w io.Writer, in *lineReader, interactive bool, p transcript.Approval) string {
	fmt.Fprintf(w, "\n  ? The agent wants to run %s with:\n", p.Tool)
	for _, l := range strings.Split(engine.DisplayArgs(p.Args, 8<<10), "\n") {
		fmt.Fprintf(w, "      %s\n", l)
	}
	fmt.Fprint(w, "  Approve? [y/N] ")
	answer := ""
	if line, ok := in.Next(ctx); ok {
		answer = strings.ToLower(strings.TrimSpace(line))
	}
	if !interactive {
		fmt.Fprintln(w, answer)
	}
	if answer == "y" || answer == "yes" {
		return transcript.DecisionApproved
	}
	return transcript.DecisionDenied
}

// turnFailed prints a failed turn's error and, for a model error, what
// to do about it.
func turnFailed(w io.Writer, err error) {
	fmt.Fprintf(w, "\nagentbot chat: %v\n", err)
	if hint := llm.HintOf(err); hint != "" {
		fmt.Fprintf(w, "  hint: %s\n", hint)
	}
}

// printer renders a turn's events on a terminal (see screen).
func printer(w io.Writer) func(engine.Event) { return newScreen(w, nil, nil).emit }

// printEvent prints one event of a turn.
func printEvent(w io.Writer, ev engine.Event) {
	switch ev.Kind {
	case engine.EventThinking:
		fmt.Fprintln(w, "  · thinking…") // never the reasoning itself
	case engine.EventText:
		fmt.Fprint(w, ev.Text)
	case engine.EventToolStart:
		fmt.Fprintf(w, "  · %s…\n", ev.Status)
	case engine.EventToolEnd:
		if ev.Err != "" {
			fmt.Fprintf(w, "  ! %s: %s\n", ev.Tool, ev.Err)
		}
	case engine.EventOutput:
		fmt.Fprintf(w, "  ✓ saved %s (%d bytes, v%d) at %s\n", ev.Output.Path, ev.Output.Size, ev.Output.Version, ev.HostPath)
	case engine.EventNotice:
		fmt.Fprintf(w, "\n  ! %s\n", ev.Text)
	}
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// runChat talks to one agent in the terminal. It reads stdin line by line,
// so it can be scripted, and resumes a named session.
func runChat(ctx context.Context, e *env) int {
	var agentID, name, project string
	cfg, _, code := parse("chat", e, func(fs *flagSet) {
		fs.StringVar(&agentID, "agent", "", "agent id (see agentbot agents)")
		fs.StringVar(&name, "session", "", "session name to start or resume")
		fs.StringVar(&project, "project", "", "the project whose documents the session shares (default: this data folder's terminal project)")
	})
	if cfg == nil {
		return code
	}
	cfg.Project = project
	if err := needKey(cfg); err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
		return 2
	}
	log := newLogger(cfg, e.stderr)
	st, err := openStore(ctx, cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
		return storeExitCode(err)
	}
	defer st.Close()

	key := ""
	if name != "" {
		key = "chat/" + name
	}
	var rec *transcript.Session
	if key != "" {
		rec, err = st.Session(key)
		if errors.Is(err, storage.ErrNotFound) {
			// --session also takes a session id (agentbot sessions list).
			if byID, idErr := st.SessionByID(name); idErr == nil {
				rec, key, err = byID, byID.Key, nil
			}
		}
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
			return 1
		}
	}
	m, err := newModel(cfg, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
		return 2
	}
	cat := loadCatalog(cfg)
	tools, err := loadMCP(cfg, e.getenv, log)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
		return 2
	}
	defer tools.Close() // stops the stdio servers
	tools.warnAgents(cat, log)
	eng := newEngine(cfg, st, m, func() *catalog.Catalog { return cat }, newBudgets(cfg, st), log, nil, tools)
	out := e.stdout
	interactive := isTerminal(e.stdin)
	sc := bufio.NewScanner(e.stdin)
	sc.Buffer(make([]byte, 64*1024), 4<<20)

	var s *engine.Session
	// ask asks on the terminal about each call a turn waits on, and resumes
	// the turn, until it ends without pending calls.
	ask := func(res *engine.Result, err error) (*engine.Result, error) {
		for err == nil && res != nil && len(res.Pending) > 0 {
			for _, p := range res.Pending {
				if err := eng.Decide(s, p.CallID, askApproval(out, sc, interactive, p), "terminal"); err != nil {
					return res, err
				}
			}
			res, err = eng.Turn(ctx, s, "", printer(out))
		}
		return res, err
	}
	if rec != nil {
		if s, err = eng.Resume(rec); err != nil {
			fmt.Fprintf(e.stderr, "agentbot chat: session %q: %v\n", name, err)
			return 1
		}
	}
	lastFailed := false
	if s != nil && s.Agent != nil {
		// The session talks to the agent it started with (found by the
		// snapshot stored with it), whatever its id names today.
		if agentID != "" && agentID != s.AgentID {
			fmt.Fprintf(e.stderr, "agentbot chat: session %q belongs to agent %s; resuming it with %s\n", name, s.AgentID, s.AgentID)
		}
		if now, ok := cat.Find(s.AgentID); ok && now != s.Agent {
			fmt.Fprintf(e.stderr, "agentbot chat: the id %s now names %s; this session keeps the agent it started with (%s, now %s)\n", s.AgentID, now.Path, s.Agent.Path, s.Agent.ID)
		}
		fmt.Fprintf(out, "Resuming session %q with %s (%d messages).\n\n", name, s.AgentID, len(s.Messages))
		if engine.Unfinished(s) {
			// A turn was cut short (the process died): finish it first, as
			// the Slack bot does, instead of stacking a new message on it.
			fmt.Fprintln(out, "Resuming the unfinished turn…")
			_, err := ask(eng.Turn(ctx, s, "", printer(out)))
			lastFailed = err != nil
			if err != nil {
				fmt.Fprintf(e.stderr, "\nagentbot chat: %v\n", err)
				if ctx.Err() != nil {
					return 1
				}
			}
			fmt.Fprintln(out)
		} else if last := engine.LastAnswer(s); last != "" {
			fmt.Fprintln(out, last)
		}
	} else {
		if agentID == "" {
			fmt.Fprintln(e.stderr, "agentbot chat: --agent is required for a new session (agentbot agents lists the ids)")
			return 2
		}
		a, ok := cat.Find(agentID)
		if !ok {
			fmt.Fprintf(e.stderr, "agentbot chat: no agent %q; known: %s\n", agentID, strings.Join(agentIDs(cat.Agents), ", "))
			return 2
		}
		if key == "" {
			key = "chat/" + a.ID + "/" + eng.NewSessionName()
		}
		if rec, err = st.NewSession(key); err != nil {
			fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
			return 1
		}
		s = &engine.Session{Session: *rec}
		g, err := eng.Activate(s, a)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
			_ = st.DeleteSession(s.ID)
			return 1
		}
		fmt.Fprintf(out, "Session %s (resume: agentbot chat --session %s)\n\n", s.ID, strings.TrimPrefix(key, "chat/"))
		fmt.Fprintln(out, g.Text)
	}

	for {
		if interactive {
			fmt.Fprint(out, "\n> ")
		}
		if !sc.Scan() {
			break
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if line == "/quit" || line == "/exit" {
			break
		}
		if !interactive {
			fmt.Fprintf(out, "\n> %s\n", line)
		}
		fmt.Fprintln(out)
		if lastFailed && engine.Unfinished(s) {
			// The turn before failed without an answer: close it with a
			// note, so this message does not follow the failed one
			// directly (two user messages in a row).
			if err := eng.Interrupt(s, failedNote); err != nil {
				fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
				return 1
			}
		}
		res, err := ask(eng.Turn(ctx, s, line, printer(out)))
		lastFailed = err != nil
		if err != nil {
			fmt.Fprintf(e.stderr, "\nagentbot chat: %v\n", err)
			if ctx.Err() != nil {
				return 1
			}
			continue
		}
		if res != nil && res.Text != "" {
			fmt.Fprintln(out)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: read input: %v\n", err)
		return 1
	}
	if lastFailed {
		return 1 // the last turn failed: scripts must see it
	}
	return 0
}

// askApproval shows a call waiting for approval (its tool and its
// arguments, secrets masked) and reads the answer: y or yes approves,
// anything else, or the end of the input, denies.
func askApproval(w io.Writer, sc *bufio.Scanner, interactive bool, p transcript.Approval) string {
	fmt.Fprintf(w, "\n  ? The agent wants to run %s with:\n", p.Tool)
	for _, l := range strings.Split(engine.DisplayArgs(p.Args), "\n") {
		fmt.Fprintf(w, "      %s\n", l)
	}
	fmt.Fprint(w, "  Approve? [y/N] ")
	answer := ""
	if sc.Scan() {
		answer = strings.ToLower(strings.TrimSpace(sc.Text()))
	}
	if !interactive {
		fmt.Fprintln(w, answer)
	}
	if answer == "y" || answer == "yes" {
		return transcript.DecisionApproved
	}
	return transcript.DecisionDenied
}

// failedNote closes a failed turn in the transcript when the user writes
// again in the same chat; a chat that ends after a failed turn leaves it
// open instead, so the next chat on the session resumes it.
const failedNote = "(This turn failed before an answer; the user wrote again.)"

// printer renders a turn's events on a terminal. Tool events come from the
// parallel tool calls of one response, so writes are serialized.
func printer(w io.Writer) func(engine.Event) {
	var mu sync.Mutex
	return func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Kind {
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
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

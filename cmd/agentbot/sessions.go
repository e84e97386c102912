package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"agentbot/bot"
	"agentbot/engine"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// runSessions lists, shows, exports or prunes stored sessions.
func runSessions(ctx context.Context, e *env) int {
	var out string
	var olderThan time.Duration
	cfg, args, code := parse("sessions", e, func(fs *flagSet) {
		fs.StringVar(&out, "o", "", "export: write to this file instead of stdout")
		fs.DurationVar(&olderThan, "older-than", 0, "prune: remove sessions inactive this long (default: --session-ttl)")
	})
	if cfg == nil {
		return code
	}
	if len(args) == 0 {
		fmt.Fprintln(e.stderr, "usage: agentbot sessions list | show ID | export ID [-o FILE] | prune [--older-than DURATION]")
		return 2
	}
	st, closeStore, err := openReader(ctx, cfg, args[0] != "prune")
	if args[0] == "prune" && errors.Is(err, bolt.ErrLocked) {
		fmt.Fprintf(e.stderr, "agentbot sessions prune: %v: agentbot serve holds the store; it prunes by itself with AGENTBOT_SESSION_TTL, or stop it to prune by hand\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot sessions: %v\n", err)
		return storeExitCode(err)
	}
	defer closeStore()

	find := func() (*transcript.Session, int) {
		if len(args) < 2 {
			fmt.Fprintf(e.stderr, "agentbot sessions %s: which session? give its ID (agentbot sessions list)\n", args[0])
			return nil, 2
		}
		// An ID, or else a key as list shows it ("chat/demo").
		s, err := st.Lookup(args[1])
		if err != nil {
			fmt.Fprintf(e.stderr, "agentbot sessions %s: %v\n", args[0], err)
			return nil, 1
		}
		return s, 0
	}

	switch args[0] {
	case "list":
		list, err := st.ListSessions()
		if err != nil {
			fmt.Fprintf(e.stderr, "agentbot sessions list: %v\n", err)
			return 1
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tAGENT\tMESSAGES\tOUTPUTS\tTOKENS\tUPDATED\tKEY")
		for _, s := range list {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", s.ID, s.AgentID, s.Messages, s.Outputs,
				s.Usage.Prompt+s.Usage.Completion, s.Updated.Local().Format("2006-01-02 15:04"), s.Key)
		}
		tw.Flush()
		return 0
	case "show":
		s, code := find()
		if s == nil {
			return code
		}
		fmt.Fprintf(e.stdout, "ID:       %s\nKey:      %s\nAgent:    %s\nDate:     %s\nMessages: %d\nCreated:  %s\nUpdated:  %s\nUsage:    %d calls, %d prompt tokens (%d cached), %d completion tokens\n",
			s.ID, s.Key, s.AgentID, s.Date, len(s.Messages), s.Created.Local().Format(time.RFC3339), s.Updated.Local().Format(time.RFC3339),
			s.Usage.Calls, s.Usage.Prompt, s.Usage.Cached, s.Usage.Completion)
		for _, o := range s.Outputs {
			if o.Internal {
				continue
			}
			fmt.Fprintf(e.stdout, "Output:   %s v%d (%d bytes)\n", o.Path, o.Version, o.Size)
		}
		feedback, err := bot.SessionFeedback(s)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentbot sessions show: %v\n", err)
		}
		for _, f := range feedback {
			wf := ""
			if f.Workflow != "" {
				wf = " on " + f.Workflow
			}
			fmt.Fprintf(e.stdout, "Feedback: %s by %s%s, answer %s, %s\n", f.Value, f.User, wf, f.TS, f.Time.Local().Format("2006-01-02 15:04"))
		}
		for _, p := range s.Pending {
			state := "waiting"
			if p.Decision != "" {
				state = strings.TrimSpace(p.Decision + " " + p.By)
			}
			fmt.Fprintf(e.stdout, "Pending:  %s (call %s), asked %s, %s\n", p.Tool, p.CallID, p.Asked.Local().Format("2006-01-02 15:04:05"), state)
		}
		if len(s.Audit) > 0 {
			// The same table as sessions export (times in UTC).
			fmt.Fprintf(e.stdout, "\n%d tool call(s):\n\n%s", len(s.Audit), engine.AuditTable(s.Audit))
		}
		return 0
	case "export":
		s, code := find()
		if s == nil {
			return code
		}
		md := engine.ExportMarkdown(s)
		if out == "" {
			fmt.Fprint(e.stdout, md)
			return 0
		}
		if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
			fmt.Fprintf(e.stderr, "agentbot sessions export: %v\n", err)
			return 1
		}
		fmt.Fprintf(e.stdout, "wrote %s (%d bytes)\n", out, len(md))
		return 0
	case "prune":
		ttl := olderThan
		if ttl == 0 {
			ttl = cfg.SessionTTL
		}
		if ttl <= 0 {
			fmt.Fprintln(e.stderr, "agentbot sessions prune: say how old: --older-than 720h (or set AGENTBOT_SESSION_TTL)")
			return 2
		}
		// prune opens the store itself (never the control socket), so st
		// has Retention.
		ids, err := st.(storage.Retention).Prune(time.Now().Add(-ttl))
		if err != nil {
			fmt.Fprintf(e.stderr, "agentbot sessions prune: %v\n", err)
			return 1
		}
		fmt.Fprintf(e.stdout, "removed %d session(s) inactive for more than %s\n", len(ids), ttl)
		for _, id := range ids {
			fmt.Fprintln(e.stdout, id)
		}
		return 0
	}
	fmt.Fprintf(e.stderr, "agentbot sessions: unknown subcommand %q\n", args[0])
	return 2
}

// openReader opens the store (PostgreSQL when configured, which every
// replica shares), or, when a running agentbot holds the bbolt store and
// remote is allowed, reaches that agentbot's control socket.
func openReader(ctx context.Context, cfg *Config, remote bool) (storage.SessionList, func(), error) {
	dir := cfg.DataDir
	st, err := openStore(ctx, cfg)
	if err == nil {
		return st, func() { st.Close() }, nil
	}
	if !errors.Is(err, bolt.ErrLocked) || !remote {
		return nil, nil, err
	}
	r, derr := bolt.Dial(dir)
	if derr != nil {
		return nil, nil, fmt.Errorf("%w; and the running agentbot did not answer on its control socket (%v): run this on the machine that runs it, with the same data folder", err, derr)
	}
	return r, func() {}, nil
}

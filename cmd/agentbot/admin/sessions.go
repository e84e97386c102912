package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"agentbot/bot"
	"agentbot/cmd/agentbot/stores"
	"agentbot/engine"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// SessionsSynopsis is the synopsis of agentbot sessions. ID is a
// session's id, its key as list shows it, or the name chat's banner gives.
const SessionsSynopsis = "list | show ID | export ID [-o FILE [--force]] | delete ID | prune [--older-than DURATION]"

// Sessions is agentbot sessions: its flags, the settings it reads and
// where it writes.
type Sessions struct {
	Stdout, Stderr io.Writer
	Store          stores.Store
	// Out is export's -o FILE ("": stdout); Force lets it overwrite FILE.
	Out   string
	Force bool
	// OlderThan is prune's --older-than (0: TTL, --session-ttl).
	OlderThan, TTL time.Duration
}

// Run lists, shows, exports, deletes or prunes stored sessions, as args
// (the subcommand and its arguments) say, and returns the exit code. list,
// show and export reach a running agentbot's store through its control
// socket; delete and prune need the store to themselves.
func (o *Sessions) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(o.Stderr, "usage: agentbot sessions "+SessionsSynopsis)
		return 2
	}
	r := &sessionsRun{Sessions: o, ctx: ctx, verb: args[0], args: args[1:]}
	v, ok := sessionVerbs[r.verb]
	if !ok {
		fmt.Fprintf(o.Stderr, "agentbot sessions: unknown subcommand %q\nusage: agentbot sessions %s\n", r.verb, SessionsSynopsis)
		return 2
	}
	if code := r.argsOK(); code != 0 {
		return code
	}
	st, closeStore, where, err := openReader(ctx, o.Store, !v.writes)
	var none *stores.NoStoreError
	switch {
	case v.writes && errors.Is(err, bolt.ErrLocked):
		fmt.Fprintf(o.Stderr, "agentbot sessions %s: %v: the running agentbot holds the store; stop it to %s sessions by hand (serve prunes by itself with AGENTBOT_SESSION_TTL)\n", r.verb, err, r.verb)
		return 1
	case errors.As(err, &none):
		// Nothing stored yet, and nothing made: nothing to list, find or
		// remove.
		fmt.Fprintf(o.Stderr, "agentbot sessions %s: %v\n", r.verb, err)
		if v.writes && r.verb == "prune" {
			return 0
		}
		if v.writes {
			return 1
		}
		st, closeStore = noSessions{none}, func() {}
	case err != nil:
		fmt.Fprintf(o.Stderr, "agentbot sessions: %v\n", err)
		return stores.ExitCode(err)
	default:
		if !v.writes {
			fmt.Fprintf(o.Stderr, "agentbot sessions %s: reading %s\n", r.verb, where)
		}
	}
	defer closeStore()
	r.st = st
	return v.run(r)
}

// argsOK checks a subcommand's arguments before the store is reached; it
// returns the exit code of wrong ones (0: they are right).
func (r *sessionsRun) argsOK() int {
	switch {
	case r.verb == "show" || r.verb == "export" || r.verb == "delete":
		if len(r.args) < 1 {
			return r.fail(2, "which session? give its ID (agentbot sessions list)")
		}
	case r.verb == "prune" && r.pruneTTL() <= 0:
		return r.fail(2, "say how old: --older-than 720h (or set AGENTBOT_SESSION_TTL)")
	}
	return 0
}

// pruneTTL is how long a session prune removes must have been inactive.
func (r *sessionsRun) pruneTTL() time.Duration {
	if r.OlderThan != 0 {
		return r.OlderThan
	}
	return r.TTL
}

// noSessions is a data folder without a store, read: no session in it.
type noSessions struct{ none *stores.NoStoreError }

func (noSessions) ListSessions(context.Context) ([]storage.SessionInfo, error) { return nil, nil }

func (n noSessions) Lookup(_ context.Context, idOrKey string) (*transcript.Session, error) {
	return nil, fmt.Errorf("load session %s: %w: %v", idOrKey, storage.ErrNotFound, n.none)
}

// sessionsRun is one run of agentbot sessions: the subcommand, its
// arguments, and the store it reads.
type sessionsRun struct {
	*Sessions
	ctx  context.Context
	st   sessionReader
	verb string
	args []string
}

// sessionVerbs are the subcommands of agentbot sessions. Those that write
// open the store themselves, never a running agentbot's control socket,
// so their store is a storage.Backend.
var sessionVerbs = map[string]struct {
	writes bool
	run    func(*sessionsRun) int
}{
	"list":   {false, (*sessionsRun).list},
	"show":   {false, (*sessionsRun).show},
	"export": {false, (*sessionsRun).export},
	"delete": {true, (*sessionsRun).delete},
	"prune":  {true, (*sessionsRun).prune},
}

// fail prints a subcommand's error and returns code.
func (r *sessionsRun) fail(code int, format string, args ...any) int {
	fmt.Fprintf(r.Stderr, "agentbot sessions %s: %s\n", r.verb, fmt.Sprintf(format, args...))
	return code
}

// find returns the session the first argument names (argsOK made sure
// there is one), or the exit code.
func (r *sessionsRun) find() (*transcript.Session, int) {
	s, err := lookupSession(r.ctx, r.st, r.args[0])
	if err != nil {
		return nil, r.fail(1, "%v", err)
	}
	return s, 0
}

func (r *sessionsRun) list() int {
	list, err := r.st.ListSessions(r.ctx)
	if err != nil {
		return r.fail(1, "%v", err)
	}
	tw := tabwriter.NewWriter(r.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tMESSAGES\tOUTPUTS\tTOKENS\tUPDATED\tKEY")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", s.ID, s.AgentID, s.Messages, s.Outputs,
			s.Usage.Prompt+s.Usage.Completion, s.Updated.Local().Format("2006-01-02 15:04"), s.Key)
	}
	tw.Flush()
	return 0
}

func (r *sessionsRun) show() int {
	s, code := r.find()
	if s == nil {
		return code
	}
	w := r.Stdout
	fmt.Fprintf(w, "ID:       %s\nKey:      %s\nAgent:    %s\nDate:     %s\nMessages: %d\nCreated:  %s\nUpdated:  %s\nUsage:    %d calls, %d prompt tokens (%d cached), %d completion tokens (%d reasoning)\n",
		s.ID, s.Key, s.AgentID, s.Date, len(s.Messages), s.Created.Local().Format(time.RFC3339), s.Updated.Local().Format(time.RFC3339),
		s.Usage.Calls, s.Usage.Prompt, s.Usage.Cached, s.Usage.Completion, s.Usage.Reasoning)
	for _, o := range s.Outputs {
		if !o.Internal {
			fmt.Fprintf(w, "Output:   %s v%d (%d bytes)\n", o.Path, o.Version, o.Size)
		}
	}
	feedback, err := bot.SessionFeedback(s)
	if err != nil {
		fmt.Fprintf(r.Stderr, "agentbot sessions show: %v\n", err)
	}
	for _, f := range feedback {
		wf := ""
		if f.Workflow != "" {
			wf = " on " + f.Workflow
		}
		fmt.Fprintf(w, "Feedback: %s by %s%s, answer %s, %s\n", f.Value, f.User, wf, f.TS, f.Time.Local().Format("2006-01-02 15:04"))
	}
	for _, p := range s.Pending {
		state := "waiting"
		if p.Decision != "" {
			state = strings.TrimSpace(p.Decision + " " + p.By)
		}
		fmt.Fprintf(w, "Pending:  %s (call %s), asked %s, %s\n", p.Tool, p.CallID, p.Asked.Local().Format("2006-01-02 15:04:05"), state)
	}
	if len(s.Audit) > 0 {
		// The same table as sessions export (times in UTC).
		fmt.Fprintf(w, "\n%d tool call(s):\n\n%s", len(s.Audit), engine.AuditTable(s.Audit))
	}
	return 0
}

func (r *sessionsRun) export() int {
	s, code := r.find()
	if s == nil {
		return code
	}
	md := engine.ExportMarkdown(s)
	if r.Out == "" {
		fmt.Fprint(r.Stdout, md)
		return 0
	}
	if err := writeExport(r.Out, md, r.Force); err != nil {
		return r.fail(1, "%v", err)
	}
	fmt.Fprintf(r.Stdout, "wrote %s (%d bytes)\n", r.Out, len(md))
	return 0
}

func (r *sessionsRun) delete() int {
	s, code := r.find()
	if s == nil {
		return code
	}
	if err := r.st.(storage.Backend).DeleteSession(r.ctx, s.ID); err != nil {
		return r.fail(1, "%v", err)
	}
	fmt.Fprintf(r.Stdout, "deleted session %s (%s) and its working folder; the documents it saved stay in its project (agentbot projects list)\n", s.ID, s.Key)
	return 0
}

func (r *sessionsRun) prune() int {
	ttl := r.pruneTTL()
	ids, err := r.st.(storage.Backend).Prune(r.ctx, time.Now().Add(-ttl))
	if err != nil {
		return r.fail(1, "%v", err)
	}
	fmt.Fprintf(r.Stdout, "removed %d session(s) inactive for more than %s\n", len(ids), ttl)
	for _, id := range ids {
		fmt.Fprintln(r.Stdout, id)
	}
	return 0
}

// lookupSession finds a session by its id, its key ("chat/demo"), or the
// name chat's banner gives ("demo", "product-lead/20250101-…"), which is
// the key without "chat/".
func lookupSession(ctx context.Context, st sessionReader, name string) (*transcript.Session, error) {
	s, err := st.Lookup(ctx, name)
	if errors.Is(err, storage.ErrNotFound) && !strings.HasPrefix(name, chatKeyPrefix) {
		if byName, nerr := st.Lookup(ctx, chatKeyPrefix+name); nerr == nil {
			return byName, nil
		}
	}
	return s, err
}

// chatKeyPrefix starts the key of every session agentbot chat starts.
const chatKeyPrefix = "chat/"

// writeExport writes an export to file: a new file, or over an existing
// one only with force (as backup does).
func writeExport(file, md string, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(file, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists; choose another name or use --force", file)
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(md)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// sessionReader is what sessions list, show and export read: the store, or
// a running agentbot's through its control socket.
type sessionReader interface {
	ListSessions(ctx context.Context) ([]storage.SessionInfo, error)
	Lookup(ctx context.Context, idOrKey string) (*transcript.Session, error)
}

// storeReader is a store as a sessionReader: storage.Lookup finds in it.
type storeReader struct{ storage.Backend }

func (r storeReader) Lookup(ctx context.Context, idOrKey string) (*transcript.Session, error) {
	return storage.Lookup(ctx, r.Backend, idOrKey)
}

// openReader reaches the store: for list, show and export (remote) the
// running agentbot's first (reach), for delete and prune the store itself,
// never made (stores.NoStoreError). It also says which store it reached.
func openReader(ctx context.Context, store stores.Store, remote bool) (sessionReader, func(), string, error) {
	if remote {
		return reach(ctx, store, func(st storage.Backend) sessionReader { return storeReader{st} },
			func(r *bolt.Remote) sessionReader { return r })
	}
	st, err := store.OpenExisting(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	return storeReader{st}, func() { st.Close() }, store.Where(false), nil
}

// Retention removes sessions inactive longer than ttl, now and every hour,
// until ctx ends: serve's sessions prune (AGENTBOT_SESSION_TTL).
func Retention(ctx context.Context, st storage.Retention, ttl time.Duration, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		ids, err := st.Prune(ctx, time.Now().Add(-ttl))
		if err != nil {
			log.Error("prune sessions", "err", err)
		} else if len(ids) > 0 {
			log.Info("pruned inactive sessions", "count", len(ids), "ttl", ttl)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"agentbot/engine/project"
	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
)

// Outputs: every document a session saves is recorded here, in one place.
// A turn's calls record what they write through outputs (a document shown
// to the user, or a working file only kept); with an output store the
// bytes are stored first (storedOutputs), and a session's output folder is
// brought up to date from the store when its sandbox opens (outputSync).

// outputs records the documents the calls of one turn write as the
// session's outputs, and reports each.
type outputs struct {
	e    *Engine
	s    *Session
	sb   *sandbox.Sandbox
	emit func(Event)
	// mu is the turn's lock of the session's fields.
	mu *sync.Mutex
	// thisTurn maps an output path to its index in s.Outputs, for the
	// documents saved this turn.
	thisTurn map[string]int
}

// save records a document a call wrote, for events and the session. It
// fails when the output store refuses the bytes. doc, when set, is the
// project document version the bytes are: they are not stored again for
// the session.
func (o *outputs) save(ctx context.Context, virtual string, data []byte, doc *transcript.DocVersion, project string) (*Output, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.add(ctx, savedFile{virtual, data, false, doc, project})
}

// keep records a working file of the runtime's (a memlog) the same way,
// as an internal output: stored, never shown or uploaded.
func (o *outputs) keep(ctx context.Context, virtual string, data []byte, doc *transcript.DocVersion, project string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err := o.add(ctx, savedFile{virtual, data, true, doc, project})
	return err
}

// record records a file as save (shown) or keep (internal) does.
func (o *outputs) record(ctx context.Context, f savedFile) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err := o.add(ctx, f)
	return err
}

// add adds a saved document to the session and reports it. A
// document written several times in one turn is one version: the later
// writes update it, so it is shared once, with its final bytes. With an
// output store the bytes are stored first: a document the store refused is
// an error for the tool and stays out of the session (its local file
// stays), so a recorded output always has its bytes in the store.
func (o *outputs) add(ctx context.Context, f savedFile) (*Output, error) {
	e, s, sb, thisTurn, emit := o.e, o.s, o.sb, o.thisTurn, o.emit
	virtual, data, internal := f.virtual, f.data, f.internal
	rel := outputRel(virtual)
	i, again := thisTurn[rel]
	var out Output
	if again {
		out = s.Outputs[i]
		out.Size, out.Time = int64(len(data)), e.cfg.Now()
	} else {
		out = Output{Path: rel, Size: int64(len(data)), Version: transcript.NextVersion(s.Outputs, rel), Time: e.cfg.Now(), Internal: internal}
	}
	if f.doc != nil {
		// A project document: its bytes are stored once, in the project.
		out.Project, out.DocVersion = f.project, f.doc.Version
	} else if e.cfg.Outputs != nil {
		out.Project, out.DocVersion = "", 0
		if err := e.stored.put(ctx, s.ID, out, data); err != nil {
			e.cfg.Logger.Error("store document", "session", s.ID, "path", rel, "version", out.Version, "err", err)
			return nil, fmt.Errorf("%s was written but could not be stored, so the user would not get it (%v); save it again", virtual, err)
		}
	}
	if again {
		s.Outputs[i] = out
	} else {
		thisTurn[rel] = len(s.Outputs)
		s.Outputs = append(s.Outputs, out)
	}
	if internal {
		return &out, nil // kept for another replica, never shown or uploaded
	}
	host, _ := sb.HostPath(virtual)
	emit(Event{Kind: EventOutput, Output: &out, HostPath: host, Status: "saved " + rel})
	return &out, nil
}

// savedFile is a file a call wrote under /outputs, for outputs.add:
// internal for a working file of the runtime's, doc and project for a
// project document version (its bytes are the project's).
type savedFile struct {
	virtual  string
	data     []byte
	internal bool
	doc      *transcript.DocVersion
	project  string
}

// storedKey names a document version in storedOutputs.
func storedKey(sessionID string, o transcript.Output) string {
	return sessionID + "\x00" + o.Path + "\x00" + strconv.Itoa(o.Version)
}

// storedOutputs is the engine's side of Config.Outputs: it marks the
// document versions known to be in the store with the bytes of the local
// file (keys from storedKey).
type storedOutputs struct {
	st   OutputStore
	mark sync.Map
}

// put stores the bytes of a document version in the output store and
// marks the version stored.
func (so *storedOutputs) put(ctx context.Context, sessionID string, o transcript.Output, data []byte) error {
	if err := so.st.PutOutput(ctx, sessionID, o, data); err != nil {
		return err
	}
	so.mark.Store(storedKey(sessionID, o), struct{}{})
	return nil
}

// OutputData returns the bytes of a version of a session's document: from
// its project when the version is a project document's (stored once,
// there), else from the output store, where documents saved before
// projects stay readable.
func (e *Engine) OutputData(ctx context.Context, sessionID string, o transcript.Output) ([]byte, error) {
	if o.Project != "" {
		if e.cfg.Projects == nil || e.cfg.Projects.Store == nil {
			return nil, fmt.Errorf("%s v%d is a document of project %s, and projects are off", o.Path, o.Version, o.Project)
		}
		return e.cfg.Projects.Store.DocumentData(ctx, o.Project, o.Path, o.DocVersion)
	}
	if e.cfg.Outputs == nil {
		return nil, fmt.Errorf("%s v%d: no output store", o.Path, o.Version)
	}
	return e.cfg.Outputs.OutputData(ctx, sessionID, o.Path, o.Version)
}

// run brings the session's output folder root up to date with the
// output store, so a replica taking a thread over sees the documents saved
// before: the latest version of each document that is missing locally, or
// whose size is not the recorded one, is written from the store. A
// document found only locally (saved before documents were stored) is
// stored from its file. Problems are logged; the turn goes on with what
// there is.
func (sy *outputSync) run(ctx context.Context, root, inputRoot string) {
	if sy.e.cfg.Outputs == nil || root == "" || len(sy.outputs) == 0 {
		return
	}
	defer sy.close()
	for _, o := range transcript.Latest(sy.outputs) {
		dir, name := root, filepath.FromSlash(o.Path)
		if rest, ok := strings.CutPrefix(o.Path, transcript.InputPrefix); ok {
			dir, name = inputRoot, filepath.FromSlash(rest) // a file people shared
		}
		if !filepath.IsLocal(name) || dir == "" {
			sy.log.Warn("document path is not under /outputs; not synced", "path", o.Path)
			continue
		}
		if r := sy.open(dir); r != nil {
			sy.one(ctx, r, name, o)
		}
	}
}

// outputSync is one run of outputSync.run: the session, its outputs, its
// log, and the folders opened so far.
type outputSync struct {
	e       *Engine
	session string
	outputs []Output
	log     *slog.Logger
	roots   map[string]*os.Root // nil where the folder could not be opened
}

// newOutputSync returns the sync of the output folder of s.
func newOutputSync(e *Engine, s *Session) *outputSync {
	return &outputSync{e: e, session: s.ID, outputs: s.Outputs, log: e.cfg.Logger.With("session", s.ID), roots: map[string]*os.Root{}}
}

// open returns the folder dir opened as a root, once per run; nil when it
// cannot be opened (logged).
func (sy *outputSync) open(dir string) *os.Root {
	if r, ok := sy.roots[dir]; ok {
		return r
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		sy.log.Error("open session folder", "err", err)
	}
	sy.roots[dir] = r
	return r
}

// close closes the folders the run opened.
func (sy *outputSync) close() {
	for _, r := range sy.roots {
		if r != nil {
			r.Close()
		}
	}
}

// one brings the document o, at name inside r, up to date with the store,
// or stores it from its file when only the file has it.
func (sy *outputSync) one(ctx context.Context, r *os.Root, name string, o transcript.Output) {
	key := storedKey(sy.session, o)
	fi, err := r.Stat(name)
	local := err == nil && fi.Mode().IsRegular() && fi.Size() == o.Size
	if _, ok := sy.e.stored.mark.Load(key); ok && local {
		return
	}
	data, err := sy.e.OutputData(ctx, sy.session, o)
	switch {
	case err == nil:
		if !local || int64(len(data)) != fi.Size() {
			if werr := project.WriteRooted(r, name, data); werr != nil {
				sy.log.Error("restore document from the store", "path", o.Path, "err", werr)
				return
			}
		}
		sy.e.stored.mark.Store(key, struct{}{})
	case local:
		// Saved before documents lived in the store: store the file.
		data, rerr := r.ReadFile(name)
		if rerr == nil {
			rerr = sy.e.stored.put(ctx, sy.session, o, data)
		}
		if rerr != nil {
			sy.log.Error("store local document", "path", o.Path, "version", o.Version, "err", rerr)
			return
		}
		sy.log.Info("stored a document kept only locally", "path", o.Path, "version", o.Version)
	default:
		sy.log.Error("document is neither stored nor local", "path", o.Path, "version", o.Version, "err", err)
	}
}

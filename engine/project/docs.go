package project

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
)

// Docs are a project's documents as the tool calls of one turn of one
// session see them: reads bring a document up to date first, saves are
// refused when another thread saved a version this session has not seen,
// edits apply to the latest version atomically in the store.
type Docs struct {
	Folder  *Folder
	Store   Store
	Sandbox *sandbox.Sandbox
	// Session is the session's record (the author of the versions it
	// saves, and what it has seen and written, Seen and Wrote); Person
	// is who writes in the current turn.
	Session *transcript.Session
	Person  string
	// Name says how a person is called (a display name; "" when not
	// known, or nil): the authors the tools name to the model.
	Name func(ctx context.Context, person string) string
	// Mu guards Session's Seen and Wrote while calls run in parallel.
	Mu *sync.Mutex
	// MaxWrite caps a document's size.
	MaxWrite int64
	Logger   *slog.Logger
	// Record records a version the session wrote as its output; an
	// internal one (a memlog) is kept, never shown or uploaded.
	Record func(ctx context.Context, virtual string, data []byte, v *transcript.DocVersion, internal bool) error
}

// Saved is a version a save or an edit made: its virtual path, size and
// version.
type Saved struct {
	Path    string
	Bytes   int
	Version int
}

// outputRel is a virtual path under /outputs relative to that folder.
func outputRel(virtual string) string {
	return strings.TrimPrefix(strings.TrimPrefix(virtual, sandbox.OutputDir), "/")
}

// seenKey names a project document in Session.Seen.
func seenKey(project, docPath string) string { return project + "\x00" + docPath }

// seen is the version of a document the session has read or written.
func (d *Docs) seen(docPath string) int {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	return d.Session.Seen[seenKey(d.Folder.name, docPath)]
}

// markSeen records that the session has read or written version v.
func (d *Docs) markSeen(docPath string, v int) {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	if d.Session.Seen == nil {
		d.Session.Seen = map[string]int{}
	}
	d.Session.Seen[seenKey(d.Folder.name, docPath)] = v
}

// markWrote records that the session wrote version v.
func (d *Docs) markWrote(docPath string, v int) {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	if d.Session.Wrote == nil {
		d.Session.Wrote = map[string]int{}
	}
	d.Session.Wrote[seenKey(d.Folder.name, docPath)] = v
}

// AppendLanded finds an append that already landed: the latest version is
// this session's own, one its transcript never recorded (the process
// stopped after the store took it), and it ends with text. Then the
// append is not made again, and that version is its result.
func (d *Docs) AppendLanded(ctx context.Context, p, text string) (Saved, bool) {
	virtual, docPath, err := d.path(p, 0)
	if err != nil {
		return Saved{}, false
	}
	st := d.Store
	hist, err := st.DocumentHistory(ctx, d.Folder.name, docPath)
	if err != nil || len(hist) == 0 || hist[0].Session != d.Session.ID {
		return Saved{}, false
	}
	d.Mu.Lock()
	wrote := d.Session.Wrote[seenKey(d.Folder.name, docPath)]
	d.Mu.Unlock()
	if wrote >= hist[0].Version {
		return Saved{}, false
	}
	data, err := st.DocumentData(ctx, d.Folder.name, docPath, hist[0].Version)
	if err != nil || !strings.HasSuffix(string(data), text) {
		return Saved{}, false
	}
	res, err := d.landed(ctx, virtual, hist[0], data, d.seen(docPath) == hist[0].Version-1, false)
	return res, err == nil
}

// name is how person is called (Name), "" when not known.
func (d *Docs) name(ctx context.Context, person string) string {
	if d.Name == nil || person == "" {
		return ""
	}
	return d.Name(ctx, person)
}

// author is the record of who writes in this session.
func (d *Docs) author(docPath string) transcript.DocVersion {
	return transcript.DocVersion{Path: docPath, Session: d.Session.ID, Thread: d.Session.Key, Source: transcript.SourceOf(d.Session.Key), Agent: d.Session.AgentID, Person: d.Person}
}

// path resolves p for a write and returns its virtual path and its
// document path in the project.
func (d *Docs) path(p string, size int) (virtual, docPath string, err error) {
	virtual, err = d.Sandbox.Resolve(p, true)
	if err != nil {
		return "", "", err
	}
	if max := d.MaxWrite; int64(size) > max {
		return "", "", fmt.Errorf("%s: content is too large to save (%d bytes; the limit is %d)", virtual, size, max)
	}
	return virtual, outputRel(virtual), nil
}

// Save saves a whole document as the project's next version,
// refused when another thread saved a version this session has not seen.
func (d *Docs) Save(ctx context.Context, p string, content []byte) (Saved, error) {
	virtual, docPath, err := d.path(p, len(content))
	if err != nil {
		return Saved{}, err
	}
	st := d.Store
	v, err := st.SaveDocument(ctx, d.Folder.name, d.author(docPath), d.seen(docPath), content)
	var stale *transcript.StaleError
	if errors.As(err, &stale) {
		_, _ = d.Folder.freshen(ctx, st, docPath) // the model's next read gets the latest
		stale.By = d.name(ctx, stale.Latest.Person)
		return Saved{}, stale
	}
	if err != nil {
		return Saved{}, fmt.Errorf("%s could not be saved (%v); save it again", virtual, err)
	}
	return d.landed(ctx, virtual, v, content, true, false)
}

// Edit changes the latest version of a document atomically: edit
// gets its bytes (nil when missing) and returns the new ones. An internal
// file (a memlog) is kept, not shown or uploaded.
func (d *Docs) Edit(ctx context.Context, p string, internal bool, edit func(old []byte) ([]byte, error)) (Saved, error) {
	virtual, docPath, err := d.path(p, 0)
	if err != nil {
		return Saved{}, err
	}
	max := d.MaxWrite
	var data []byte
	v, err := d.Store.EditDocument(ctx, d.Folder.name, d.author(docPath), func(old []byte) ([]byte, error) {
		out, err := edit(old)
		if err == nil && int64(len(out)) > max {
			err = fmt.Errorf("%s: the edited document is too large to save (%d bytes; the limit is %d)", virtual, len(out), max)
		}
		if err != nil {
			return nil, &editError{err}
		}
		data = out
		return out, nil
	})
	if err != nil {
		var refused *editError
		if errors.As(err, &refused) {
			return Saved{}, refused.err
		}
		return Saved{}, err
	}
	// Edits build on the latest version: the session has seen it only if
	// it had seen the one before.
	return d.landed(ctx, virtual, v, data, d.seen(docPath) == v.Version-1, internal)
}

// editError carries an edit's own refusal (old_text not found …) out of
// the store unwrapped.
type editError struct{ err error }

// Error is the edit's own refusal.
func (e *editError) Error() string { return e.err.Error() }

// Unwrap returns the edit's error.
func (e *editError) Unwrap() error { return e.err }

// landed writes a stored version to the working copy, records it in the
// session and reports it like any saved document (an internal file is
// only kept).
func (d *Docs) landed(ctx context.Context, virtual string, v transcript.DocVersion, data []byte, seen, internal bool) (Saved, error) {
	if err := d.Folder.Landed(v, data); err != nil {
		d.Logger.Error("project: write the working copy", "project", d.Folder.name, "path", v.Path, "err", err)
	}
	if seen {
		d.markSeen(v.Path, v.Version)
	}
	d.markWrote(v.Path, v.Version)
	if err := d.Record(ctx, virtual, data, &v, internal); err != nil {
		return Saved{}, err
	}
	return Saved{Path: virtual, Bytes: len(data), Version: v.Version}, nil
}

// Read brings a document under /outputs up to date before a read,
// and after it records the version read as seen. p is the path as given.
func (d *Docs) Read(ctx context.Context, p string) (data []byte, virtual string, err error) {
	if v, rerr := d.Sandbox.Resolve(p, false); rerr == nil && isOutput(v) {
		if _, ferr := d.Folder.freshen(ctx, d.Store, outputRel(v)); ferr != nil {
			d.Logger.Warn("project: refresh a document before a read", "project", d.Folder.name, "err", ferr)
		}
	}
	data, virtual, err = d.Sandbox.ReadFile(p)
	if err == nil && isOutput(virtual) {
		rel := outputRel(virtual)
		d.markSeen(rel, d.Folder.local(rel))
	}
	return data, virtual, err
}

// isOutput reports whether a virtual path is under /outputs.
func isOutput(virtual string) bool {
	return strings.HasPrefix(virtual, "/outputs/")
}

// Share makes a file person shared in a thread a file of the project
// (the next version of its name, by person), readable under /inputs in
// every thread.
func (pf *Folder) Share(ctx context.Context, st Store, s *transcript.Session, person, docPath string, data []byte) error {
	v := transcript.DocVersion{Path: docPath, Session: s.ID, Thread: s.Key, Source: transcript.SourceOf(s.Key), Agent: s.AgentID, Person: person}
	v, err := st.SaveDocument(ctx, pf.name, v, transcript.AnyVersion, data)
	if err != nil {
		return fmt.Errorf("share %s in project %s: %w", docPath, pf.name, err)
	}
	return pf.Landed(v, data)
}

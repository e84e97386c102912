package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"agentbot/engine/transcript"
)

// ProjectStore keeps projects' shared, versioned documents; both stores
// meet it (storage.Projects). With it, a session's /outputs are its
// project's documents: every thread of the project reads and writes the
// same ones, each write a new version.
type ProjectStore interface {
	// SaveDocument stores the next version if base is the latest (see
	// transcript.StaleError), EditDocument edit(latest) atomically.
	SaveDocument(ctx context.Context, project string, v transcript.DocVersion, base int, data []byte) (transcript.DocVersion, error)
	EditDocument(ctx context.Context, project string, v transcript.DocVersion, edit func(old []byte) ([]byte, error)) (transcript.DocVersion, error)
	// Documents lists the latest version of each document, newest first;
	// DocumentHistory one document's versions, newest first.
	Documents(ctx context.Context, project string) ([]transcript.DocVersion, error)
	DocumentHistory(ctx context.Context, project, path string) ([]transcript.DocVersion, error)
	// DocumentData returns a version's bytes (0: the latest).
	DocumentData(ctx context.Context, project, path string, version int) ([]byte, error)
}

// Projects configures shared documents (Config.Projects).
type Projects struct {
	Store ProjectStore
	// Of names the project of a session key ("" : the session keeps its
	// own /outputs, as without projects). An error (the store did not
	// answer) fails the turn as the store's (SaveError), never a guess: a
	// document must not land in another project.
	Of func(sessionKey string) (string, error)
	// Root is the host folder where this process keeps its working copy
	// of a project's documents (and the files people shared in it).
	Root func(project string) string
}

// sharedInputPrefix starts the document path of a file people shared in
// a thread of the project: every thread reads it under /inputs.
const sharedInputPrefix = transcript.InputPrefix

// versionsFile, beside a project's working folders, records the version
// of each local copy, so a restart fetches only what changed.
const versionsFile = "versions.json"

// projectFolder is this process's working copy of one project: its
// documents (mounted at /outputs), shared files (/inputs), and the
// version of each local copy. mu orders the local writes of all sessions
// of the project.
type projectFolder struct {
	name, root string
	mu         sync.Mutex
	versions   map[string]int // nil until loaded
}

// docs and inputs are the folders the sandbox mounts.
func (pf *projectFolder) docs() string   { return filepath.Join(pf.root, "documents") }
func (pf *projectFolder) inputs() string { return filepath.Join(pf.root, "inputs") }

// projectOf returns the working copy of the session's project, or nil
// when the session keeps its own /outputs; the error is the store's
// (SaveError). A turn asks once, when it opens its sandbox
// (Session.project); its tools use that answer.
func (e *Engine) projectOf(s *Session) (*projectFolder, error) {
	p := e.cfg.Projects
	if p == nil || p.Store == nil || p.Of == nil || p.Root == nil {
		return nil, nil
	}
	name, err := p.Of(s.Key)
	if err != nil {
		return nil, &SaveError{Err: fmt.Errorf("project of session %s: %w", s.ID, err)}
	}
	if name == "" {
		return nil, nil
	}
	if pf, ok := e.projects.Load(name); ok {
		return pf.(*projectFolder), nil
	}
	pf, _ := e.projects.LoadOrStore(name, &projectFolder{name: name, root: p.Root(name)})
	return pf.(*projectFolder), nil
}

// load reads the versions of the local copies; pf.mu is held.
func (pf *projectFolder) load() {
	if pf.versions != nil {
		return
	}
	pf.versions = map[string]int{}
	if data, err := os.ReadFile(filepath.Join(pf.root, versionsFile)); err == nil {
		_ = json.Unmarshal(data, &pf.versions) // unreadable: everything is fetched again
	}
}

// persist writes the versions of the local copies; pf.mu is held.
func (pf *projectFolder) persist() error {
	data, err := json.Marshal(pf.versions)
	if err != nil {
		return err
	}
	tmp := filepath.Join(pf.root, versionsFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(pf.root, versionsFile))
}

// sync brings the working copy up to date with the store: every document
// whose latest version is not the local one is fetched. The base layers
// are folders of the BMAD root (baseLayers): their files that are no
// project document show as they are (version 0), read-only, a save puts
// a version on top of.
func (pf *projectFolder) sync(st ProjectStore, base []baseLayer) error {
	docs, err := st.Documents(context.TODO(), pf.name)
	if err != nil {
		return fmt.Errorf("project %s: %w", pf.name, err)
	}
	pf.mu.Lock()
	defer pf.mu.Unlock()
	if err := os.MkdirAll(pf.docs(), 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(pf.inputs(), 0o700); err != nil {
		return err
	}
	pf.load()
	changed := false
	var errs []error
	for _, d := range docs {
		if pf.versions[d.Path] == d.Version {
			continue
		}
		data, err := st.DocumentData(context.TODO(), pf.name, d.Path, d.Version)
		if err == nil {
			err = pf.writeLocal(d.Path, d.Version, data)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s v%d: %w", d.Path, d.Version, err))
			continue
		}
		changed = true
	}
	if pf.prune(base) {
		changed = true
	}
	for _, b := range base {
		if pf.overlay(b) {
			changed = true
		}
	}
	if changed {
		errs = append(errs, pf.persist())
	}
	return errors.Join(errs...)
}

// maxBaseFiles bounds the base layer's files taken in.
const maxBaseFiles = 1000

// overlay copies the base layer's files that are neither project
// documents nor local yet; pf.mu is held. It reports a change.
func (pf *projectFolder) overlay(base baseLayer) bool {
	root, err := os.OpenRoot(base.dir)
	if err != nil {
		return false
	}
	defer root.Close()
	changed, n := false, 0
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || n >= maxBaseFiles {
			return fs.SkipDir
		}
		if !base.screen.ShownEntry(p, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil // a secret or a hidden file stays out of the documents
		}
		if !d.Type().IsRegular() {
			return nil
		}
		n++
		doc := base.prefix + p
		if _, ok := pf.versions[doc]; ok {
			return nil
		}
		data, rerr := root.ReadFile(p)
		if rerr == nil && pf.writeLocal(doc, 0, data) == nil {
			changed = true
		}
		return nil
	})
	return changed
}

// prune removes from the working copy the base layers' files (version 0)
// their layer's screen now refuses, copied before it did: a hidden folder
// or a secret stays out of the documents even where an older agentbot
// copied it in; pf.mu is held. It reports a change.
func (pf *projectFolder) prune(base []baseLayer) bool {
	changed := false
	shownDir := map[string]bool{} // layer prefix + folder: shown
	for doc, v := range pf.versions {
		if v != 0 {
			continue // a project version: a document of the project
		}
		var from *baseLayer
		for i := range base {
			if strings.HasPrefix(doc, base[i].prefix) && (from == nil || len(base[i].prefix) > len(from.prefix)) {
				from = &base[i]
			}
		}
		if from == nil {
			continue
		}
		rel := path.Clean(strings.TrimPrefix(doc, from.prefix))
		if !filepath.IsLocal(filepath.FromSlash(rel)) || from.shown(rel, shownDir) {
			continue
		}
		if err := pf.removeLocal(doc); err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue // tried again at the next sync
		}
		delete(pf.versions, doc)
		changed = true
	}
	return changed
}

// shown reports whether the layer's file rel passes its screen, its
// folders judged top down, once each (memo: by prefix and folder).
func (b *baseLayer) shown(rel string, memo map[string]bool) bool {
	return b.shownDir(path.Dir(rel), memo) && b.screen.ShownEntry(rel, false)
}

// shownDir reports whether the layer's folder dir ("." its root) and
// every folder above it pass its screen.
func (b *baseLayer) shownDir(dir string, memo map[string]bool) bool {
	key := b.prefix + "\x00" + dir
	ok, seen := memo[key]
	if !seen {
		ok = (dir == "." || b.shownDir(path.Dir(dir), memo)) && b.screen.ShownEntry(dir, true)
		memo[key] = ok
	}
	return ok
}

// removeLocal removes one document's local copy and the folders it leaves
// empty; pf.mu is held.
func (pf *projectFolder) removeLocal(docPath string) error {
	dir, name, err := pf.localPath(docPath)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Remove(name); err != nil {
		return err
	}
	for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
		if r.Remove(d) != nil {
			break // not empty
		}
	}
	return nil
}

// localPath is the folder (documents or inputs) and the name in it of a
// document's local copy.
func (pf *projectFolder) localPath(docPath string) (dir, name string, err error) {
	dir, name = pf.docs(), docPath
	if rest, ok := strings.CutPrefix(docPath, sharedInputPrefix); ok {
		dir, name = pf.inputs(), rest
	}
	name = filepath.FromSlash(path.Clean(name))
	if !filepath.IsLocal(name) {
		return "", "", fmt.Errorf("document path %q is not inside the project", docPath)
	}
	return dir, name, nil
}

// writeLocal writes one version's bytes to the working copy and records
// its version; pf.mu is held. A shared file goes to the inputs folder.
func (pf *projectFolder) writeLocal(docPath string, version int, data []byte) error {
	dir, name, err := pf.localPath(docPath)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := writeRooted(r, name, data); err != nil {
		return err
	}
	pf.versions[docPath] = version
	return nil
}

// landed writes a version the store just took to the working copy,
// unless a newer one is there already.
func (pf *projectFolder) landed(v transcript.DocVersion, data []byte) error {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	pf.load()
	if pf.versions[v.Path] >= v.Version {
		return nil
	}
	if err := pf.writeLocal(v.Path, v.Version, data); err != nil {
		return err
	}
	return pf.persist()
}

// freshen fetches the latest version of one document when the working
// copy holds an older one, and returns the version the copy holds (0:
// none, or the base layer's).
func (pf *projectFolder) freshen(st ProjectStore, docPath string) (int, error) {
	hist, err := st.DocumentHistory(context.TODO(), pf.name, docPath)
	if err != nil {
		return 0, fmt.Errorf("project %s: %w", pf.name, err)
	}
	pf.mu.Lock()
	defer pf.mu.Unlock()
	pf.load()
	if len(hist) == 0 || pf.versions[docPath] >= hist[0].Version {
		return pf.versions[docPath], nil
	}
	data, err := st.DocumentData(context.TODO(), pf.name, docPath, hist[0].Version)
	if err != nil {
		return pf.versions[docPath], err
	}
	if err := pf.writeLocal(docPath, hist[0].Version, data); err != nil {
		return pf.versions[docPath], err
	}
	return hist[0].Version, pf.persist()
}

// local is the version of the working copy of one document.
func (pf *projectFolder) local(docPath string) int {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	pf.load()
	return pf.versions[docPath]
}

// seenKey names a project document in Session.Seen.
func seenKey(project, docPath string) string { return project + "\x00" + docPath }

// seen is the version of a document the session has read or written.
func (env *toolEnv) seen(pf *projectFolder, docPath string) int {
	env.mu.Lock()
	defer env.mu.Unlock()
	return env.s.Seen[seenKey(pf.name, docPath)]
}

// markSeen records that the session has read or written version v.
func (env *toolEnv) markSeen(pf *projectFolder, docPath string, v int) {
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.s.Seen == nil {
		env.s.Seen = map[string]int{}
	}
	env.s.Seen[seenKey(pf.name, docPath)] = v
}

// markWrote records that the session wrote version v.
func (env *toolEnv) markWrote(pf *projectFolder, docPath string, v int) {
	env.mu.Lock()
	defer env.mu.Unlock()
	if env.s.Wrote == nil {
		env.s.Wrote = map[string]int{}
	}
	env.s.Wrote[seenKey(pf.name, docPath)] = v
}

// appendLanded finds an append that already landed: the latest version is
// this session's own, one its transcript never recorded (the process
// stopped after the store took it), and it ends with text. Then the
// append is not made again, and that version is its result.
func (env *toolEnv) appendLanded(pf *projectFolder, p, text string) (SaveResult, bool) {
	virtual, docPath, err := env.projectPath(p, 0)
	if err != nil {
		return SaveResult{}, false
	}
	st := env.e.cfg.Projects.Store
	hist, err := st.DocumentHistory(context.TODO(), pf.name, docPath)
	if err != nil || len(hist) == 0 || hist[0].Session != env.s.ID {
		return SaveResult{}, false
	}
	env.mu.Lock()
	wrote := env.s.Wrote[seenKey(pf.name, docPath)]
	env.mu.Unlock()
	if wrote >= hist[0].Version {
		return SaveResult{}, false
	}
	data, err := st.DocumentData(context.TODO(), pf.name, docPath, hist[0].Version)
	if err != nil || !strings.HasSuffix(string(data), text) {
		return SaveResult{}, false
	}
	res, err := env.landed(pf, virtual, hist[0], data, env.seen(pf, docPath) == hist[0].Version-1, false)
	return res, err == nil
}

// author is the record of who writes in this session.
func (env *toolEnv) author(docPath string) transcript.DocVersion {
	return transcript.DocVersion{Path: docPath, Session: env.s.ID, Thread: env.s.Key, Source: transcript.SourceOf(env.s.Key), Agent: env.s.AgentID, Person: env.s.Person}
}

// projectPath resolves p for a write and returns its virtual path and its
// document path in the project.
func (env *toolEnv) projectPath(p string, size int) (virtual, docPath string, err error) {
	virtual, err = env.sb.Resolve(p, true)
	if err != nil {
		return "", "", err
	}
	if max := env.e.cfg.MaxWrite; int64(size) > max {
		return "", "", fmt.Errorf("%s: content is too large to save (%d bytes; the limit is %d)", virtual, size, max)
	}
	return virtual, outputRel(virtual), nil
}

// saveProject saves a whole document as the project's next version,
// refused when another thread saved a version this session has not seen.
func (env *toolEnv) saveProject(pf *projectFolder, p string, content []byte) (SaveResult, error) {
	virtual, docPath, err := env.projectPath(p, len(content))
	if err != nil {
		return SaveResult{}, err
	}
	st := env.e.cfg.Projects.Store
	v, err := st.SaveDocument(context.TODO(), pf.name, env.author(docPath), env.seen(pf, docPath), content)
	var stale *transcript.StaleError
	if errors.As(err, &stale) {
		_, _ = pf.freshen(st, docPath) // the model's next read gets the latest
		return SaveResult{}, stale
	}
	if err != nil {
		return SaveResult{}, fmt.Errorf("%s could not be saved (%v); save it again", virtual, err)
	}
	return env.landed(pf, virtual, v, content, true, false)
}

// editProject changes the latest version of a document atomically: edit
// gets its bytes (nil when missing) and returns the new ones. An internal
// file (a memlog) is kept, not shown or uploaded.
func (env *toolEnv) editProject(pf *projectFolder, p string, internal bool, edit func(old []byte) ([]byte, error)) (SaveResult, error) {
	virtual, docPath, err := env.projectPath(p, 0)
	if err != nil {
		return SaveResult{}, err
	}
	max := env.e.cfg.MaxWrite
	var data []byte
	v, err := env.e.cfg.Projects.Store.EditDocument(context.TODO(), pf.name, env.author(docPath), func(old []byte) ([]byte, error) {
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
			return SaveResult{}, refused.err
		}
		return SaveResult{}, err
	}
	// Edits build on the latest version: the session has seen it only if
	// it had seen the one before.
	return env.landed(pf, virtual, v, data, env.seen(pf, docPath) == v.Version-1, internal)
}

// editError carries an edit's own refusal (old_text not found …) out of
// the store unwrapped.
type editError struct{ err error }

func (e *editError) Error() string { return e.err.Error() }
func (e *editError) Unwrap() error { return e.err }

// landed writes a stored version to the working copy, records it in the
// session and reports it like any saved document (an internal file is
// only kept).
func (env *toolEnv) landed(pf *projectFolder, virtual string, v transcript.DocVersion, data []byte, seen, internal bool) (SaveResult, error) {
	if err := pf.landed(v, data); err != nil {
		env.e.cfg.Logger.Error("project: write the working copy", "project", pf.name, "path", v.Path, "err", err)
	}
	if seen {
		env.markSeen(pf, v.Path, v.Version)
	}
	env.markWrote(pf, v.Path, v.Version)
	if internal && env.kept != nil {
		if err := env.kept(virtual, data, &v, pf.name); err != nil {
			return SaveResult{}, err
		}
	} else if _, err := env.saved(virtual, data, &v, pf.name); err != nil {
		return SaveResult{}, err
	}
	return SaveResult{Path: virtual, Bytes: len(data), Version: v.Version, Shared: "the user receives this file in the thread; every thread of the project sees it"}, nil
}

// readProject brings a document under /outputs up to date before a read,
// and after it records the version read as seen. p is the path as given.
func (env *toolEnv) readProject(pf *projectFolder, p string) (data []byte, virtual string, err error) {
	if v, rerr := env.sb.Resolve(p, false); rerr == nil && isOutput(v) {
		if _, ferr := pf.freshen(env.e.cfg.Projects.Store, outputRel(v)); ferr != nil {
			env.e.cfg.Logger.Warn("project: refresh a document before a read", "project", pf.name, "err", ferr)
		}
	}
	data, virtual, err = env.sb.ReadFile(p)
	if err == nil && isOutput(virtual) {
		rel := outputRel(virtual)
		env.markSeen(pf, rel, pf.local(rel))
	}
	return data, virtual, err
}

// isOutput reports whether a virtual path is under /outputs.
func isOutput(virtual string) bool {
	return strings.HasPrefix(virtual, "/outputs/")
}

// shareInput makes a file person shared in a thread a file of the project
// (the next version of its name, by person), readable under /inputs in
// every thread.
func (e *Engine) shareInput(pf *projectFolder, s *Session, person, docPath string, data []byte) error {
	v := transcript.DocVersion{Path: docPath, Session: s.ID, Thread: s.Key, Source: transcript.SourceOf(s.Key), Agent: s.AgentID, Person: person}
	v, err := e.cfg.Projects.Store.SaveDocument(context.TODO(), pf.name, v, transcript.AnyVersion, data)
	if err != nil {
		return fmt.Errorf("share %s in project %s: %w", docPath, pf.name, err)
	}
	return pf.landed(v, data)
}

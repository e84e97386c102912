package project

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

// Store keeps projects' shared, versioned documents; both stores
// meet it (storage.Projects). With it, a session's /outputs are its
// project's documents: every thread of the project reads and writes the
// same ones, each write a new version.
type Store interface {
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

// sharedInputPrefix starts the document path of a file people shared in
// a thread of the project: every thread reads it under /inputs.
const sharedInputPrefix = transcript.InputPrefix

// versionsFile, beside a project's working folders, records the version
// of each local copy, so a restart fetches only what changed.
const versionsFile = "versions.json"

// Folder is this process's working copy of one project: its
// documents (mounted at /outputs), shared files (/inputs), and the
// version of each local copy. mu orders the local writes of all sessions
// of the project.
type Folder struct {
	name, root string
	mu         sync.Mutex
	versions   map[string]int // nil until loaded
}

// New returns the working copy of project name kept in the host folder
// root.
func New(name, root string) *Folder { return &Folder{name: name, root: root} }

// Name is the project's name; Root the host folder of its working copy.
func (pf *Folder) Name() string { return pf.name }

// Root is the host folder of the working copy.
func (pf *Folder) Root() string { return pf.root }

// Docs and Inputs are the folders the sandbox mounts at /outputs and
// /inputs.
func (pf *Folder) Docs() string { return filepath.Join(pf.root, "documents") }

// Inputs is the folder of the files people shared, mounted at /inputs.
func (pf *Folder) Inputs() string { return filepath.Join(pf.root, "inputs") }

// load reads the versions of the local copies; pf.mu is held.
func (pf *Folder) load() {
	if pf.versions != nil {
		return
	}
	pf.versions = map[string]int{}
	if data, err := os.ReadFile(filepath.Join(pf.root, versionsFile)); err == nil {
		_ = json.Unmarshal(data, &pf.versions) // unreadable: everything is fetched again
	}
}

// persist writes the versions of the local copies; pf.mu is held.
func (pf *Folder) persist() error {
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

// Sync brings the working copy up to date with the store: every document
// whose latest version is not the local one is fetched. The base layers
// are folders of the BMAD root (baseLayers): their files that are no
// project document show as they are (version 0), read-only, a save puts
// a version on top of.
func (pf *Folder) Sync(ctx context.Context, st Store, base []BaseLayer) error {
	docs, err := st.Documents(ctx, pf.name)
	if err != nil {
		return fmt.Errorf("project %s: %w", pf.name, err)
	}
	pf.mu.Lock()
	defer pf.mu.Unlock()
	if err := os.MkdirAll(pf.Docs(), 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(pf.Inputs(), 0o700); err != nil {
		return err
	}
	pf.load()
	changed := false
	var errs []error
	for _, d := range docs {
		if pf.versions[d.Path] == d.Version {
			continue
		}
		data, err := st.DocumentData(ctx, pf.name, d.Path, d.Version)
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
func (pf *Folder) overlay(base BaseLayer) bool {
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
func (pf *Folder) prune(base []BaseLayer) bool {
	changed := false
	shownDir := map[string]bool{} // layer prefix + folder: shown
	for doc, v := range pf.versions {
		if v != 0 {
			continue // a project version: a document of the project
		}
		var from *BaseLayer
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
func (b *BaseLayer) shown(rel string, memo map[string]bool) bool {
	return b.shownDir(path.Dir(rel), memo) && b.screen.ShownEntry(rel, false)
}

// shownDir reports whether the layer's folder dir ("." its root) and
// every folder above it pass its screen.
func (b *BaseLayer) shownDir(dir string, memo map[string]bool) bool {
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
func (pf *Folder) removeLocal(docPath string) error {
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
func (pf *Folder) localPath(docPath string) (dir, name string, err error) {
	dir, name = pf.Docs(), docPath
	if rest, ok := strings.CutPrefix(docPath, sharedInputPrefix); ok {
		dir, name = pf.Inputs(), rest
	}
	name = filepath.FromSlash(path.Clean(name))
	if !filepath.IsLocal(name) {
		return "", "", fmt.Errorf("document path %q is not inside the project", docPath)
	}
	return dir, name, nil
}

// writeLocal writes one version's bytes to the working copy and records
// its version; pf.mu is held. A shared file goes to the inputs folder.
func (pf *Folder) writeLocal(docPath string, version int, data []byte) error {
	dir, name, err := pf.localPath(docPath)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := WriteRooted(r, name, data); err != nil {
		return err
	}
	pf.versions[docPath] = version
	return nil
}

// Landed writes a version the store just took to the working copy,
// unless a newer one is there already.
func (pf *Folder) Landed(v transcript.DocVersion, data []byte) error {
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
func (pf *Folder) freshen(ctx context.Context, st Store, docPath string) (int, error) {
	hist, err := st.DocumentHistory(ctx, pf.name, docPath)
	if err != nil {
		return 0, fmt.Errorf("project %s: %w", pf.name, err)
	}
	pf.mu.Lock()
	defer pf.mu.Unlock()
	pf.load()
	if len(hist) == 0 || pf.versions[docPath] >= hist[0].Version {
		return pf.versions[docPath], nil
	}
	data, err := st.DocumentData(ctx, pf.name, docPath, hist[0].Version)
	if err != nil {
		return pf.versions[docPath], err
	}
	if err := pf.writeLocal(docPath, hist[0].Version, data); err != nil {
		return pf.versions[docPath], err
	}
	return hist[0].Version, pf.persist()
}

// local is the version of the working copy of one document.
func (pf *Folder) local(docPath string) int {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	pf.load()
	return pf.versions[docPath]
}

// Package catalogs loads the agents agentbot's configuration names into a
// catalog (bundles, BMAD roots, skills, else the shipped samples), holds
// serve's reloadable one, and explains a catalog that lacks the agent asked
// for.
package catalogs

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"agentbot/bundles"
	"agentbot/engine/catalog"
)

// Load loads every agent cfg names. The shipped
// sample bundles (a checkout's or the image's bundles folder) load last, so
// the user's bundles and BMAD roots keep the plain ids when an id collides.
// A folder named but missing is a problem; when nothing at all is named,
// the samples are offered: the checkout's bundles folder where it exists,
// else the copy built into the binary.
func Load(cfg Sources, dataDir string) *catalog.Catalog {
	var user, samples []string
	for _, b := range cfg.Bundles {
		if absOr(b) == absOr(defaultBundles) || absOr(b) == imageBundles {
			samples = append(samples, b)
		} else {
			user = append(user, b)
		}
	}
	var extractErr error
	if cfg.none() {
		var dir string
		dir, extractErr = builtinSamples(dataDir)
		if dir != "" {
			samples = []string{dir}
		}
	}
	cat := catalog.Load(catalog.Options{Bundles: user, BMADRoots: cfg.BMADRoots, Skills: cfg.Skills, Samples: samples})
	if extractErr != nil {
		cat.Problems = append(cat.Problems, catalog.Problem{Path: "built-in sample bundles", Reason: extractErr.Error()})
	}
	return cat
}

// builtinSamples returns the sample bundles' folder: the checkout's
// bundles folder where it exists, else the copy built into the binary,
// written once into the data folder dataDir (the sandbox and the catalog read
// folders on disk).
func builtinSamples(dataDir string) (string, error) {
	if st, err := os.Stat(defaultBundles); err == nil && st.IsDir() {
		return defaultBundles, nil
	}
	return bundles.Extract(filepath.Join(dataDir, "samples"))
}

// defaultBundles and imageBundles are where the shipped sample bundles
// are: a checkout's bundles folder, and the Docker image's.
const (
	defaultBundles = "./bundles"
	imageBundles   = "/bundles"
)

// absOr returns p made absolute and clean, or p cleaned.
func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// Reloadable holds the current catalog; a reload swaps it. Running
// sessions keep the agent definition they started with (it is in the
// session).
type Reloadable struct {
	cur  atomic.Pointer[catalog.Catalog]
	load func() *catalog.Catalog
	log  *slog.Logger
}

// NewReloadable returns the catalog load loads, now and at each Reload;
// log hears of reloads and their problems.
func NewReloadable(load func() *catalog.Catalog, log *slog.Logger) *Reloadable {
	c := &Reloadable{load: load, log: log}
	c.cur.Store(load())
	return c
}

// Get returns the current catalog.
func (c *Reloadable) Get() *catalog.Catalog { return c.cur.Load() }

// Reload loads the catalog again and makes it the current one, unless it
// has no agent: then the current one stays and the error says so.
func (c *Reloadable) Reload() error {
	next := c.load()
	if len(next.Agents) == 0 {
		return fmt.Errorf("no agent could be loaded (%d problems); keeping the agents already loaded", len(next.Problems))
	}
	c.cur.Store(next)
	c.log.Info("agents reloaded", "agents", len(next.Agents), "problems", len(next.Problems))
	for _, p := range next.Problems {
		c.log.Warn("bundle problem", "path", p.Path, "reason", p.Reason)
	}
	return nil
}

// Sources are where the agents come from: the settings --bundles,
// --bmad-root and --skills.
type Sources struct {
	Bundles, BMADRoots []string
	Skills             string
}

// none reports whether no source is named: the samples are offered.
func (s Sources) none() bool {
	return len(s.Bundles)+len(s.BMADRoots) == 0 && strings.TrimSpace(s.Skills) == ""
}

// samplesNote says where the samples Load offers when no source is named
// come from, under data folder dataDir, without writing them.
func samplesNote(dataDir string) string {
	if st, err := os.Stat(defaultBundles); err == nil && st.IsDir() {
		return defaultBundles + " (the sample bundles of this checkout)"
	}
	return filepath.Join(dataDir, "samples") + " (the sample bundles built into agentbot)"
}

// Explain says, after "no agent ..." on stderr, why: the agents the
// catalog has, where it looked, and the problems that kept agents from
// loading, with what to do. chat, serve and every command that needs an
// agent print it when the agent is not there. dataDir is the data folder
// the built-in samples are written to.
func Explain(w io.Writer, cfg Sources, dataDir string, cat *catalog.Catalog) {
	if len(cat.Agents) > 0 {
		fmt.Fprintf(w, "  known agents: %s\n", strings.Join(agentIDs(cat.Agents), ", "))
	} else {
		fmt.Fprintln(w, "  no agent could be loaded")
	}
	none := func(l []string) string {
		if len(l) == 0 {
			return "(none)"
		}
		return strings.Join(l, ", ")
	}
	skills := []string{}
	if cfg.Skills != "" {
		skills = append(skills, cfg.Skills)
	}
	bundles := cfg.Bundles
	if cfg.none() {
		bundles = []string{samplesNote(dataDir)}
	}
	fmt.Fprintf(w, "  looked in: bundles %s; BMAD roots %s; skills %s\n", none(bundles), none(cfg.BMADRoots), none(skills))
	if len(cat.Problems) > 0 {
		fmt.Fprintf(w, "  %d problem(s):\n", len(cat.Problems))
		for _, p := range cat.Problems {
			fmt.Fprintf(w, "    %s: %s\n", p.Path, p.Reason)
		}
	}
	fmt.Fprintln(w, "  agentbot agents lists what is found; point --bundles or --bmad-root (AGENTBOT_BUNDLES, AGENTBOT_BMAD_ROOT) at your agents")
}

// agentIDs lists the ids of agents, for error messages.
func agentIDs(agents []*catalog.Agent) []string {
	ids := make([]string, 0, len(agents))
	for _, a := range agents {
		ids = append(ids, a.ID)
	}
	return ids
}

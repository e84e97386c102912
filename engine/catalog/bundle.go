package catalog

import (
	"fmt"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// bundleFile is bundle.yaml, field for field as the spec's data model
// (section 5.1) has it.
type bundleFile struct {
	Type        string
	Name        string
	Version     string
	Description string
	Author      string
	// Created is the YAML date as written ("2025-10-05").
	Created string
	Agents  []bundleAgent
	Agent   *bundleAgent
	// Resources maps workflows, templates and config to paths in the
	// bundle; config names the config file (default config.yaml).
	Resources        map[string]string
	CoreDependencies []string
	// MCP names the MCP servers every agent of the bundle may use.
	MCP []string
}

// bundleAgent is one agent entry of bundle.yaml.
type bundleAgent struct {
	ID          string `yaml:"id"`
	Name        string `yaml:"name"`
	Title       string `yaml:"title"`
	Icon        string `yaml:"icon"`
	File        string `yaml:"file"`
	EntryPoint  *bool  `yaml:"entry_point"`
	Description string `yaml:"description"`
	// MCP names MCP servers this agent may use besides the bundle's: a
	// list of names (a single name is accepted).
	MCP yaml.Node `yaml:"mcp"`
}

// loadBundles loads the option path: a bundle directory, or a directory
// whose sub-folders are bundles.
func (l *loader) loadBundles(path string) {
	dir := absPath(path)
	if r := checkDir(dir); r != "" {
		l.problem(dir, "bundle folder %s", r)
		return
	}
	if hasBundleFile(dir) {
		l.loadBundle(dir)
		return
	}
	found := false
	for _, sub := range subdirs(dir) {
		if hasBundleFile(sub) {
			found = true
			l.loadBundle(sub)
		}
	}
	if !found {
		l.problem(dir, "no bundle.yaml in this folder or its sub-folders")
	}
}

// hasBundleFile reports whether dir holds a bundle.yaml: a regular file,
// or a FIFO or device there, which loadBundle reports instead of skipping.
func hasBundleFile(dir string) bool {
	p := filepath.Join(dir, "bundle.yaml")
	return isFile(p) || special(p)
}

// loadBundle loads the agents of one bundle directory: its manifest, its
// config, then each agent entry in order.
func (l *loader) loadBundle(dir string) {
	if !l.once(dir) {
		return
	}
	manifest := filepath.Join(dir, "bundle.yaml")
	bf, ok := l.readBundleFile(manifest)
	if !ok {
		return
	}
	name := strings.TrimSpace(bf.Name)
	if name == "" {
		name = filepath.Base(dir)
	}
	entries, standalone, err := bundleEntries(bf)
	if err != nil {
		l.problem(manifest, "%s", err)
		return
	}
	b := &bundleLoad{l: l, dir: dir, manifest: manifest, bf: bf, name: name, standalone: standalone,
		home: &Home{Kind: "bundle", Name: name, ProjectRoot: dir, BundleRoot: dir}, ids: map[string]bool{}}
	b.loadResources()
	for i, e := range entries {
		b.addAgent(i, e)
	}
}

// readBundleFile reads and parses a bundle.yaml, recording its warnings as
// problems. ok is false when the file cannot be read or parsed.
func (l *loader) readBundleFile(manifest string) (bf *bundleFile, ok bool) {
	data, err := readFile(manifest)
	if err != nil {
		l.problem(manifest, "%s", reason(err))
		return nil, false
	}
	bf, warnings, err := parseBundleFile(data)
	if err != nil {
		l.problem(manifest, "%s", err)
		return nil, false
	}
	for _, w := range warnings {
		l.problem(manifest, "%s", w)
	}
	return bf, true
}

// bundleLoad is loadBundle's state once the manifest is read: where the
// bundle lives, what it says, and the agent ids taken so far.
type bundleLoad struct {
	l             *loader
	dir, manifest string
	bf            *bundleFile
	name          string
	home          *Home
	standalone    bool
	ids           map[string]bool // lower-case agent ids of this bundle
}

// loadResources reports resource paths and core dependencies that do not
// exist, and reads the bundle's config (resources.config, default
// config.yaml) into its Home when the path stays inside the bundle.
func (b *bundleLoad) loadResources() {
	configFile := "config.yaml"
	if c := b.bf.Resources["config"]; c != "" {
		configFile = c
	}
	for _, w := range checkBundlePaths(b.dir, b.bf) {
		b.l.problem(b.manifest, "%s", w)
	}
	if cfg := filepath.FromSlash(configFile); filepath.IsLocal(cfg) {
		b.l.loadConfig(b.home, filepath.Join(b.dir, cfg))
	}
}

// addAgent loads the i-th agent entry of the bundle: its file, with what
// bundle.yaml says laid over it. An entry without a usable file, a file
// that does not load, or an id the bundle already has is a problem.
func (b *bundleLoad) addAgent(i int, e bundleAgent) {
	label := fmt.Sprintf("agent %d", i+1)
	if e.ID != "" {
		label = fmt.Sprintf("agent %q", e.ID)
	}
	file := filepath.FromSlash(strings.TrimSpace(e.File))
	switch {
	case file == "":
		b.l.problem(b.manifest, "%s has no file", label)
		return
	case !filepath.IsLocal(file):
		b.l.problem(b.manifest, "%s: file %q is outside the bundle", label, e.File)
		return
	}
	path := filepath.Join(b.dir, file)
	a, err := readAgent(path)
	if err != nil {
		b.l.problem(path, "%s", reason(err))
		return
	}
	bundleOverride(a, e)
	names, ok := mcpNames(&e.MCP)
	if !ok {
		b.l.problem(b.manifest, "%s: mcp: want a list of MCP server names; it is ignored", label)
	}
	a.MCP = mergeNames(b.bf.MCP, names)
	key := strings.ToLower(a.ID)
	if b.ids[key] {
		b.l.problem(b.manifest, "duplicate agent id %q (file %s)", a.ID, e.File)
		return
	}
	b.ids[key] = true
	a.Source = "bundle"
	a.Module = b.name
	a.Home = b.home
	a.EntryPoint = e.EntryPoint != nil && *e.EntryPoint
	if b.standalone && e.EntryPoint == nil {
		a.EntryPoint = true
	}
	b.l.add(a)
}

// bundleEntries returns the agent entries of bundle.yaml by its type.
func bundleEntries(bf *bundleFile) (entries []bundleAgent, standalone bool, err error) {
	typ := strings.ToLower(strings.TrimSpace(bf.Type))
	if typ == "" {
		typ = "bundle"
		if bf.Agent != nil && len(bf.Agents) == 0 {
			typ = "standalone"
		}
	}
	switch typ {
	case "bundle":
		if len(bf.Agents) == 0 {
			return nil, false, fmt.Errorf("bundle lists no agents (want agents: [...])")
		}
		return bf.Agents, false, nil
	case "standalone":
		if bf.Agent == nil {
			return nil, true, fmt.Errorf("standalone bundle has no agent mapping")
		}
		return []bundleAgent{*bf.Agent}, true, nil
	}
	return nil, false, fmt.Errorf("unknown bundle type %q (want bundle or standalone)", bf.Type)
}

// bundleOverride applies what bundle.yaml says about an agent over what
// its file says.
func bundleOverride(a *Agent, e bundleAgent) {
	set := func(dst *string, v string) {
		if v = strings.TrimSpace(v); v != "" {
			*dst = v
		}
	}
	set(&a.ID, e.ID)
	set(&a.Name, e.Name)
	set(&a.Title, e.Title)
	set(&a.Icon, e.Icon)
	set(&a.Description, e.Description)
}

// mcpNames reads an mcp field: a list of server names, or one name. ok is
// false for any other shape.
func mcpNames(n *yaml.Node) (names []string, ok bool) {
	n = deref(n)
	switch {
	case isNull(n) || n.Kind == 0:
		return nil, true
	case n.Kind == yaml.ScalarNode, n.Kind == yaml.SequenceNode && allScalars(n):
		return texts(n), true
	}
	return nil, false
}

// mergeNames returns a then b, each name once.
func mergeNames(a, b []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range append(append([]string(nil), a...), b...) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

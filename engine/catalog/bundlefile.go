package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"agentbot/engine/core"
)

// parseBundleFile decodes bundle.yaml field by field. Unknown keys are
// ignored. An optional field that cannot be used (a wrong type) is left out
// with a warning; only YAML that does not parse, a top level that is not a
// mapping, or agents that cannot be read at all are errors.
func parseBundleFile(data []byte) (*bundleFile, []string, error) {
	root, err := decodeYAML(data)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid YAML: %w", err)
	}
	root = deref(root)
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, nil, errors.New("bundle.yaml must be a mapping (type, name, agents, ...)")
	}
	p := &bundleParse{root: root, bf: &bundleFile{}}
	p.text("type", &p.bf.Type)
	p.text("name", &p.bf.Name)
	p.text("version", &p.bf.Version)
	p.text("description", &p.bf.Description)
	p.text("author", &p.bf.Author)
	p.text("created", &p.bf.Created)
	if err := p.agents(); err != nil {
		return nil, p.warnings, err
	}
	p.resources()
	p.coreDependencies()
	if n := mapGet(root, "mcp"); n != nil {
		names, ok := mcpNames(n)
		if !ok {
			p.warn("mcp", "a list of MCP server names")
		}
		p.bf.MCP = names
	}
	return p.bf, p.warnings, nil
}

// bundleParse is parseBundleFile's state: the document, what was read,
// and the warnings so far.
type bundleParse struct {
	root     *yaml.Node
	bf       *bundleFile
	warnings []string
}

// warn records an optional field left out because it is not what it must be.
func (p *bundleParse) warn(key, want string) {
	p.warnings = append(p.warnings, fmt.Sprintf("%s: want %s; the field is ignored", key, want))
}

// field returns the value of key, nil when it is missing or null.
func (p *bundleParse) field(key string) *yaml.Node {
	n := deref(mapGet(p.root, key))
	if isNull(n) {
		return nil
	}
	return n
}

// text reads an optional text field into dst.
func (p *bundleParse) text(key string, dst *string) {
	n := p.field(key)
	switch {
	case n == nil:
	case n.Kind != yaml.ScalarNode:
		p.warn(key, "a text")
	default:
		*dst = strings.TrimSpace(n.Value)
	}
}

// agents reads agents (a bundle's list) and agent (a standalone's one).
// An entry that cannot be read is skipped with a warning; a list of which
// none can be read, or an unreadable standalone agent, is an error.
func (p *bundleParse) agents() error {
	if n := p.field("agents"); n != nil {
		if n.Kind != yaml.SequenceNode {
			return errors.New("agents: want a list of agents (id, name, title, file, entry_point)")
		}
		for i, item := range n.Content {
			var a bundleAgent
			if err := decodeNode(item, &a); err != nil {
				p.warnings = append(p.warnings, fmt.Sprintf("agents[%d]: %v; this agent is skipped", i, err))
				continue
			}
			p.bf.Agents = append(p.bf.Agents, a)
		}
		if len(p.bf.Agents) == 0 && len(n.Content) > 0 {
			return errors.New("agents: no entry can be read")
		}
	}
	if n := p.field("agent"); n != nil {
		var a bundleAgent
		if err := decodeNode(n, &a); err != nil {
			return fmt.Errorf("agent: %v", err)
		}
		p.bf.Agent = &a
	}
	return nil
}

// resources reads the mapping of resource names to paths; the older form,
// a list of folders, is accepted as is.
func (p *bundleParse) resources() {
	n := p.field("resources")
	switch {
	case n == nil, n.Kind == yaml.SequenceNode:
	case n.Kind == yaml.MappingNode:
		p.bf.Resources = map[string]string{}
		for _, kv := range pairs(n) {
			k, v := scalar(kv[0]), deref(kv[1])
			if v == nil || v.Kind != yaml.ScalarNode {
				p.warnings = append(p.warnings, fmt.Sprintf("resources.%s: want a path; it is ignored", k))
				continue
			}
			p.bf.Resources[k] = strings.TrimSpace(v.Value)
		}
	default:
		p.warn("resources", "a mapping of workflows, templates and config to paths")
	}
}

// coreDependencies reads the list of core files the bundle needs.
func (p *bundleParse) coreDependencies() {
	n := p.field("core_dependencies")
	switch {
	case n == nil:
	case n.Kind != yaml.SequenceNode || !allScalars(n):
		p.warn("core_dependencies", "a list of paths to core files")
	default:
		p.bf.CoreDependencies = texts(n)
	}
}

// decodeNode decodes one YAML node into v, turning a panic in the YAML
// library into an error.
func decodeNode(n *yaml.Node, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid YAML: %v", r)
		}
	}()
	if err := n.Decode(v); err != nil {
		return unwrapYAMLError(err)
	}
	return nil
}

// checkBundlePaths warns about resource paths and core dependencies that a
// bundle names but that do not exist: the bundle's agents still load.
func checkBundlePaths(dir string, bf *bundleFile) []string {
	var out []string
	keys := make([]string, 0, len(bf.Resources))
	for k := range bf.Resources {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := bf.Resources[k]
		rel := filepath.FromSlash(strings.TrimPrefix(p, "{bundle-root}/"))
		switch {
		case p == "":
		case !filepath.IsLocal(filepath.Clean(rel)):
			out = append(out, fmt.Sprintf("resources.%s: %q is outside the bundle; it is ignored", k, p))
		case !exists(filepath.Join(dir, rel)):
			out = append(out, fmt.Sprintf("resources.%s: %q does not exist", k, p))
		}
	}
	for _, dep := range bf.CoreDependencies {
		rel := strings.TrimPrefix(strings.TrimPrefix(dep, "{core-root}/"), "core/")
		clean := path.Clean(strings.TrimPrefix(filepath.ToSlash(rel), "/"))
		if _, err := fs.Stat(core.FS, clean); err == nil {
			continue
		}
		if filepath.IsLocal(filepath.FromSlash(clean)) && exists(filepath.Join(dir, filepath.FromSlash(clean))) {
			continue
		}
		out = append(out, fmt.Sprintf("core_dependencies: %q is neither in the core nor in the bundle", dep))
	}
	return out
}

// exists reports whether path names a file or folder.
func exists(path string) bool {
	return isFile(path) || isDir(path)
}

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
	bf := &bundleFile{}
	var warnings []string
	warn := func(key, want string) {
		warnings = append(warnings, fmt.Sprintf("%s: want %s; the field is ignored", key, want))
	}
	str := func(key string, dst *string) {
		n := deref(mapGet(root, key))
		if isNull(n) {
			return
		}
		if n.Kind != yaml.ScalarNode {
			warn(key, "a text")
			return
		}
		*dst = strings.TrimSpace(n.Value)
	}
	str("type", &bf.Type)
	str("name", &bf.Name)
	str("version", &bf.Version)
	str("description", &bf.Description)
	str("author", &bf.Author)
	str("created", &bf.Created)

	if n := deref(mapGet(root, "agents")); !isNull(n) {
		if n.Kind != yaml.SequenceNode {
			return nil, warnings, errors.New("agents: want a list of agents (id, name, title, file, entry_point)")
		}
		for i, item := range n.Content {
			var a bundleAgent
			if err := decodeNode(item, &a); err != nil {
				warnings = append(warnings, fmt.Sprintf("agents[%d]: %v; this agent is skipped", i, err))
				continue
			}
			bf.Agents = append(bf.Agents, a)
		}
		if len(bf.Agents) == 0 && len(n.Content) > 0 {
			return nil, warnings, errors.New("agents: no entry can be read")
		}
	}
	if n := deref(mapGet(root, "agent")); !isNull(n) {
		var a bundleAgent
		if err := decodeNode(n, &a); err != nil {
			return nil, warnings, fmt.Errorf("agent: %v", err)
		}
		bf.Agent = &a
	}
	if n := deref(mapGet(root, "resources")); !isNull(n) {
		switch n.Kind {
		case yaml.MappingNode:
			bf.Resources = map[string]string{}
			for _, kv := range pairs(n) {
				k, v := scalar(kv[0]), deref(kv[1])
				if v == nil || v.Kind != yaml.ScalarNode {
					warnings = append(warnings, fmt.Sprintf("resources.%s: want a path; it is ignored", k))
					continue
				}
				bf.Resources[k] = strings.TrimSpace(v.Value)
			}
		case yaml.SequenceNode:
			// An older form: a list of resource folders. Accepted as is.
		default:
			warn("resources", "a mapping of workflows, templates and config to paths")
		}
	}
	if n := deref(mapGet(root, "core_dependencies")); !isNull(n) {
		if n.Kind != yaml.SequenceNode || !allScalars(n) {
			warn("core_dependencies", "a list of paths to core files")
		} else {
			bf.CoreDependencies = texts(n)
		}
	}
	if n := mapGet(root, "mcp"); n != nil {
		names, ok := mcpNames(n)
		if !ok {
			warn("mcp", "a list of MCP server names")
		}
		bf.MCP = names
	}
	return bf, warnings, nil
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

package catalog

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParseV4 parses a BMAD v4 agent: markdown with a ```yaml block holding
// agent (name, id, title, icon, whenToUse), persona (role, style, identity,
// focus, core_principles), activation-instructions, commands (a list of
// one-key maps such as "- create-doc {template}: ..." or a map) and
// dependencies (kind → files). Other top-level keys of the block, such as
// IDE-FILE-RESOLUTION, become rules, so no instruction is lost.
func ParseV4(path string, data []byte) (*Agent, error) {
	_, body := splitFrontmatter(string(data))
	block, ok := v4Block(body)
	if !ok {
		return nil, fmt.Errorf("%w: no ```yaml block with an agent key", ErrNotAgent)
	}
	root, err := decodeYAML([]byte(block))
	if err != nil {
		return nil, fmt.Errorf("yaml block: %w", err)
	}
	ag := mapGet(root, "agent")
	if ag == nil {
		return nil, fmt.Errorf("%w: yaml block has no agent key", ErrNotAgent)
	}
	a := &Agent{
		ID:          scalar(mapGet(ag, "id")),
		Name:        scalar(mapGet(ag, "name")),
		Title:       scalar(mapGet(ag, "title")),
		Icon:        scalar(mapGet(ag, "icon")),
		Description: scalar(mapGet(ag, "whenToUse")),
		Path:        path,
		Format:      FormatV4,
		EntryPoint:  true,
	}
	if a.ID == "" {
		a.ID = fileStem(path)
	}
	p := mapGet(root, "persona")
	a.Persona = Persona{
		Role:               text(mapGet(p, "role")),
		Identity:           text(mapGet(p, "identity")),
		CommunicationStyle: text(mapGet(p, "style")),
		Principles:         text(mapGet(p, "core_principles")),
	}
	if a.Persona.Principles == "" { // dev.md writes core_principles at the top level
		a.Persona.Principles = text(mapGet(root, "core_principles"))
	}
	if focus := text(mapGet(p, "focus")); focus != "" {
		a.Persona.Identity = strings.TrimSpace(a.Persona.Identity + "\nFocus: " + focus)
	}
	a.Activation = texts(mapGet(root, "activation-instructions"))
	a.Menu = v4Commands(mapGet(root, "commands"))
	a.Dependencies = v4Dependencies(mapGet(root, "dependencies"))
	if c := mapGet(ag, "customization"); !isNull(c) {
		a.Rules = append(a.Rules, keyRule("customization", c))
	}
	for _, kv := range pairs(root) {
		switch k := scalar(kv[0]); k {
		case "agent", "persona", "activation-instructions", "commands", "dependencies", "core_principles":
		default:
			if r := keyRule(k, kv[1]); r != "" {
				a.Rules = append(a.Rules, r)
			}
		}
	}
	if err := checkAgent(a); err != nil {
		return nil, err
	}
	return a, nil
}

// v4Block returns the body of the first ```yaml (or ```yml) block that has
// a top-level agent key. It looks only at the text, so a block that is not
// valid YAML is still found and reported by the parser.
func v4Block(body string) (string, bool) {
	for _, fc := range fences(body) {
		if fc.lang != "yaml" && fc.lang != "yml" {
			continue
		}
		for _, line := range strings.Split(fc.body, "\n") {
			if strings.HasPrefix(line, "agent:") {
				return fc.body, true
			}
		}
	}
	return "", false
}

// v4Commands reads commands written as a list of one-key maps (or plain
// names), or as one map. A command whose value is not text (dev's
// develop-story) keeps that value, rendered, as its Action.
func v4Commands(n *yaml.Node) []MenuItem {
	var kvs [][2]*yaml.Node
	if items := seq(n); items != nil {
		for _, c := range items {
			if ps := pairs(c); ps != nil {
				kvs = append(kvs, ps...)
			} else if s := scalar(c); s != "" {
				kvs = append(kvs, [2]*yaml.Node{c, nil})
			}
		}
	} else {
		kvs = pairs(n)
	}
	out := make([]MenuItem, 0, len(kvs))
	for _, kv := range kvs {
		key := scalar(kv[0])
		if key == "" {
			continue
		}
		cmd := key
		if !strings.HasPrefix(cmd, "*") {
			cmd = "*" + cmd
		}
		v := deref(kv[1])
		if v == nil {
			// "*cmd - description", as expansion packs write a command.
			c, desc, _ := strings.Cut(cmd, " - ")
			out = append(out, newMenuItem(strings.TrimSpace(c), cleanText(desc)))
			continue
		}
		if v.Kind == yaml.ScalarNode {
			out = append(out, newMenuItem(cmd, cleanText(scalar(v))))
			continue
		}
		it := newMenuItem(cmd, "")
		it.Action = text(v)
		out = append(out, it)
	}
	return out
}

// v4Dependencies reads dependencies: kind → list of files.
func v4Dependencies(n *yaml.Node) map[string][]string {
	ps := pairs(n)
	if len(ps) == 0 {
		return nil
	}
	deps := make(map[string][]string, len(ps))
	for _, kv := range ps {
		kind := scalar(kv[0])
		if kind == "" {
			continue
		}
		deps[kind] = append(deps[kind], texts(kv[1])...)
	}
	return deps
}

// keyRule renders a top-level key and its value as one rule.
func keyRule(key string, v *yaml.Node) string {
	t := text(v)
	switch {
	case t == "":
		return ""
	case strings.Contains(t, "\n"):
		return key + ":\n" + t
	default:
		return key + ": " + t
	}
}

// v4CommandKinds are the dependency kinds a v4 command runs, in the order
// they are handed over: the task first, then its template and checklist.
var v4CommandKinds = []string{"tasks", "templates", "checklists"}

// v4FileName finds a file name a v4 command's text names: create-doc.md,
// prd-tmpl.yaml.
var v4FileName = regexp.MustCompile(`[A-Za-z0-9_-]+\.(?:md|ya?ml)`)

// CommandFiles returns the files a v4 agent's command runs, as
// {bundle-root}/<kind>/<name> paths, task first, each present in the
// agent's folder: the tasks, templates and checklists its text names by
// file ("run task create-doc.md with template prd-tmpl.yaml"), and those
// of its dependencies it names without extension ("execute the
// correct-course task") or that are named like the command itself. It
// returns nil for other agents and for commands that run none.
func (a *Agent) CommandFiles(it MenuItem) []string {
	if a == nil || a.Format != FormatV4 || a.Home == nil || a.Home.BundleRoot == "" {
		return nil
	}
	text := it.Cmd + " " + it.Description
	lower := strings.ToLower(text)
	named := v4FileName.FindAllString(text, -1)
	var out []string
	seen := map[string]bool{}
	for _, kind := range v4CommandKinds {
		cands := append([]string(nil), named...)
		for _, f := range a.Dependencies[kind] {
			if hasWord(lower, strings.ToLower(strings.TrimSuffix(f, path.Ext(f)))) {
				cands = append(cands, f)
			}
		}
		for _, f := range cands {
			p := kind + "/" + f
			if seen[p] || !filepath.IsLocal(filepath.FromSlash(f)) || !present(filepath.Join(a.Home.BundleRoot, kind, filepath.FromSlash(f))) {
				continue
			}
			seen[p] = true
			out = append(out, "{bundle-root}/"+p)
		}
	}
	return out
}

// hasWord reports whether text holds w as a whole word: bounded by
// characters that are not letters, digits, '-' or '_'.
func hasWord(text, w string) bool {
	if w == "" {
		return false
	}
	word := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	for off := 0; ; {
		i := strings.Index(text[off:], w)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(w)
		if (i == 0 || !word(text[i-1])) && (end == len(text) || !word(text[end])) {
			return true
		}
		off = i + 1
	}
}

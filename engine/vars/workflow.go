package vars

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Workflow is a workflow.yaml with its values resolved.
type Workflow struct {
	Name        string
	Description string
	// Resolved is the document re-rendered as YAML with values resolved,
	// key order kept.
	Resolved string
	// Values are the top-level scalar values after resolution.
	Values Vars
	// Instructions, Template, Validation and ConfigSource are resolved paths,
	// empty when the workflow has none (or sets them to false).
	Instructions string
	Template     string
	Validation   string
	ConfigSource string
	// Unresolved lists variables left as placeholders, for the model to ask.
	Unresolved []string
	// Notes say why "{config_source}:key" values could not be read from the
	// config file (it is missing, unreadable or its path is unresolved); the
	// affected keys are in Unresolved unless base supplied them.
	Notes []string
}

// ResolveWorkflow resolves a workflow.yaml. base holds the path variables,
// config keys and the session's date; readConfig loads the file a
// {config_source} names (a path already resolved).
//
// Every string value of the document is expanded, in nested mappings and
// lists too; keys, numbers, booleans and nulls stay as they are. A {name}
// resolves to the first of:
//
//  1. base[name] when name is pinned (IsPinned: *-root, output_folder,
//     input_folder, date): the session's folders and date always win, so a
//     config's output_folder "{project-root}/docs" never replaces /outputs;
//  2. the workflow's own top-level scalar key name, else a scalar key name
//     of its top-level "variables:" mapping (expanded by these same rules,
//     in any order of definition);
//  3. base[name] (session config keys such as user_name);
//  4. otherwise the placeholder stays and name is listed in Unresolved.
//
// "{config_source}:key" reads key from the file config_source names:
// readConfig is called at most once, with config_source resolved. Its
// values expand with pinned base variables first, then the file's own
// keys, then the rest of base. When the file lacks key, or cannot be read
// (see Notes), the reference becomes "{key}", resolved from base or left
// for the model and listed in Unresolved.
//
// A key whose value is "system-generated" takes base's value for it (date);
// current_year and current_month are derived from an ISO base date; others
// stay "{key}" and are listed in Unresolved. A top-level (or variables:)
// key's resolved value is what {key} reads, so "output_folder" shows the
// session's folder and "date" the session's date.
//
// Name and Description come from the top-level keys, else from a top-level
// "workflow:" mapping. Instructions, Template, Validation and ConfigSource
// are the resolved top-level values, "" when absent, not a single value,
// blank or false; they may still hold placeholders listed in Unresolved.
//
// Malformed YAML, a top level that is not a mapping, a key defined twice,
// a cycle and the limits of Expand are errors; unknown variables and a
// missing config file are not.
func ResolveWorkflow(data []byte, base Vars, readConfig func(path string) (Vars, error)) (*Workflow, error) {
	root, err := parseMapping(data)
	if err != nil {
		return nil, fmt.Errorf("parse workflow.yaml: %w", err)
	}
	if root == nil {
		return nil, errors.New("parse workflow.yaml: the document is empty")
	}
	defs, err := collectDefs(root)
	if err != nil {
		return nil, fmt.Errorf("parse workflow.yaml: %w", err)
	}
	r := &resolver{base: base, wf: defs, cfg: configState{read: readConfig}}
	var unk names
	if err := r.render(root, "", &unk); err != nil {
		return nil, err
	}
	resolved, err := encodeResolved(root)
	if err != nil {
		return nil, err
	}
	w := workflowFrom(root)
	w.Resolved, w.Unresolved = resolved, unk.list
	if r.cfg.note != "" {
		w.Notes = []string{r.cfg.note}
	}
	return w, nil
}

// encodeResolved renders the resolved document as YAML, indented by two
// spaces, key order kept.
func encodeResolved(root *yaml.Node) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return "", fmt.Errorf("render resolved workflow.yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("render resolved workflow.yaml: %w", err)
	}
	return buf.String(), nil
}

// workflowFrom reads a resolved document's top-level scalar values, its
// name and description (from the top level, else from a "workflow:"
// mapping) and its paths.
func workflowFrom(root *yaml.Node) *Workflow {
	w := &Workflow{Values: Vars{}}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], scalarOf(root.Content[i+1])
		if k.Kind == yaml.ScalarNode && v != nil {
			w.Values[k.Value] = scalarText(v)
		}
	}
	w.Name, w.Description = w.Values["name"], w.Values["description"]
	if m := child(root, "workflow"); m != nil && m.Kind == yaml.MappingNode {
		fillScalar(&w.Name, m, "name")
		fillScalar(&w.Description, m, "description")
	}
	w.Instructions = pathValue(w.Values["instructions"])
	w.Template = pathValue(w.Values["template"])
	w.Validation = pathValue(w.Values["validation"])
	w.ConfigSource = pathValue(w.Values["config_source"])
	return w
}

// fillScalar sets an empty *dst to the scalar value of key in mapping m,
// when m has one.
func fillScalar(dst *string, m *yaml.Node, key string) {
	if n := scalarOf(child(m, key)); *dst == "" && n != nil {
		*dst = scalarText(n)
	}
}

// pathValue is "" for a blank or false path.
func pathValue(s string) string {
	if t := strings.TrimSpace(s); t == "" || t == "false" {
		return ""
	}
	return s
}

// wfDef is a name a workflow defines.
type wfDef struct {
	raw             string
	literal         bool // a number, boolean or null: never expanded
	systemGenerated bool // "system-generated"
	node            *yaml.Node
}

// workflowDefs are the names a workflow defines: its top-level scalar keys,
// then the scalar keys of its top-level "variables:" mapping.
type workflowDefs struct {
	defs map[string]wfDef
}

func collectDefs(root *yaml.Node) (*workflowDefs, error) {
	w := &workflowDefs{defs: map[string]wfDef{}}
	add := func(m *yaml.Node) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], scalarOf(m.Content[i+1])
			if k.Kind != yaml.ScalarNode || k.Value == "<<" || v == nil {
				continue
			}
			if _, ok := w.defs[k.Value]; ok {
				continue
			}
			d := wfDef{raw: scalarText(v), node: v}
			if isStr(v) {
				d.systemGenerated = strings.TrimSpace(v.Value) == "system-generated"
			} else {
				d.literal = true
			}
			w.defs[k.Value] = d
		}
	}
	add(root)
	if m := child(root, "variables"); m != nil && m.Kind == yaml.MappingNode {
		if err := checkDuplicates(m); err != nil {
			return nil, fmt.Errorf("variables: %w", err)
		}
		add(m)
	}
	return w, nil
}

// render resolves every string scalar under n in place. path names n for
// errors.
func (r *resolver) render(n *yaml.Node, path string, unk *names) error {
	switch n.Kind {
	case yaml.MappingNode:
		return r.renderMapping(n, path, unk)
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := r.render(c, path+"["+strconv.Itoa(i)+"]", unk); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		if isStr(n) {
			val, err := r.expandValue(n.Value, scopeWorkflow, unk)
			if err != nil {
				return fmt.Errorf("resolve %s: %w", path, err)
			}
			n.Value = val
		}
	}
	return nil
}

// renderMapping resolves the values of mapping n, named path, in place: a
// value that is one of the workflow's definitions by renderDef, any other
// by render.
func (r *resolver) renderMapping(n *yaml.Node, path string, unk *names) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := k.Value
		if path != "" {
			p = path + "." + k.Value
		}
		var err error
		if d, ok := r.wf.defs[k.Value]; ok && d.node == v && k.Kind == yaml.ScalarNode {
			err = r.renderDef(k.Value, v, p, unk)
		} else {
			err = r.render(v, p, unk)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// renderDef sets the value v of the definition name, at path, to what
// {name} reads, so a system-generated or pinned key shows the session's
// value; a name without one keeps its placeholder and is listed in unk.
// Only a string value is rewritten.
func (r *resolver) renderDef(name string, v *yaml.Node, path string, unk *names) error {
	val, ok, err := r.resolveName(scopeWorkflow, name, unk)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", path, err)
	}
	if !ok {
		val = "{" + name + "}"
		unk.add(name)
	}
	if isStr(v) {
		v.Value = val
	}
	return nil
}

// configState is the config file of one ResolveWorkflow call, read once.
type configState struct {
	read  func(path string) (Vars, error)
	state uint8 // 0 not read yet, 1 reading, 2 done
	vars  Vars  // nil when unavailable
	note  string
}

// configKey resolves "{config_source}:key".
func (r *resolver) configKey(key string, unk *names) (string, bool, error) {
	if err := r.loadConfig(unk); err != nil {
		return "", false, err
	}
	return r.resolveName(scopeConfig, key, unk)
}

// loadConfig reads the config file once.
func (r *resolver) loadConfig(unk *names) error {
	switch r.cfg.state {
	case 2:
		return nil
	case 1:
		return &CycleError{Cycle: []string{"config_source", "config_source"}}
	}
	r.cfg.state = 1
	var local names
	path, ok, err := r.resolveName(scopeWorkflow, "config_source", &local)
	r.cfg.state = 2
	if err != nil {
		return fmt.Errorf("resolve config_source: %w", err)
	}
	unk.addAll(local.list)
	const after = `; its "{config_source}:key" values stay as {key}`
	switch {
	case !ok:
		r.cfg.note = "config_source is not set" + after
	case len(local.list) > 0:
		r.cfg.note = fmt.Sprintf("config_source %q has unresolved variables%s", path, after)
	case r.cfg.read == nil:
		r.cfg.note = fmt.Sprintf("config %s was not read%s", path, after)
	default:
		cfg, err := r.cfg.read(path)
		if err != nil {
			r.cfg.note = fmt.Sprintf("config %s: %v%s", path, err, after)
			return nil
		}
		r.cfg.vars = cfg
	}
	return nil
}

// scalarOf returns n, or the scalar an alias n points to; nil otherwise.
func scalarOf(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.ScalarNode {
		return nil
	}
	return n
}

// child returns the value of key in mapping m, or nil.
func child(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func isStr(n *yaml.Node) bool { return n.ShortTag() == "!!str" }

package vars

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// ParseConfig reads a config.yaml into Vars: scalar values as strings, not
// yet expanded.
//
// Top-level scalars keep their text as written ("false", "1.0"); a null is
// "". Nested mappings are flattened into dotted names ("a: {b: x}" gives
// "a.b" = "x"), which {a.b} can reference. Sequences, merge keys ("<<") and
// aliases of mappings are skipped; an alias of a scalar takes its value. An
// empty file gives empty Vars. Invalid YAML, a top level that is not a
// mapping and a key defined twice are errors naming the line.
func ParseConfig(data []byte) (Vars, error) {
	root, err := parseMapping(data)
	if err != nil {
		return nil, fmt.Errorf("parse config: %w", err)
	}
	out := Vars{}
	if root == nil {
		return out, nil
	}
	lines := map[string]int{}
	if err := flatten(root, "", out, lines); err != nil {
		return nil, fmt.Errorf("parse config: %w", err)
	}
	return out, nil
}

// flatten adds the scalars of mapping m to out under prefix.
func flatten(m *yaml.Node, prefix string, out Vars, lines map[string]int) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "<<" {
			continue
		}
		name := prefix + k.Value
		if v.Kind == yaml.AliasNode && v.Alias != nil && v.Alias.Kind == yaml.ScalarNode {
			v = v.Alias
		}
		switch v.Kind {
		case yaml.ScalarNode:
			if first, dup := lines[name]; dup {
				return fmt.Errorf("line %d: key %q already defined at line %d", k.Line, name, first)
			}
			lines[name] = k.Line
			out[name] = scalarText(v)
		case yaml.MappingNode:
			if err := flatten(v, name+".", out, lines); err != nil {
				return err
			}
		}
	}
	return nil
}

// scalarText is a scalar's value as written, "" for null.
func scalarText(n *yaml.Node) string {
	if n.ShortTag() == "!!null" {
		return ""
	}
	return n.Value
}

// parseMapping parses the first YAML document of data and returns its top
// mapping: nil for an empty document, an error when the top is something
// else or a key of it appears twice.
func parseMapping(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	switch {
	case root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null":
		return nil, nil
	case root.Kind != yaml.MappingNode:
		return nil, fmt.Errorf("line %d: top level is %s, want a mapping of keys", root.Line, kindName(root))
	}
	if err := checkDuplicates(root); err != nil {
		return nil, err
	}
	return root, nil
}

// checkDuplicates fails when a key of mapping m appears twice.
func checkDuplicates(m *yaml.Node) error {
	seen := make(map[string]int, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode || k.Value == "<<" {
			continue
		}
		if first, dup := seen[k.Value]; dup {
			return fmt.Errorf("line %d: key %q already defined at line %d", k.Line, k.Value, first)
		}
		seen[k.Value] = k.Line
	}
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a single value"
	case yaml.AliasNode:
		return "an alias"
	}
	return "not a mapping"
}

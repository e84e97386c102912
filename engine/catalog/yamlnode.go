package catalog

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// decodeYAML parses one YAML document into a node tree. It never panics: a
// failure inside the YAML library becomes an error.
func decodeYAML(data []byte) (root *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, fmt.Errorf("invalid YAML: %v", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", unwrapYAMLError(err))
	}
	if doc.Kind == 0 {
		return nil, errors.New("empty YAML document")
	}
	return &doc, nil
}

// unwrapYAMLError shortens yaml.v3's "yaml: line 3: ..." errors.
func unwrapYAMLError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return errors.New(msg)
}

// deref follows document and alias nodes to the value they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && i < 8; i++ {
		switch n.Kind {
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		case yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return n
}

// mapGet returns the value of key in mapping n, or nil.
func mapGet(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := deref(n.Content[i]); k != nil && k.Kind == yaml.ScalarNode && k.Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// isNull reports whether n is absent or an explicit null.
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// scalar returns n's value when it is a scalar, trimmed; otherwise "".
func scalar(n *yaml.Node) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return strings.TrimSpace(n.Value)
}

// text renders any node as text: a scalar as itself, a list of scalars as
// "- item" lines, anything else as YAML.
func text(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n == nil:
		return ""
	case n.Kind == yaml.ScalarNode:
		return scalar(n)
	case n.Kind == yaml.SequenceNode && allScalars(n):
		var lines []string
		for _, c := range n.Content {
			if s := scalar(c); s != "" {
				lines = append(lines, "- "+s)
			}
		}
		return strings.Join(lines, "\n")
	}
	return renderYAML(n)
}

// texts returns a list's items as text; a single scalar is a one-item list.
func texts(n *yaml.Node) []string {
	n = deref(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		if s := text(n); s != "" {
			return []string{s}
		}
		return nil
	}
	var out []string
	for _, c := range n.Content {
		if s := text(c); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func allScalars(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c := deref(c); c == nil || c.Kind != yaml.ScalarNode {
			return false
		}
	}
	return true
}

// renderYAML renders a node back to YAML text, trimmed. It never panics.
func renderYAML(n *yaml.Node) (out string) {
	defer func() {
		if recover() != nil {
			out = ""
		}
	}()
	b, err := yaml.Marshal(n)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pairs returns the key/value pairs of mapping n in document order.
func pairs(n *yaml.Node) [][2]*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

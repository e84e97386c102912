package custom

import "strings"

// Flatten records every value of table t in out under prefix + "." + key,
// rendered with Text, and the values of nested tables under their dotted
// paths: {agent.icon}, {workflow.prd_template}, {agent.menu}.
func Flatten(prefix string, t Table, out map[string]string) {
	for k, v := range t {
		name := prefix + "." + k
		out[name] = Text(v)
		if sub, ok := v.(map[string]any); ok {
			Flatten(name, sub, out)
		}
	}
}

// Strings reads an array as trimmed, non-empty strings; items that are not
// strings are rendered with Text. Anything but an array is empty.
func Strings(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s := strings.TrimSpace(Text(it)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

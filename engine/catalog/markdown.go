package catalog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// frontmatter is the YAML header of a markdown agent file.
type frontmatter struct {
	Name        string
	Description string
	// Lifecycle is metadata.lifecycle of a skill ("shim" for an alias).
	Lifecycle string
	// MCP are the MCP servers a skill declares it needs (requires.mcp).
	MCP []string
}

// splitFrontmatter returns the "---" YAML header of a markdown file, if any,
// and the body after it.
func splitFrontmatter(s string) (header, body string) {
	t := strings.TrimLeft(s, "\ufeff")
	if !strings.HasPrefix(t, "---") {
		return "", s
	}
	first, rest, ok := strings.Cut(t, "\n")
	if !ok || strings.TrimSpace(first) != "---" {
		return "", s
	}
	for off := 0; off < len(rest); {
		line, _, _ := strings.Cut(rest[off:], "\n")
		if strings.TrimSpace(line) == "---" {
			end := off + len(line)
			if end < len(rest) {
				end++
			}
			return rest[:off], rest[end:]
		}
		off += len(line) + 1
	}
	return "", s
}

// parseFrontmatter reads the name, description, metadata.lifecycle and
// requires.mcp keys of a header. A header that is not valid YAML is an
// error naming the YAML error and its line in the file (the header starts
// on the file's second line).
func parseFrontmatter(header string) (frontmatter, error) {
	var fm frontmatter
	if strings.TrimSpace(header) == "" {
		return fm, nil
	}
	root, err := decodeYAML([]byte(header))
	if err != nil {
		return fm, fmt.Errorf("frontmatter is %s", fileLine(err.Error(), 1))
	}
	fm.Name = scalar(mapGet(root, "name"))
	fm.Description = scalar(mapGet(root, "description"))
	fm.Lifecycle = scalar(mapGet(mapGet(root, "metadata"), "lifecycle"))
	for _, t := range texts(mapGet(mapGet(root, "requires"), "mcp")) {
		fm.MCP = append(fm.MCP, strings.TrimPrefix(t, "- "))
	}
	return fm, nil
}

// yamlLine finds yaml.v3's "line N:" in an error.
var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// fileLine shifts the "line N" of a YAML error by offset, the lines of the
// file before the YAML starts.
func fileLine(msg string, offset int) string {
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "line "))
		if err != nil {
			return m
		}
		return "line " + strconv.Itoa(n+offset)
	})
}

// fence is one fenced code block of a markdown document.
type fence struct {
	lang string
	body string
}

// fences returns the ``` fenced blocks of a markdown document in order,
// each body sliced from s. An unterminated block runs to the end of the
// text.
func fences(s string) []fence {
	var out []fence
	open := false
	var cur fence
	start := 0
	for off := 0; off < len(s); {
		line, _, found := strings.Cut(s[off:], "\n")
		next := off + len(line)
		if found {
			next++
		}
		trim := strings.TrimSpace(line)
		switch {
		case !open && strings.HasPrefix(trim, "```"):
			open = true
			cur = fence{lang: strings.ToLower(strings.TrimSpace(strings.TrimLeft(trim, "`")))}
			start = next
		case open && strings.HasPrefix(trim, "```") && strings.Trim(trim, "`") == "":
			cur.body = s[start:off]
			out = append(out, cur)
			open = false
		}
		off = next
	}
	if open {
		cur.body = s[start:]
		out = append(out, cur)
	}
	return out
}

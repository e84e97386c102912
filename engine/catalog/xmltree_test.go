package catalog

import (
	"strings"
	"testing"
)

func TestParseXMLTreeTolerance(t *testing.T) {
	tests := []struct {
		name, src, path, want string
	}{
		{"stray lt", `<a><b>x < y <= z <3 a<</b></a>`, "a/b", "x < y <= z <3 a<"},
		{"stray amp", `<a><b>R&D & co &bogus; &amp;</b></a>`, "a/b", "R&D & co &bogus; &"},
		{"numeric", `<a><b>&#65;&#x42;&#0; &#xD800; &#1114112;</b></a>`, "a/b", "AB&#0; &#xD800; &#1114112;"},
		{"unclosed inner", `<a><b>one <i>two</b><c>three</c></a>`, "a/c", "three"},
		{"stray end", `<a></x><b>kept</b></a>`, "a/b", "kept"},
		{"self closing", `<a><b><b/>inner</b></a>`, "a/b", "<b/>inner"},
		{"cdata", `<a><b><![CDATA[<not> & markup]]> after</b></a>`, "a/b", "<not> & markup after"},
		{"unterminated cdata", `<a><b><![CDATA[open`, "a/b", "open"},
		{"eof closes", `<a><b>tail`, "a/b", "tail"},
		{"broken tag", `<a><b>see <c d="x>y</b></a>`, "a/b", `see <c d="x>y`},
		{"comment", `<a><!-- <b>no</b> --><b>yes</b></a>`, "a/b", "yes"},
		{"unterminated comment", `<a><!-- x <b>yes</b></a>`, "a/b", "yes"},
		{"control chars", "<a><b>x\x00y\x01</b></a>", "a/b", "x\uFFFDy\uFFFD"},
		{"invalid utf8", "<a><b>\xff</b></a>", "a/b", "\uFFFD"},
		{"unquoted attr", `<a><b>v</b></a>`, "a/b", "v"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := parseXMLTree(tt.src)
			n := doc.root
			for _, name := range strings.Split(tt.path, "/") {
				n = n.child(name)
				if n == nil {
					t.Fatalf("no %s in %q", tt.path, tt.src)
				}
			}
			if got := doc.text(n); got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseXMLTreeAttributes(t *testing.T) {
	doc := parseXMLTree(`<item cmd=go workflow='a &amp; b' data="&quot;q&quot;" x:y="ns" flag>t</item>`)
	it := doc.root.child("item")
	if it == nil {
		t.Fatal("no item")
	}
	for k, v := range map[string]string{"cmd": "go", "workflow": "a & b", "data": `"q"`, "x:y": "ns", "flag": "flag", "CMD": "go", "none": ""} {
		if got := it.attr(k); got != v {
			t.Errorf("attr %s = %q, want %q", k, got, v)
		}
	}
}

// TestParseXMLTreeBounded checks that hostile input costs a bounded amount
// of decoding: no quadratic re-reading, no unbounded nesting.
func TestParseXMLTreeBounded(t *testing.T) {
	inputs := map[string]string{
		"comments": strings.Repeat("<!--", 50000),
		"cdata":    strings.Repeat("<![CDATA[", 20000),
		"pi":       strings.Repeat("<?x ", 40000),
		"quotes":   strings.Repeat(`<a b="`, 30000),
		"nesting":  strings.Repeat("<a>", 100000) + "x",
	}
	for name, src := range inputs {
		doc := parseXMLTree(src)
		if limit := scanBudget(len(src)) + len(src); doc.scanned > limit {
			t.Errorf("%s: decoder read %d bytes for %d of input (limit %d)", name, doc.scanned, len(src), limit)
		}
		depth := 0
		for n := doc.root; len(n.children) > 0; n = n.children[len(n.children)-1] {
			depth++
		}
		if depth > maxXMLDepth+1 {
			t.Errorf("%s: depth %d", name, depth)
		}
	}
}

func TestCleanText(t *testing.T) {
	tests := map[string]string{
		"  one line  ":                     "one line",
		"first\n      - a\n      - b\n":    "first\n- a\n- b",
		"first\n    a\n      b  \n\n    c": "first\na\n  b\n\nc",
		"a\r\n  b":                         "a\nb",
		"x\nno indent\n  more":             "x\nno indent\n  more",
	}
	for in, want := range tests {
		if got := cleanText(in); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFrontmatterAndFences(t *testing.T) {
	h, body := splitFrontmatter("---\nname: 'pm'\ndescription: 'Product Manager'\n---\n\nbody\n")
	if fm, _ := parseFrontmatter(h); fm.Name != "pm" || fm.Description != "Product Manager" || body != "\nbody\n" {
		t.Errorf("frontmatter %q %q %+v", h, body, fm)
	}
	if h, body := splitFrontmatter("---\nno end\n"); h != "" || body != "---\nno end\n" {
		t.Errorf("unterminated frontmatter %q %q", h, body)
	}
	if h, _ := splitFrontmatter("----\nx\n---\n"); h != "" {
		t.Errorf("not a frontmatter marker: %q", h)
	}
	fs := fences("a\n```xml\n<x/>\n```\nb\n  ```yaml\nk: v\n```\n```\nopen")
	if len(fs) != 3 || fs[0].lang != "xml" || fs[0].body != "<x/>\n" || fs[1].lang != "yaml" || fs[2].body != "open" {
		t.Errorf("fences %+v", fs)
	}
}

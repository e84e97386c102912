package catalog

import (
	"encoding/xml"
	"strings"
	"unicode/utf8"
)

// xnode is one element of a tolerantly parsed XML document. Text is not kept
// in the tree: inner text is sliced from the source by offset, so nested
// markup inside a step or a handler survives as written.
type xnode struct {
	name     string
	attrs    []xml.Attr
	children []*xnode
	// inner is the element's content: src[innerStart:innerEnd].
	innerStart, innerEnd int
}

// xdoc is a parsed document and the source its offsets point into.
type xdoc struct {
	src  string
	root *xnode // synthetic root holding the top-level elements
	// scanned counts the bytes the decoder read, restarts included.
	scanned int
}

// maxXMLDepth bounds nesting so hostile input cannot grow the stack.
const maxXMLDepth = 256

// scanBudget bounds the decoder's work to a few passes over the input:
// input such as "<!--<!--<!--..." would otherwise be re-read to its end
// after every broken comment. Past the budget, what was parsed is kept.
func scanBudget(n int) int { return 4*n + 4096 }

// parseXMLTree builds an element tree from src, never failing: a stray '<'
// becomes text, unknown entities pass through, an end tag closes the
// elements left open inside it, a stray end tag is ignored and the end of
// input closes everything.
func parseXMLTree(src string) *xdoc {
	src = sanitizeXML(src)
	root := &xnode{name: "", innerStart: 0, innerEnd: len(src)}
	doc := &xdoc{src: src, root: root}
	stack := []*xnode{root}
	budget := scanBudget(len(src))
	for base := 0; base < len(src) && doc.scanned < budget; {
		next, read, done := parseXMLFrom(src, base, &stack)
		doc.scanned += read
		if done {
			break
		}
		base = next
	}
	for _, n := range stack[1:] {
		n.innerEnd = len(src)
	}
	return doc
}

// parseXMLFrom decodes tokens from src[base:] onto the stack. On a syntax
// error at a '<' it returns the offset just after that '<' to resume from;
// read is how many bytes the decoder consumed; done reports the end of
// input (or an error it cannot step over).
func parseXMLFrom(src string, base int, stack *[]*xnode) (next, read int, done bool) {
	d := xml.NewDecoder(strings.NewReader(src[base:]))
	d.Strict = false
	d.AutoClose = nil
	d.Entity = xml.HTMLEntity
	for {
		prev := base + int(d.InputOffset())
		tok, err := d.RawToken()
		if err != nil {
			read = int(d.InputOffset())
			// Resume just after the '<' that started the broken token, so
			// it reads as text; an error inside text resumes at the next '<'.
			if prev < len(src) && src[prev] == '<' {
				return prev + 1, read, false
			}
			if i := strings.IndexByte(src[prev:], '<'); i > 0 {
				return prev + i, read, false
			}
			return len(src), read, true
		}
		end := base + int(d.InputOffset())
		switch t := tok.(type) {
		case xml.StartElement:
			top := (*stack)[len(*stack)-1]
			n := &xnode{name: qname(t.Name), attrs: t.Attr, innerStart: end, innerEnd: end}
			top.children = append(top.children, n)
			if len(*stack) >= maxXMLDepth {
				continue // too deep: keep as an empty leaf
			}
			*stack = append(*stack, n)
		case xml.EndElement:
			// Close the nearest open element of that name and any left
			// open inside it; an end tag that matches nothing is ignored.
			name := qname(t.Name)
			for i := len(*stack) - 1; i > 0; i-- {
				if (*stack)[i].name == name {
					for _, open := range (*stack)[i:] {
						open.innerEnd = prev
					}
					*stack = (*stack)[:i]
					break
				}
			}
		}
	}
}

// qname renders a raw name, keeping any prefix.
func qname(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// sanitizeXML makes text the decoder would refuse acceptable: invalid UTF-8
// and control characters become U+FFFD, and a '<' that cannot start markup
// ("a < b", "<=", "<3") is escaped.
func sanitizeXML(s string) string {
	if !needsSanitize(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		c := s[i]
		if c == '<' {
			if i+1 < len(s) && startsMarkup(s[i+1]) {
				b.WriteByte(c)
			} else {
				b.WriteString("&lt;")
			}
			i++
			continue
		}
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !isXMLChar(r) {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsSanitize reports whether sanitizeXML would change s.
func needsSanitize(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '<':
			if i+1 >= len(s) || !startsMarkup(s[i+1]) {
				return true
			}
			i++
		case c < 0x20:
			if c != '\t' && c != '\n' && c != '\r' {
				return true
			}
			i++
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r == utf8.RuneError && size == 1) || !isXMLChar(r) {
				return true
			}
			i += size
		}
	}
	return false
}

// startsMarkup reports whether c may follow '<' in markup.
func startsMarkup(c byte) bool {
	return c == '/' || c == '!' || c == '?' || c == '_' || c == ':' ||
		('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c >= utf8.RuneSelf
}

// isXMLChar reports whether r is allowed in an XML document.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// attr returns the value of the attribute named key (case-insensitive).
func (n *xnode) attr(key string) string {
	for _, a := range n.attrs {
		if strings.EqualFold(qname(a.Name), key) {
			return a.Value
		}
	}
	return ""
}

// child returns the first direct child named name.
func (n *xnode) child(name string) *xnode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// find returns the first element named name in a depth-first walk of n's
// descendants, or nil.
func (n *xnode) find(name string) *xnode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
		if f := c.find(name); f != nil {
			return f
		}
	}
	return nil
}

// findAll returns every descendant whose name is in names, in document
// order, without looking inside the elements it returns or inside elements
// whose name is in skip.
func (n *xnode) findAll(names []string, skip ...string) []*xnode {
	var out []*xnode
	var walk func(*xnode, int)
	walk = func(p *xnode, depth int) {
		for _, c := range p.children {
			switch {
			case contains(names, c.name):
				out = append(out, c)
			case contains(skip, c.name) || depth >= maxXMLDepth:
			default:
				walk(c, depth+1)
			}
		}
	}
	walk(n, 0)
	return out
}

// kids returns the direct children named name.
func (n *xnode) kids(name string) []*xnode {
	var out []*xnode
	for _, c := range n.children {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// raw returns the element's inner markup exactly as written.
func (d *xdoc) raw(n *xnode) string {
	if n == nil || n.innerStart >= n.innerEnd || n.innerEnd > len(d.src) {
		return ""
	}
	return d.src[n.innerStart:n.innerEnd]
}

// text returns the element's inner content with entities decoded, CDATA
// unwrapped and indentation cleaned. Nested markup stays as written.
func (d *xdoc) text(n *xnode) string {
	return cleanText(decodeXMLText(d.raw(n)))
}

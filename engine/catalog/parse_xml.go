package catalog

import (
	"fmt"
	"strings"
)

// ParseXMLCmds parses an agent written as XML inside markdown with
// <critical-actions><i> and <cmds><c cmd=... run-workflow|exec|action|...>,
// fenced in ```xml or not, with or without YAML frontmatter.
func ParseXMLCmds(path string, data []byte) (*Agent, error) {
	return parseXMLAgent(path, data, FormatXMLCmds)
}

// ParseXMLV6 parses a compiled v6 agent: <agent> with <activation><step>,
// <menu-handlers>, <rules>, <persona>, <prompts>, <greeting> and
// <menu><item>. It also reads a plain .xml agent file.
func ParseXMLV6(path string, data []byte) (*Agent, error) {
	return parseXMLAgent(path, data, FormatXMLV6)
}

// parseXMLAgent reads every part either XML format may carry, so a file
// mixing the two loses nothing; f only labels the result.
func parseXMLAgent(path string, data []byte, f Format) (*Agent, error) {
	header, body := splitFrontmatter(string(data))
	region, ok := agentRegion(body)
	if !ok {
		return nil, fmt.Errorf("%w: no <agent> element", ErrNotAgent)
	}
	doc := parseXMLTree(region)
	ag := doc.root.child("agent")
	if ag == nil {
		return nil, fmt.Errorf("%w: no <agent> element", ErrNotAgent)
	}
	fm, _ := parseFrontmatter(header)
	a := &Agent{
		ID:          fileStem(path),
		Name:        strings.TrimSpace(ag.attr("name")),
		Title:       strings.TrimSpace(ag.attr("title")),
		Icon:        strings.TrimSpace(ag.attr("icon")),
		Description: fm.Description,
		Path:        path,
		Format:      f,
		EntryPoint:  !strings.EqualFold(strings.TrimSpace(ag.attr("localskip")), "true"),
	}
	a.Persona = xmlPersona(doc, ag.find("persona"))
	a.Activation = xmlActivation(doc, ag)
	if mh := ag.find("menu-handlers"); mh != nil {
		a.Handlers = doc.text(mh)
	}
	a.Rules = xmlRules(doc, ag)
	for _, p := range ag.findAll([]string{"prompt"}, "menu-handlers") {
		a.Prompts = append(a.Prompts, Prompt{ID: strings.TrimSpace(p.attr("id")), Content: doc.text(p)})
	}
	if g := ag.find("greeting"); g != nil {
		a.Greeting = doc.text(g)
	}
	a.Menu = xmlMenu(doc, ag)
	if err := checkAgent(a); err != nil {
		return nil, err
	}
	return a, nil
}

// agentRegion returns the text from the first <agent> start tag on,
// preferring one inside a fenced block.
func agentRegion(body string) (string, bool) {
	for _, fc := range fences(body) {
		if i := agentTag(fc.body); i >= 0 {
			return fc.body[i:], true
		}
	}
	if i := agentTag(body); i >= 0 {
		return body[i:], true
	}
	return "", false
}

// agentTag returns the offset of the first "<agent" start tag, or -1.
func agentTag(s string) int {
	off := 0
	for {
		i := strings.Index(s[off:], "<agent")
		if i < 0 {
			return -1
		}
		j := off + i + len("<agent")
		if j == len(s) || strings.IndexByte(" \t\r\n>/", s[j]) >= 0 {
			return off + i
		}
		off = j
	}
}

// xmlPersona reads <persona>: role, identity, communication_style and
// principles (or core_principles, as text or as <p> items).
func xmlPersona(doc *xdoc, p *xnode) Persona {
	if p == nil {
		return Persona{}
	}
	get := func(names ...string) string {
		for _, name := range names {
			if c := p.child(name); c != nil {
				if items := c.findAll([]string{"p", "li", "principle"}); len(items) > 0 {
					lines := make([]string, 0, len(items))
					for _, it := range items {
						if t := doc.text(it); t != "" {
							lines = append(lines, "- "+t)
						}
					}
					return strings.Join(lines, "\n")
				}
				return doc.text(c)
			}
		}
		return ""
	}
	return Persona{
		Role:               get("role"),
		Identity:           get("identity"),
		CommunicationStyle: get("communication_style", "communication-style", "style"),
		Principles:         get("principles", "core_principles", "core-principles"),
	}
}

// xmlActivation returns the activation steps (<step> or <s>, also inside
// <steps>) and the <critical-actions> items, in document order. Any other
// section inside <activation> (a <notice>, orchestrator notes) becomes a step
// of its own, so no instruction is lost; <menu-handlers> and <rules> are
// kept elsewhere.
func xmlActivation(doc *xdoc, ag *xnode) []string {
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	var walk func(n *xnode, depth int)
	walk = func(n *xnode, depth int) {
		for _, c := range n.children {
			switch c.name {
			case "step", "s", "i":
				add(doc.text(c))
			case "steps":
				if depth < 2 {
					walk(c, depth+1)
				}
			case "menu-handlers", "rules":
			default:
				add(section(doc, c))
			}
		}
	}
	for _, block := range ag.findAll([]string{"activation", "critical-actions"}, agentSections...) {
		walk(block, 0)
	}
	return out
}

// agentSections are the parts of an <agent> the parser reads; any other
// top-level section is kept as a rule.
var agentSections = []string{"persona", "activation", "critical-actions", "cmds", "menu", "prompts", "rules", "greeting", "menu-handlers"}

// section renders an element the parser has no field for as
// "name:\ntext", keeping its content.
func section(doc *xdoc, n *xnode) string {
	t := doc.text(n)
	if t == "" {
		return ""
	}
	if strings.Contains(t, "\n") {
		return n.name + ":\n" + t
	}
	return n.name + ": " + t
}

// xmlRules returns the rules of every <rules> block: its <r> items, or else
// its text, one rule per "- " line (or per line when there are no dashes).
func xmlRules(doc *xdoc, ag *xnode) []string {
	var out []string
	for _, block := range ag.findAll([]string{"rules"}, "menu-handlers", "prompts") {
		if rs := block.findAll([]string{"r", "rule"}); len(rs) > 0 {
			for _, r := range rs {
				if t := doc.text(r); t != "" {
					out = append(out, t)
				}
			}
			continue
		}
		out = append(out, textRules(doc.text(block))...)
	}
	for _, c := range ag.children {
		if !contains(agentSections, c.name) {
			if t := section(doc, c); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// textRules splits a text list into rules. With "- " items, lines without a
// dash continue the item before; otherwise every line is a rule.
func textRules(s string) []string {
	lines := strings.Split(s, "\n")
	dashed := false
	for _, l := range lines {
		if isBullet(strings.TrimSpace(l)) {
			dashed = true
			break
		}
	}
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
		case !dashed:
			out = append(out, t)
		case isBullet(t):
			out = append(out, strings.TrimSpace(t[1:]))
		case len(out) > 0:
			out[len(out)-1] += " " + t
		default:
			out = append(out, t)
		}
	}
	return out
}

func isBullet(t string) bool {
	return strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || t == "-"
}

// xmlMenu returns every <item> of <menu> and every <c> of <cmds>, handler
// or not, in document order.
func xmlMenu(doc *xdoc, ag *xnode) []MenuItem {
	var out []MenuItem
	for _, m := range ag.findAll([]string{"menu", "cmds"}, "menu-handlers", "prompts", "persona") {
		name := "item"
		if m.name == "cmds" {
			name = "c"
		}
		for _, el := range m.kids(name) {
			it := newMenuItem(el.attr("cmd"), doc.text(el))
			for _, at := range el.attrs {
				it.setHandler(qname(at.Name), at.Value)
			}
			out = append(out, it)
		}
	}
	return out
}

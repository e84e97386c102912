package party

import (
	"fmt"
	"sort"
	"strings"
)

// pool is every member a party can draw on, keyed by code: the installed
// agents, then the custom members (a custom member whose code, alias or
// name matches an installed agent overrides it in place).
type pool struct {
	members   map[string]Member
	index     map[string]string // code, alias, lower-cased name -> code
	installed []string          // the default room, in order
}

// newPool builds the pool from the installed agents and the workflow's
// party_members.
func newPool(agents []installedAgent, custom any) *pool {
	p := &pool{members: map[string]Member{}, index: map[string]string{}}
	for _, a := range agents {
		t := a.table
		p.register(Member{
			Code: a.code, Name: str(t["name"], a.code), Icon: text(t["icon"]), Title: text(t["title"]),
			Description: text(t["description"]), Module: text(t["module"]), Team: text(t["team"]),
			Source: "installed",
		})
		p.installed = append(p.installed, a.code)
	}
	for _, v := range list(custom) {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		p.addCustom(m)
	}
	return p
}

// addCustom adds or overrides one custom member.
func (p *pool) addCustom(m map[string]any) {
	code := str(m["code"], "")
	if code == "" {
		return
	}
	canonical := p.lookup(code)
	if canonical == "" {
		canonical = code
	}
	e := p.members[canonical]
	e.Code, e.Source = canonical, "custom"
	for field, dst := range map[string]*string{
		"name": &e.Name, "icon": &e.Icon, "title": &e.Title, "persona": &e.Persona,
		"capabilities": &e.Capabilities, "model": &e.Model,
	} {
		if v, ok := m[field]; ok && v != nil {
			*dst = text(v)
		}
	}
	if e.Name == "" {
		e.Name = canonical
	}
	p.register(e)
}

// all is every member, by code.
func (p *pool) all() []Member {
	out := make([]Member, 0, len(p.members))
	for _, m := range p.members {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// register puts e in the pool and indexes its code, alias and name.
func (p *pool) register(e Member) {
	p.members[e.Code] = e
	p.index[e.Code] = e.Code
	p.index[strings.ToLower(e.Code)] = e.Code
	p.index[strings.ToLower(alias(e.Code))] = e.Code
	if e.Name != "" {
		p.index[strings.ToLower(e.Name)] = e.Code
	}
}

// lookup returns the code a token names, or "".
func (p *pool) lookup(token string) string {
	if c, ok := p.index[token]; ok {
		return c
	}
	return p.index[strings.ToLower(token)]
}

// resolve returns the members the tokens name, in order, and the tokens
// that name none (a value that is not a string is unresolved as written).
func (p *pool) resolve(tokens []any) (out []Member, unresolved []string) {
	for _, t := range tokens {
		s, ok := t.(string)
		if !ok {
			unresolved = append(unresolved, fmt.Sprint(t))
			continue
		}
		if c := p.lookup(s); c != "" {
			if m, ok := p.members[c]; ok {
				out = append(out, m)
				continue
			}
		}
		unresolved = append(unresolved, s)
	}
	return out, unresolved
}

// alias is an installed agent's short name: bmad-agent-analyst -> analyst.
func alias(code string) string {
	for _, prefix := range []string{"bmad-agent-", "bmad-"} {
		if rest, ok := strings.CutPrefix(code, prefix); ok {
			return rest
		}
	}
	return code
}

// text is a TOML value as text ("" for nil).
func text(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

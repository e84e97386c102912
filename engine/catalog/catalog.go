package catalog

import "strings"

// Options says where to look for agents.
type Options struct {
	// Bundles are directories holding bundles (each a folder with bundle.yaml),
	// or a bundle directory itself.
	Bundles []string
	// BMADRoots are BMAD project roots, source trees or v4 trees.
	BMADRoots []string
	// Skills is a folder of Agent Skills (SKILL.md folders) every agent
	// may use; it appears to the model as /skills.
	Skills string
	// Samples are the bundles shipped with agentbot; they load last, so a
	// user's agent with the same id keeps the plain id.
	Samples []string
}

// Problem is one thing that could not be loaded, with a plain reason.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Catalog is every agent and skill found, and every problem met on the
// way.
type Catalog struct {
	Agents []*Agent
	// Skills are the skills of skills-format projects and of the shared
	// skills folder, sorted by name within each source.
	Skills   []*Skill
	Problems []Problem
	// SkillsDir is the shared skills folder on disk, "" when none.
	SkillsDir string
}

// Load discovers agents: first the bundles, then the BMAD roots, then the
// shared skills folder, then the shipped samples, each in the order given.
// A broken bundle, agent file or root becomes a Problem, and so does a
// FIFO, socket or device where a file should be (it is never opened); the
// others still load. A path given twice loads once. Agents get unique ids
// (see assignIDs: the first loaded keeps an id) and are sorted by id;
// problems keep discovery order.
func Load(opts Options) *Catalog {
	l := newLoader()
	for _, p := range opts.Bundles {
		if strings.TrimSpace(p) != "" {
			l.loadBundles(p)
		}
	}
	for _, p := range opts.BMADRoots {
		if strings.TrimSpace(p) != "" {
			l.loadRoot(p)
		}
	}
	dir := ""
	if strings.TrimSpace(opts.Skills) != "" {
		dir = l.loadSkillsFolder(opts.Skills)
	}
	for _, p := range opts.Samples {
		if strings.TrimSpace(p) != "" {
			l.loadBundles(p)
		}
	}
	l.problems = append(l.problems, assignIDs(l.agents)...)
	return &Catalog{Agents: l.agents, Skills: l.skills, Problems: l.problems, SkillsDir: dir}
}

// Find returns the agent with the given id: an exact match first, then a
// case-insensitive one, then the only agent whose id ends in "/"+id or in
// "/"+id+"-N" ("storyteller" finds "cis/storyteller"; "pm" finds nothing
// when both "bmm/pm" and "bmm/pm-2" exist).
// A leading "*" or "@" is ignored.
func (c *Catalog) Find(id string) (*Agent, bool) {
	if c == nil {
		return nil, false
	}
	id = strings.TrimLeft(strings.TrimSpace(id), "*@")
	if id == "" {
		return nil, false
	}
	for _, a := range c.Agents {
		if a.ID == id {
			return a, true
		}
	}
	for _, a := range c.Agents {
		if strings.EqualFold(a.ID, id) || (a.SkillName != "" && strings.EqualFold(a.SkillName, id)) {
			return a, true
		}
	}
	var found *Agent
	for _, a := range c.Agents {
		if shortIDMatch(a.ID, id) {
			if found != nil {
				return nil, false // ambiguous
			}
			found = a
		}
	}
	return found, found != nil
}

// shortIDMatch reports whether id is the part of full after its last "/",
// possibly with the "-2", "-3" that assignIDs adds: "pm" matches "bmm/pm"
// and "bmm/pm-2", so that it is ambiguous when both exist.
func shortIDMatch(full, id string) bool {
	i := strings.LastIndexByte(full, '/')
	if i < 0 {
		return false
	}
	last := full[i+1:]
	if strings.EqualFold(last, id) {
		return true
	}
	if len(last) <= len(id)+1 || !strings.EqualFold(last[:len(id)], id) || last[len(id)] != '-' {
		return false
	}
	for _, r := range last[len(id)+1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// EntryPoints returns the agents offered to people, in catalog order.
func (c *Catalog) EntryPoints() []*Agent {
	if c == nil {
		return nil
	}
	var out []*Agent
	for _, a := range c.Agents {
		if a.EntryPoint {
			out = append(out, a)
		}
	}
	return out
}

// SkillsFor returns the skills agent a may use: those of its project (an
// agent file of a 6.0–6.2 install uses its project's skills too), then
// those of the shared skills folder.
func (c *Catalog) SkillsFor(a *Agent) []*Skill {
	if c == nil {
		return nil
	}
	project := ""
	if a != nil && a.Home != nil {
		project = a.Home.ProjectRoot
	}
	var own, shared []*Skill
	for _, s := range c.Skills {
		switch {
		case s.Project == "":
			shared = append(shared, s)
		case project != "" && s.Project == project:
			own = append(own, s)
		}
	}
	return append(own, shared...)
}

// FindSkill returns the skill named name that agent a may use.
func (c *Catalog) FindSkill(a *Agent, name string) (*Skill, bool) {
	name = strings.TrimSpace(name)
	for _, s := range c.SkillsFor(a) {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return nil, false
}

// LookupSkill returns the skill named name that agent a may use, or, when
// none has that name, the installed skill of the same base name (an older
// or "-preview" name: bmad-product-brief for bmad-product-brief-preview);
// variant is set then.
func (c *Catalog) LookupSkill(a *Agent, name string) (sk *Skill, variant, ok bool) {
	if sk, ok := c.FindSkill(a, name); ok {
		return sk, false, true
	}
	var found *Skill
	v := variantOf(strings.TrimSpace(name), func(n string) bool {
		found, _ = c.FindSkill(a, n)
		return found != nil
	})
	if v == "" {
		return nil, false, false
	}
	return found, true, true
}

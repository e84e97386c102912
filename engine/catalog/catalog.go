package catalog

// Options says where to look for agents.
type Options struct {
	// Bundles are directories holding bundles (each a folder with bundle.yaml),
	// or a bundle directory itself.
	Bundles []string
	// BMADRoots are BMAD project roots, source trees or v4 trees.
	BMADRoots []string
}

// Problem is one thing that could not be loaded, with a plain reason.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Catalog is every agent found, and every problem met on the way.
type Catalog struct {
	Agents   []*Agent
	Problems []Problem
}

// Load discovers agents. A broken bundle or root becomes a Problem; the
// others still load.
func Load(opts Options) *Catalog {
	panic("todo")
}

// Find returns the agent with the given id.
func (c *Catalog) Find(id string) (*Agent, bool) {
	panic("todo")
}

// EntryPoints returns the agents offered to people.
func (c *Catalog) EntryPoints() []*Agent {
	panic("todo")
}

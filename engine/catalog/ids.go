package catalog

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// assignIDs makes every agent's ID unique, case-insensitively, and sorts
// the agents by ID. Each agent starts with its short id (the bundle.yaml
// id, the manifest name, the skill name without bmad-agent-, the file
// stem). Precedence is load order, which Load makes the user's bundles,
// then BMAD roots, then the shared skills folder, then the shipped
// samples:
//
//  1. The first agent with an id keeps it ("product-lead").
//  2. A later agent with the same id gets its module as a prefix
//     ("product-team/product-lead"), and "-2", "-3" when that is taken too,
//     and a problem entry names both, so nothing is renamed silently.
func assignIDs(agents []*Agent) []Problem {
	owner := make(map[string]*Agent, len(agents))
	for _, a := range agents {
		a.ID = strings.TrimSpace(a.ID)
		if a.ID == "" {
			a.ID = "agent"
		}
	}
	var problems []Problem
	for _, a := range agents {
		k := strings.ToLower(a.ID)
		first, taken := owner[k]
		if !taken {
			owner[k] = a
			continue
		}
		plain := a.ID
		base := plain
		if a.Module != "" {
			base = a.Module + "/" + plain
		}
		id := base
		for n := 2; owner[strings.ToLower(id)] != nil; n++ {
			id = base + "-" + strconv.Itoa(n)
		}
		owner[strings.ToLower(id)] = a
		a.ID = id
		problems = append(problems, Problem{Path: a.Path, Reason: fmt.Sprintf("id %q is taken by %s; this agent is available as %s", plain, first.Path, id)})
	}
	sort.SliceStable(agents, func(i, j int) bool {
		return strings.ToLower(agents[i].ID) < strings.ToLower(agents[j].ID)
	})
	return problems
}

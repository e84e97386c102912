package catalog

import (
	"sort"
	"strconv"
	"strings"
)

// assignIDs makes every agent's ID unique, case-insensitively, and sorts
// the agents by ID. Each agent starts with its short id (the bundle.yaml id,
// the manifest name, the v4 id or the file stem). The rule is deterministic:
//
//  1. An id no other agent has stays as it is ("pm").
//  2. Agents sharing an id are each prefixed with their module ("bmm/pm",
//     "cis/storyteller", "product-team/pm").
//  3. If prefixed ids still collide (the same module loaded from two
//     roots), the first in load order keeps it and the next get "-2", "-3"
//     ("bmm/pm", "bmm/pm-2"). Load order is the order of the options, then
//     file order within each source.
func assignIDs(agents []*Agent) {
	count := make(map[string]int, len(agents))
	for _, a := range agents {
		a.ID = strings.TrimSpace(a.ID)
		if a.ID == "" {
			a.ID = "agent"
		}
		count[strings.ToLower(a.ID)]++
	}
	for _, a := range agents {
		if count[strings.ToLower(a.ID)] > 1 && a.Module != "" {
			a.ID = a.Module + "/" + a.ID
		}
	}
	taken := make(map[string]bool, len(agents))
	for _, a := range agents {
		taken[strings.ToLower(a.ID)] = true
	}
	used := make(map[string]bool, len(agents))
	for _, a := range agents {
		key := strings.ToLower(a.ID)
		if used[key] {
			base := a.ID
			for n := 2; ; n++ {
				id := base + "-" + strconv.Itoa(n)
				if k := strings.ToLower(id); !used[k] && !taken[k] {
					a.ID = id
					key = k
					break
				}
			}
		}
		used[key] = true
	}
	sort.SliceStable(agents, func(i, j int) bool {
		return strings.ToLower(agents[i].ID) < strings.ToLower(agents[j].ID)
	})
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"agentbot/engine/catalog"
)

// runAgents lists the agents found in the configured bundles and BMAD roots.
// It exits 1 only when no agent at all could be loaded.
func runAgents(ctx context.Context, e *env) int {
	var asJSON, all bool
	cfg, _, code := parse("agents", e, func(fs *flagSet) {
		fs.BoolVar(&asJSON, "json", false, "print {\"agents\":[...],\"problems\":[...]}")
		fs.BoolVar(&all, "all", true, "include agents that are not entry points")
	})
	if cfg == nil {
		return code
	}
	cat := loadCatalog(cfg)
	agents := cat.Agents
	if !all {
		agents = cat.EntryPoints()
	}
	if asJSON {
		out := struct {
			Agents   []catalog.AgentSummary `json:"agents"`
			Skills   []*catalog.Skill       `json:"skills"`
			Problems []catalog.Problem      `json:"problems"`
		}{Agents: []catalog.AgentSummary{}, Skills: cat.Skills, Problems: cat.Problems}
		if out.Skills == nil {
			out.Skills = []*catalog.Skill{}
		}
		if out.Problems == nil {
			out.Problems = []catalog.Problem{}
		}
		for _, a := range agents {
			out.Agents = append(out.Agents, a.Summary())
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(e.stderr, "agentbot agents: %v\n", err)
			return 1
		}
	} else {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tTITLE\tSOURCE\tFORMAT\tENTRY\tMENU\tPATH")
		for _, a := range agents {
			entry := "no"
			if a.EntryPoint {
				entry = "yes"
			}
			name := a.Name
			if a.Icon != "" {
				name = a.Icon + " " + name
			}
			if a.Problem != "" {
				entry = "broken"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", a.ID, name, a.Title, a.Source, a.Format, entry, len(a.Menu), a.Path)
		}
		tw.Flush()
		if len(cat.Skills) > 0 {
			fmt.Fprintf(e.stdout, "\n%d skills:\n", len(cat.Skills))
			tw = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SKILL\tKIND\tMODULE\tNOTE")
			for _, s := range cat.Skills {
				note := s.Problem
				switch {
				case note != "":
				case s.AliasOf != "":
					note = "old name of " + s.AliasOf
				case s.Needs != "":
					note = "needs " + s.Needs
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Kind, s.Module, note)
			}
			tw.Flush()
		}
		if len(cat.Problems) > 0 {
			fmt.Fprintf(e.stderr, "\n%d problem(s):\n", len(cat.Problems))
			for _, p := range cat.Problems {
				fmt.Fprintf(e.stderr, "  %s: %s\n", p.Path, p.Reason)
			}
		}
	}
	if len(cat.Agents) == 0 {
		fmt.Fprintln(e.stderr, "agentbot agents: no agent could be loaded; point --bundles or --bmad-root at your agents")
		return 1
	}
	return 0
}

// agentIDs lists the ids of agents, for error messages.
func agentIDs(agents []*catalog.Agent) []string {
	ids := make([]string, 0, len(agents))
	for _, a := range agents {
		ids = append(ids, a.ID)
	}
	return ids
}

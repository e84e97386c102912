package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rivo/uniseg"

	"agentbot/cmd/agentbot/mcptools"
	"agentbot/engine/catalog"
)

// AgentsOptions are agentbot agents' flags and the settings it reads.
type AgentsOptions struct {
	// JSON prints {"agents":[...],"skills":[...],"problems":[...]}, each
	// agent with its MCP servers' tools.
	JSON bool
	// All includes the agents that are not entry points.
	All bool
	// MCPConfig is the MCP servers' config file ("": none); Getenv
	// resolves the variables it names.
	MCPConfig string
	Getenv    func(string) string
}

// Agents lists the agents of cat, found in the configured bundles and BMAD
// roots, on stdout, its problems on stderr. It returns the exit code: 1
// only when no agent at all could be loaded (2 for an MCP config that
// cannot be read).
func Agents(ctx context.Context, stdout, stderr io.Writer, cat *catalog.Catalog, o AgentsOptions) int {
	agents := cat.Agents
	if !o.All {
		agents = cat.EntryPoints()
	}
	code := 0
	if o.JSON {
		code = printAgentsJSON(ctx, stdout, stderr, o, cat, agents)
	} else {
		printAgentsTable(stdout, stderr, cat, agents)
	}
	if code != 0 {
		return code
	}
	if len(cat.Agents) == 0 {
		fmt.Fprintln(stderr, "agentbot agents: no agent could be loaded; point --bundles or --bmad-root at your agents")
		return 1
	}
	return 0
}

// printAgentsJSON prints agents --json: the agents with their MCP tools,
// the skills and the problems; it returns the exit code of a failure, or 0.
func printAgentsJSON(ctx context.Context, stdout, stderr io.Writer, o AgentsOptions, cat *catalog.Catalog, agents []*catalog.Agent) int {
	tools, code := agentTools(ctx, stderr, o, agents)
	if code != 0 {
		return code
	}
	out := struct {
		Agents   []AgentJSON       `json:"agents"`
		Skills   []*catalog.Skill  `json:"skills"`
		Problems []catalog.Problem `json:"problems"`
	}{Agents: []AgentJSON{}, Skills: cat.Skills, Problems: cat.Problems}
	if out.Skills == nil {
		out.Skills = []*catalog.Skill{}
	}
	if out.Problems == nil {
		out.Problems = []catalog.Problem{}
	}
	for _, a := range agents {
		aj := AgentJSON{AgentSummary: a.Summary()}
		for _, n := range a.MCP {
			aj.Tools = append(aj.Tools, tools[n])
		}
		aj.SkillMCP = skillMCP(cat, a)
		out.Agents = append(out.Agents, aj)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "agentbot agents: %v\n", err)
		return 1
	}
	return 0
}

// printAgentsTable prints the agents table, the skills table when there
// are skills, and the problems on stderr.
func printAgentsTable(stdout, stderr io.Writer, cat *catalog.Catalog, agents []*catalog.Agent) {
	rows := [][]string{{"ID", "NAME", "TITLE", "SOURCE", "FORMAT", "ENTRY", "MENU", "PATH"}}
	for _, a := range agents {
		rows = append(rows, agentRow(a))
	}
	_ = writeTable(stdout, rows)
	if len(cat.Skills) > 0 {
		fmt.Fprintf(stdout, "\n%d skills:\n", len(cat.Skills))
		rows := [][]string{{"SKILL", "KIND", "MODULE", "NOTE"}}
		for _, s := range cat.Skills {
			rows = append(rows, []string{s.Name, string(s.Kind), s.Module, skillNote(s)})
		}
		_ = writeTable(stdout, rows)
	}
	if len(cat.Problems) > 0 {
		fmt.Fprintf(stderr, "\n%d problem(s):\n", len(cat.Problems))
		for _, p := range cat.Problems {
			fmt.Fprintf(stderr, "  %s: %s\n", p.Path, p.Reason)
		}
	}
}

// agentRow is an agent's row of the agents table.
func agentRow(a *catalog.Agent) []string {
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
	return []string{a.ID, name, a.Title, a.Source, string(a.Format), entry, strconv.Itoa(len(a.Menu)), a.Path}
}

// skillNote is the NOTE column of a skill: its problem, or what it is an
// alias of, needs, runs or requires.
func skillNote(s *catalog.Skill) string {
	switch {
	case s.Problem != "":
		return s.Problem
	case s.AliasOf != "":
		return "old name of " + s.AliasOf
	case s.Needs != "":
		return "needs " + s.Needs
	case s.Scripts:
		return catalog.ScriptsNote
	case len(s.MCP) > 0:
		return "requires MCP " + strings.Join(s.MCP, ", ")
	}
	return ""
}

// AgentJSON is one agent in agents --json: its summary and its MCP tools.
type AgentJSON struct {
	catalog.AgentSummary
	// Tools are the agent's MCP servers, in its order, with their tools.
	Tools []ServerTools `json:"tools,omitempty"`
	// SkillMCP are the MCP servers its skills require, each said to be
	// configured for the agent or not.
	SkillMCP []SkillNeedJSON `json:"skill_mcp,omitempty"`
}

// SkillNeedJSON is an MCP server a skill the agent may load requires, and
// whether the agent has it.
type SkillNeedJSON struct {
	Skill string `json:"skill"`
	catalog.MCPNeed
}

// skillMCP lists, for the skills agent a may load, the MCP servers they
// require and whether a's servers include them.
func skillMCP(cat *catalog.Catalog, a *catalog.Agent) []SkillNeedJSON {
	var out []SkillNeedJSON
	for _, s := range cat.SkillsFor(a) {
		for _, n := range s.MCPNeeds(a.MCP) {
			out = append(out, SkillNeedJSON{Skill: s.Name, MCPNeed: n})
		}
	}
	return out
}

// ServerTools is one MCP server of an agent: the tools it offers, or why
// it offers none.
type ServerTools struct {
	Server  string     `json:"server"`
	Tools   []ToolJSON `json:"tools,omitempty"`
	Problem string     `json:"problem,omitempty"`
}

// ToolJSON is one MCP tool as the model sees it, with its policy.
type ToolJSON struct {
	Name   string `json:"name"`
	Policy string `json:"policy"`
}

// agentToolsTimeout bounds connecting to the MCP servers for agents --json.
const agentToolsTimeout = 30 * time.Second

// agentTools connects to every MCP server the agents name and lists its
// tools, by server name. A config that cannot be read returns exit code 2.
func agentTools(ctx context.Context, stderr io.Writer, o AgentsOptions, agents []*catalog.Agent) (map[string]ServerTools, int) {
	out := map[string]ServerTools{}
	var names []string
	for _, a := range agents {
		for _, n := range a.MCP {
			if _, seen := out[n]; !seen {
				out[n] = ServerTools{Server: n}
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return out, 0
	}
	if o.MCPConfig == "" {
		for _, n := range names {
			out[n] = ServerTools{Server: n, Problem: "no MCP config: set AGENTBOT_MCP_CONFIG (--mcp-config)"}
		}
		return out, 0
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tools, err := mcptools.Load(o.MCPConfig, o.Getenv, quiet)
	if err != nil {
		fmt.Fprintf(stderr, "agentbot agents: %v\n", err)
		return nil, 2
	}
	defer tools.Close()
	ctx, cancel := context.WithTimeout(ctx, agentToolsTimeout)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Add(1)
		go func() { // servers are listed at once, each within its timeout
			defer wg.Done()
			st := ServerTools{Server: n}
			ts, probs := tools.Manager().ToolsWait(ctx, []string{n})
			for _, t := range ts {
				st.Tools = append(st.Tools, ToolJSON{Name: t.Name, Policy: t.Policy})
			}
			var why []string
			for _, p := range probs {
				why = append(why, p.Reason)
			}
			st.Problem = strings.Join(why, "; ")
			mu.Lock()
			out[n] = st
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out, 0
}

// writeTable writes rows as columns aligned by their width on a terminal,
// two spaces apart: a wide emoji or CJK character takes two cells, and so
// does an emoji made wide by a variation selector ("✏️"), as text/tabwriter,
// which counts runes, does not know. No line ends in blanks.
func writeTable(w io.Writer, rows [][]string) error {
	var widths []int
	for _, r := range rows {
		for i, cell := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], uniseg.StringWidth(cell))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var line strings.Builder
		for i, cell := range r {
			line.WriteString(cell)
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-uniseg.StringWidth(cell)+2))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ")) // an empty last cell
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

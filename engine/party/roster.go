// Package party resolves BMAD party mode's roster in Go, the set the
// bmad-party-mode skill's resolve_party.py returns: the installed agents
// (from the merged central config) and the custom party members in one
// pool, the saved groups and default_party from the skill's merged
// customization (team and personal overrides included), the run mode, the
// memory flag, and a group's scene and open cast.
package party

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"agentbot/engine/custom"
)

// SkillName is the name of BMAD's party mode skill.
const SkillName = "bmad-party-mode"

// Modes a party runs in. ModeAgentTeam needs Claude Code's agent teams and
// falls back to ModeSession here, as the skill says.
const (
	ModeSession   = "session"
	ModeAuto      = "auto"
	ModeSubagent  = "subagent"
	ModeAgentTeam = "agent-team"
)

// InstalledRoom is the id of the default room: the installed agents.
const InstalledRoom = "installed"

// Member is one persona of the pool: an installed agent or a custom member.
type Member struct {
	Code         string `json:"code"`
	Name         string `json:"name"`
	Icon         string `json:"icon"`
	Title        string `json:"title"`
	Description  string `json:"description,omitempty"`
	Module       string `json:"module,omitempty"`
	Team         string `json:"team,omitempty"`
	Source       string `json:"source"` // "installed" or "custom"
	Persona      string `json:"persona,omitempty"`
	Capabilities string `json:"capabilities,omitempty"`
	Model        string `json:"model,omitempty"`
}

// GroupEntry is a saved group in the menu: no member detail.
type GroupEntry struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	MemberCount int    `json:"member_count"`
	OpenCast    bool   `json:"open_cast,omitempty"`
}

// Roster is what a party starts with: the active room and its members, the
// other groups by name, the mode and memory. For a --list-groups request
// only Mode, DefaultParty and Groups are set; for an unknown --party, Error,
// Requested and Groups (the available ones).
type Roster struct {
	Mode         string       `json:"party_mode"`
	DefaultParty string       `json:"default_party,omitempty"`
	Groups       []GroupEntry `json:"groups"`
	// InstalledResolved is false when the central config could not be read:
	// the installed agents are then missing.
	InstalledResolved bool     `json:"installed_agents_resolved"`
	Active            string   `json:"active,omitempty"`
	Name              string   `json:"name,omitempty"`
	Members           []Member `json:"members,omitempty"`
	Unresolved        []string `json:"unresolved,omitempty"`
	Memory            bool     `json:"memory_enabled"`
	Scene             string   `json:"scene,omitempty"`
	OpenCast          bool     `json:"open_cast,omitempty"`
	Error             string   `json:"error,omitempty"`
	Requested         string   `json:"requested,omitempty"`
	// MemoryDir and OutputDir are the workflow's memory_dir and output_dir,
	// unexpanded ({output_folder} stays for the caller).
	MemoryDir string `json:"memory_dir,omitempty"`
	OutputDir string `json:"output_dir,omitempty"`
	// Memlog is the room's memory log (its workspace is MemoryDir/Active),
	// when memory is on; MemlogExists says whether it exists yet, and
	// MemoryLog holds its latest part.
	Memlog       string `json:"memlog_workspace,omitempty"`
	MemlogExists bool   `json:"memlog_exists,omitempty"`
	MemoryLog    string `json:"memory_log,omitempty"`
	// Takeaways and Keepsake are where the wrap-up saves the takeaways
	// and the HTML keepsake (save_output): project documents, uploaded to
	// the conversation.
	Takeaways string `json:"takeaways_path,omitempty"`
	Keepsake  string `json:"keepsake_path,omitempty"`
	// Notes say what the runtime changed (a mode that fell back).
	Notes []string `json:"notes,omitempty"`
	// Pool is every persona the party can draw on (the installed agents
	// and the custom members, by code), for the runtime: walk-ons and
	// summoned members are shown under their own names. The model is not
	// sent it.
	Pool []Member `json:"-"`
}

// InlineRoom is the id of a cast the user named ("party with Winston and
// Mary"): it is the roster for the session and has no memory.
const InlineRoom = "inline"

// Request is what the user asked for: --party ID (alias --group),
// --list-groups, --mode MODE (--subagents means subagent), and an inline
// cast by name (With), which wins over any group.
type Request struct {
	Party      string
	ListGroups bool
	Mode       string
	With       []string
}

// Resolve returns the roster for req in the project at projectRoot, for the
// party skill in skillDir. The installed agents come from the merged
// central config; when it cannot be read, InstalledResolved is false and
// the rest still resolves. The workflow table is the skill's merged
// customization; when an override is invalid, the skill's own
// customize.toml is used and a note says so. An error means not even the
// skill's customize.toml can be read.
func Resolve(projectRoot, skillDir string, req Request) (*Roster, error) {
	wf, notes, err := workflow(projectRoot, skillDir)
	if err != nil {
		return nil, err
	}
	r := &Roster{
		Mode:         str(wf["party_mode"], ModeSession),
		DefaultParty: str(wf["default_party"], ""),
		Groups:       menu(wf["party_groups"]),
		MemoryDir:    str(wf["memory_dir"], ""),
		OutputDir:    str(wf["output_dir"], ""),
		Notes:        notes,
	}
	if err := r.applyMode(req.Mode); err != nil {
		return nil, err
	}
	if req.ListGroups {
		return r, nil
	}
	agents, ok := installedAgents(projectRoot)
	r.InstalledResolved = ok
	p := newPool(agents, wf["party_members"])
	r.Pool = p.all()
	groups := list(wf["party_groups"])
	if len(req.With) > 0 {
		raw := make([]any, len(req.With))
		for i, n := range req.With {
			raw[i] = n
		}
		r.Active = InlineRoom
		r.Members, r.Unresolved = p.resolve(raw)
		return r, nil
	}
	if req.Party != "" {
		g := findGroup(groups, req.Party)
		if g == nil {
			r.Error, r.Requested = "unknown_group", req.Party
			return r, nil
		}
		r.useGroup(g, p)
		return r, nil
	}
	if g := findGroup(groups, r.DefaultParty); r.DefaultParty != "" && g != nil {
		r.useGroup(g, p)
		return r, nil
	}
	r.Active = InstalledRoom
	for _, c := range p.installed {
		r.Members = append(r.Members, p.members[c])
	}
	r.Memory = truthy(wf["party_memory"], true)
	return r, nil
}

// applyMode sets the mode a request names over the configured one; an
// unknown mode is an error naming the modes.
func (r *Roster) applyMode(mode string) error {
	if mode != "" {
		switch mode {
		case ModeSession, ModeAuto, ModeSubagent, ModeAgentTeam:
			r.Mode = mode
		default:
			return fmt.Errorf("party mode %q is not one of session, auto, subagent, agent-team", mode)
		}
	}
	if r.Mode == ModeAgentTeam {
		r.Mode = ModeSession
		r.Notes = append(r.Notes, "agent-team needs Claude Code's agent teams; this party runs in session mode")
	}
	return nil
}

// useGroup makes g the active room: its members resolved in listed order,
// its scene, memory flag and open cast.
func (r *Roster) useGroup(g map[string]any, p *pool) {
	id := str(g["id"], "")
	r.Active, r.Name = id, str(g["name"], id)
	raw := list(g["members"])
	r.Members, r.Unresolved = p.resolve(raw)
	r.Memory = truthy(g["memory"], false)
	r.Scene = str(g["scene"], "")
	r.OpenCast = len(raw) == 0
}

// Find returns the member of the roster a name, code or short alias names
// (case-insensitive), or false.
func (r *Roster) Find(name string) (Member, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, m := range r.Members {
		if strings.ToLower(m.Name) == n || strings.ToLower(m.Code) == n || strings.ToLower(alias(m.Code)) == n {
			return m, true
		}
	}
	return Member{}, false
}

// workflow returns the skill's merged [workflow] table, or the base
// customize.toml's with a note when an override cannot be used.
func workflow(projectRoot, skillDir string) (map[string]any, []string, error) {
	merged, err := custom.Skill(projectRoot, skillDir)
	if err == nil {
		wf, _ := merged["workflow"].(map[string]any)
		return wf, nil, nil
	}
	basePath := filepath.Join(skillDir, "customize.toml")
	if _, serr := os.Stat(basePath); errors.Is(serr, fs.ErrNotExist) {
		// Releases up to 6.2 ship the skill without a customize.toml: no
		// saved rooms, and the installed agents make the room.
		return nil, nil, nil
	}
	base, berr := custom.LoadFile(basePath, true)
	if berr != nil {
		// Named by its file alone: the model never sees a host path.
		msg := berr.Error()
		if ce, ok := berr.(*custom.Error); ok {
			msg = ce.Msg
		}
		return nil, nil, fmt.Errorf("party roster: %s: %s", filepath.Base(basePath), msg)
	}
	wf, _ := base["workflow"].(map[string]any)
	return wf, []string{"the party's customization overrides cannot be used (" + filepath.Base(errPath(err)) + "); the skill's defaults apply"}, nil
}

// errPath is the file a customization error names.
func errPath(err error) string {
	if ce, ok := err.(*custom.Error); ok {
		return ce.Path
	}
	return err.Error()
}

// installedAgent is one [agents.<code>] table of the central config.
type installedAgent struct {
	code  string
	table map[string]any
}

// installedAgents returns the central config's agents sorted by code, and
// false when the central config cannot be read.
func installedAgents(projectRoot string) ([]installedAgent, bool) {
	if projectRoot == "" {
		return nil, false
	}
	central, err := custom.Central(projectRoot)
	if err != nil {
		return nil, false
	}
	agents, _ := central["agents"].(map[string]any)
	out := make([]installedAgent, 0, len(agents))
	for code, v := range agents {
		t, _ := v.(map[string]any)
		out = append(out, installedAgent{code: code, table: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].code < out[j].code })
	return out, true
}

// menu is the groups menu: id, name, size, open cast; entries without an id
// are skipped.
func menu(v any) []GroupEntry {
	out := []GroupEntry{}
	for _, g := range list(v) {
		t, ok := g.(map[string]any)
		if !ok || str(t["id"], "") == "" {
			continue
		}
		id := str(t["id"], "")
		n := len(list(t["members"]))
		out = append(out, GroupEntry{ID: id, Name: str(t["name"], id), MemberCount: n, OpenCast: n == 0})
	}
	return out
}

// findGroup returns the group with id, or nil.
func findGroup(groups []any, id string) map[string]any {
	for _, g := range groups {
		if t, ok := g.(map[string]any); ok && id != "" && str(t["id"], "") == id {
			return t
		}
	}
	return nil
}

// list is v as an array, or nil.
func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// str is v as a non-empty string, or def.
func str(v any, def string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}

// truthy is Python's bool(v) for a TOML value, def when v is absent.
func truthy(v any, def bool) bool {
	switch x := v.(type) {
	case nil:
		return def
	case bool:
		return x
	case string:
		return x != ""
	case int64:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

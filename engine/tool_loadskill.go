package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"agentbot/engine/catalog"
	"agentbot/engine/custom"
	"agentbot/engine/memlog"
	"agentbot/engine/party"
	"agentbot/engine/project"
	"agentbot/engine/prompt"
	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
	"agentbot/engine/vars"
)

// ToolLoadSkill is the name of the tool that loads a skill.
const ToolLoadSkill = "load_skill"

type loadSkillArgs struct {
	Name string `json:"name"`
}

// Limits of what the runtime loads into a skill's context.
const (
	maxActivationFile = 64 << 10  // one file a skill's On Activation names
	maxActivationAll  = 128 << 10 // all of them together
	maxSkillFiles     = 200       // names in a skill's file list
)

// loadSkillTool loads any known skill in one call, the way the menu
// shortcut preloads it.
var loadSkillTool = define(Tool{
	Name:        ToolLoadSkill,
	Description: "Load a skill by name: SKILL.md with placeholders resolved, its customization and config resolved, its files. It becomes the active skill: bare paths resolve in its folder.",
	Schema:      `{"type":"object","properties":{"name":{"type":"string","description":"The skill's name, e.g. bmad-help"}},"required":["name"],"additionalProperties":false}`,
	Rule:        "To run a skill (\"invoke X\", skill:X, a menu item), call load_skill first; never run one from memory.",
	Offered:     func(o Offer) bool { return o.Skills },
	Summary: summarize(func(r SkillResult, size int) string {
		return fmt.Sprintf("skill %s loaded (%d bytes)", r.Skill, size)
	}),
}, `{"name": "bmad-help"}`,
	func(a loadSkillArgs) string { return "loading skill " + a.Name },
	func(ctx context.Context, env *toolEnv, a loadSkillArgs) (ToolResult, error) {
		if a.Name == "" {
			return nil, errors.New(`load_skill needs the skill's name, e.g. {"name": "bmad-help"}`)
		}
		l := &skillLoad{cat: env.e.catalog(), s: env.s, sb: env.sb, mu: &env.mu, docs: env.docs, servers: servers(env.ext.list)}
		res, err := l.loadSkill(ctx, a.Name)
		if sr, ok := res.(SkillResult); ok && sr.Party != nil && env.emit != nil {
			env.emit(Event{Kind: EventParty, Party: sr.Party})
		}
		return res, err
	})

// SkillResult is load_skill's answer: everything a skill needs to run, as
// the menu shortcut preloads it.
type SkillResult struct {
	Skill string `json:"skill"`
	Kind  string `json:"kind"`
	// Root is the skill's folder; bare paths resolve there.
	Root string `json:"skill_root"`
	Note string `json:"note"`
	// AliasOf is set when the name asked for is an old name of this skill.
	AliasOf string `json:"loaded_for,omitempty"`
	// Limitation says what the skill needs that this runtime lacks.
	Limitation string `json:"limitation,omitempty"`
	// SkillMD is SKILL.md with its placeholders resolved; BoundByYou lists
	// the run-time names left for the model ({doc_workspace}, ...).
	SkillMD    string   `json:"skill_md"`
	BoundByYou []string `json:"bound_by_you,omitempty"`
	// Customization is the resolved customize.toml table, as JSON.
	Customization json.RawMessage   `json:"customization,omitempty"`
	Config        map[string]string `json:"config,omitempty"`
	Files         []string          `json:"files"`
	// Activation are the files the skill's activation names, and the file
	// a launcher skill's one instruction links, resolved like SKILL.md.
	Activation []FileContent `json:"activation_files,omitempty"`
	// Scripts is set for a skill that ships scripts, which cannot run here.
	Scripts string `json:"scripts,omitempty"`
	// MCP says, for each MCP server the skill requires, whether this agent
	// has it.
	MCP []catalog.MCPNeed `json:"requires_mcp,omitempty"`
	// Project is the state of the session's project: its documents with
	// versions and authors, matched to the help tables' outputs patterns.
	Project string        `json:"project_documents,omitempty"`
	Facts   []FileContent `json:"facts,omitempty"`
	// Party is party mode's roster, resolved by the runtime in place of
	// resolve_party.py, for the options the skill was invoked with.
	Party *party.Roster `json:"party_roster,omitempty"`
	Notes []string      `json:"notes,omitempty"`
}

// Failure is "" for a skill that loaded.
func (SkillResult) Failure() string { return "" }

// activationPath finds the files a skill's On Activation section names:
// {skill-root}/…, {project-root}/… and bare relative paths with an
// extension.
var activationPath = regexp.MustCompile("(?:\\{(?:skill-root|project-root)\\}/|\\./|\\b)((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\\.(?:md|xml|yaml|yml|csv|json|txt|html))")

// activationFiles lists the file paths the "On Activation" section of a
// SKILL.md names, as written, skipping scripts and the customization and
// config files the runtime resolves itself.
func activationFiles(body string) []string {
	sec := section(body, "On Activation")
	if sec == "" {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range activationPath.FindAllStringSubmatchIndex(sec, -1) {
		full := sec[m[0]:m[1]]
		if !activationRef(full, m[0] > 0 && sec[m[0]-1] == '`') {
			continue
		}
		if !seen[full] {
			seen[full] = true
			out = append(out, full)
		}
	}
	return out
}

// resolvedFiles are the files an activation names that the runtime
// resolves itself (customization, config, the skill file, the memlog).
var resolvedFiles = map[string]bool{
	"customize.toml": true, "config.yaml": true, "config.user.yaml": true, "SKILL.md": true, ".memlog.md": true,
}

// activationRef reports whether a path an On Activation section names
// (full, as written; quoted when a backtick precedes it) is a file for the
// model: not a script or a file the runtime resolves, a path ("a/b.md") or
// a bare name standing alone in backticks rather than inside a longer
// token, and rooted, if at all, at {skill-root} or {project-root}.
func activationRef(full string, quoted bool) bool {
	base := path.Base(full)
	if strings.HasSuffix(base, ".py") || resolvedFiles[base] {
		return false
	}
	if !strings.Contains(full, "/") && !quoted {
		return false
	}
	return !strings.Contains(full, "{") || strings.HasPrefix(full, "{skill-root}") || strings.HasPrefix(full, "{project-root}")
}

// section returns the body of the "## name" section of a markdown text.
func section(body, name string) string {
	lines := strings.Split(body, "\n")
	var b strings.Builder
	in := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "## ") {
			if in {
				break
			}
			in = strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(t, "## ")), name)
			continue
		}
		if in {
			b.WriteString(l)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// skillLoad is one load_skill call: the catalog it finds the skill in,
// the session it makes the skill active in (under the turn's lock mu),
// and what the session has this turn: its sandbox, its project's
// documents (nil outside a project) and its MCP servers.
type skillLoad struct {
	cat     *catalog.Catalog
	s       *Session
	sb      *sandbox.Sandbox
	mu      *sync.Mutex
	docs    *project.Docs
	servers []string
}

// loadSkill resolves a skill for the model: its customization merged, its
// placeholders resolved in Go, its config, its file list and the files its
// activation names. It makes the skill the session's active one.
func (l *skillLoad) loadSkill(ctx context.Context, name string) (ToolResult, error) {
	sk, aliasOf, err := l.findSkill(name)
	if err != nil {
		return nil, err
	}
	res := SkillResult{AliasOf: aliasOf}
	if aliasOf != "" && !l.isShim(aliasOf) {
		res.Notes = append(res.Notes, fmt.Sprintf("%s is not installed; %s, the installed skill of the same base name, is loaded in its place", aliasOf, sk.Name))
	}
	res.Skill, res.Kind, res.Root = sk.Name, string(sk.Kind), sk.Virtual
	if sk.Needs != "" {
		res.Limitation = fmt.Sprintf("This skill needs %s, which this chat runtime lacks. Tell the user, ask them to paste the material it would read (diffs, files, command output), and do only what that material allows.", sk.Needs)
	}
	body, err := sk.Body()
	if err != nil {
		return nil, fmt.Errorf("skill %s: SKILL.md cannot be read", sk.Name)
	}

	v := vars.Vars{}
	for k, val := range l.s.Vars {
		v[k] = val
	}
	v["skill-root"], v["skill-name"] = sk.Virtual, sk.Name
	if sk.Kind == catalog.SkillAgent || sk.Kind == catalog.SkillWorkflow {
		if err := l.customize(sk, v, &res); err != nil {
			return nil, err
		}
	}
	md, unknown := vars.ExpandPartial(body, v)
	res.SkillMD = strings.TrimSpace(md)
	res.BoundByYou = unknown

	res.Config = map[string]string{}
	if h := l.s.AgentDef.Home; h != nil {
		for k := range h.Config {
			res.Config[k] = l.s.Vars[k]
		}
	}
	res.Config["date"] = l.s.Vars["date"]
	res.Files = sk.Files(maxSkillFiles)
	l.activateSkill(sk, v)

	l.preloadFiles(&res, body, v)
	if err := l.runtimeFacts(ctx, &res, sk, name, v); err != nil {
		return nil, err
	}
	res.Note = "Loaded by the runtime: customization and config are resolved below, so skip those steps. Keep your persona."
	return res, nil
}

// runtimeFacts adds to res what the runtime knows about the skill beyond
// its files: that its scripts cannot run, the MCP servers it needs, party
// mode's roster, and the state of the project's documents.
func (l *skillLoad) runtimeFacts(ctx context.Context, res *SkillResult, sk *catalog.Skill, name string, v vars.Vars) error {
	if sk.Scripts {
		res.Scripts = catalog.ScriptsNote
	}
	res.MCP = sk.MCPNeeds(l.servers)
	if sk.Name == party.SkillName {
		if err := partyRoster(res, sk, name, v); err != nil {
			return err
		}
		l.partyMemory(res.Party)
		l.mu.Lock()
		if l.s.Skill != nil && l.s.Skill.Name == sk.Name {
			l.s.Skill.Vars[partyModeVar], l.s.Skill.Vars[partySceneVar] = res.Party.Mode, res.Party.Scene
		}
		l.mu.Unlock()
	}
	if d := l.docs; d != nil {
		res.Project = d.State(ctx, sk)
	}
	return nil
}

// findSkill finds the skill a load_skill call names ("NAME", "skill:NAME",
// "skill:NAME args"), following an alias to its target, whose name it
// returns as aliasOf. A missing skill is an error that lists the skills.
func (l *skillLoad) findSkill(name string) (sk *catalog.Skill, aliasOf string, err error) {
	name = strings.TrimSpace(strings.TrimPrefix(name, "skill:"))
	if i := strings.IndexAny(name, " \t"); i > 0 {
		name = name[:i] // "skill:NAME args" forwards args in the conversation
	}
	cat := l.cat
	sk, variant, ok := cat.LookupSkill(l.s.AgentDef, name)
	if variant {
		return sk, name, nil // an older or -preview name of an installed skill
	}
	if !ok {
		var names []string
		for _, s := range cat.SkillsFor(l.s.AgentDef) {
			names = append(names, s.Name)
		}
		if len(names) == 0 {
			return nil, "", fmt.Errorf("no skill %q: this agent has no skills", name)
		}
		return nil, "", fmt.Errorf("no skill %q; the skills are %s", name, strings.Join(names, ", "))
	}
	if sk.Kind == catalog.SkillAlias && sk.AliasOf != "" {
		if target, ok := cat.FindSkill(l.s.AgentDef, sk.AliasOf); ok {
			return target, sk.Name, nil
		}
	}
	return sk, "", nil
}

// isShim reports whether name is an installed alias (a shim) rather than
// a name no skill has.
func (l *skillLoad) isShim(name string) bool {
	sk, ok := l.cat.FindSkill(l.s.AgentDef, name)
	return ok && sk.Kind == catalog.SkillAlias
}

// customize merges an agent or workflow skill's customization (team and
// personal overrides) into v and res: its fields as variables, the table
// resolved, and its persistent facts loaded.
func (l *skillLoad) customize(sk *catalog.Skill, v vars.Vars, res *SkillResult) error {
	merged, err := custom.Skill(sk.Project, sk.Dir)
	if err != nil {
		return fmt.Errorf("skill %s cannot start: %s", sk.Name, catalog.RelReason(sk.Project, err))
	}
	key := string(sk.Kind)
	table, _ := merged[key].(map[string]any)
	fields := map[string]string{}
	custom.Flatten(key, table, fields)
	for k, val := range fields {
		v[k] = val
	}
	if b, err := json.Marshal(expandTable(table, v)); err == nil {
		res.Customization = b
	}
	loaded, plain, factSkills, notes := prompt.LoadFacts(l.sb, custom.Strings(table["persistent_facts"]))
	res.Facts = loaded
	res.Notes = append(res.Notes, notes...)
	for _, p := range plain {
		res.Notes = append(res.Notes, "persistent fact: "+p)
	}
	for _, s := range factSkills {
		res.Notes = append(res.Notes, "persistent fact: consult the skill "+s)
	}
	return nil
}

// activateSkill makes sk the session's active skill: bare paths resolve in
// its folder, with its workflow.* variables.
func (l *skillLoad) activateSkill(sk *catalog.Skill, v vars.Vars) {
	active := &transcript.ActiveSkill{Name: sk.Name, Root: sk.Virtual, Vars: map[string]string{"skill-root": sk.Virtual, "skill-name": sk.Name}}
	for k, val := range v {
		if strings.HasPrefix(k, "workflow.") {
			active.Vars[k] = val
		}
	}
	l.mu.Lock()
	l.s.Skill = active
	l.mu.Unlock()
	l.sb.SetBase(active.Root, active.Vars)
}

// preloadFiles adds to res the file a launcher skill links and the files
// the activation names (of SKILL.md and of that linked file), each
// resolved like SKILL.md; the run-time names they leave join BoundByYou.
func (l *skillLoad) preloadFiles(res *SkillResult, body string, v vars.Vars) {
	budget := maxActivationAll
	seen := map[string]bool{}
	bound := map[string]bool{}
	for _, n := range res.BoundByYou {
		bound[n] = true
	}
	paths := activationFiles(body)
	launcher := launcherFile(body)
	if launcher != "" {
		paths = append([]string{launcher}, paths...)
	}
	for i := 0; i < len(paths); i++ {
		data, virtual, err := l.sb.ReadFile(paths[i])
		switch {
		case err != nil || seen[virtual]:
			continue // a path named for later, or for another mode
		case len(data) > maxActivationFile || len(data) > budget:
			res.Notes = append(res.Notes, fmt.Sprintf("%s (%s) is not included; read it when a step needs it", virtual, sandbox.SizeText(int64(len(data)))))
			continue
		}
		seen[virtual] = true
		budget -= len(data)
		text, unknown := vars.ExpandPartial(string(data), v)
		for _, n := range unknown {
			if !bound[n] {
				bound[n] = true
				res.BoundByYou = append(res.BoundByYou, n)
			}
		}
		res.Activation = append(res.Activation, FileContent{Path: virtual, Content: text})
		if i == 0 && launcher != "" {
			paths = append(paths, activationFiles(string(data))...)
		}
	}
}

// launcherLink finds the file a launcher's instruction names: a markdown
// link, a path in backticks, or a bare ./path ("Follow the instructions in
// ./workflow.md.", as 6.1 to 6.3 write them).
var launcherLink = regexp.MustCompile("\\]\\(([^)\\s]+)\\)|`((?:\\{skill-root\\}/|\\./)?[A-Za-z0-9_./-]+\\.(?:md|xml|ya?ml))`|(?:^|\\s)(\\./[A-Za-z0-9_/-][A-Za-z0-9_./-]*\\.(?:md|xml|ya?ml))")

// launcherFile returns the file a launcher skill's one instruction names
// ("Follow the instructions in [workflow.md](workflow.md)."), or "" when
// SKILL.md is more than a few lines of instruction.
func launcherFile(body string) string {
	t := strings.TrimSpace(body)
	if len(t) > 600 || strings.Count(t, "\n") > 6 {
		return ""
	}
	m := launcherLink.FindStringSubmatch(t)
	if m == nil {
		return ""
	}
	p := m[1] + m[2] + m[3]
	if strings.Contains(p, "://") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "#") {
		return ""
	}
	return p
}

// servers are the MCP servers of tools, each once.
func servers(tools []ExternalTool) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range tools {
		if t.Server != "" && !seen[t.Server] {
			seen[t.Server] = true
			out = append(out, t.Server)
		}
	}
	return out
}

// expandTable returns a copy of a customization value with the variables
// of its strings resolved; unknown names stay for the model.
func expandTable(val any, v vars.Vars) any {
	switch x := val.(type) {
	case string:
		out, _ := vars.ExpandPartial(x, v)
		return out
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			out[i] = expandTable(it, v)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, it := range x {
			out[k] = expandTable(it, v)
		}
		return out
	}
	return val
}

// partyRoster resolves party mode's roster for the options the load_skill
// name carries ("bmad-party-mode --party writers-room --mode subagent",
// "bmad-party-mode with Winston and Mary")
// into res, with its folders' variables resolved.
func partyRoster(res *SkillResult, sk *catalog.Skill, name string, v vars.Vars) error {
	_, args, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "skill:")), " ")
	c, _, err := party.ParseCommand("party " + args)
	if err != nil {
		return fmt.Errorf("skill %s: %w", sk.Name, err)
	}
	r, err := party.Resolve(sk.Project, sk.Dir, c.Request)
	if err != nil {
		return fmt.Errorf("skill %s: %w", sk.Name, err)
	}
	r.MemoryDir, _ = vars.ExpandPartial(r.MemoryDir, v)
	r.OutputDir, _ = vars.ExpandPartial(r.OutputDir, v)
	if r.OutputDir != "" && !strings.Contains(r.OutputDir, "{") && r.Active != "" {
		stem := path.Join(r.OutputDir, v["date"]+"-"+r.Active)
		r.Takeaways, r.Keepsake = stem+"-takeaways.md", stem+"-keepsake.html"
	}
	res.Party = r
	res.Notes = append(res.Notes, "party_roster is resolve_party.py's answer, resolved by the runtime: skip running it. Write every turn as {icon} **{name}:** on its own line. Several people may be in the room: a message led by [Name] is from that person; talk to them by name.",
		"Memory: when memory_enabled, memory_log is the room's memory so far (read for you; play it in character) and the memlog tool writes to memlog_workspace (init first when memlog_exists is false). At wrap-up, save the takeaways to takeaways_path and the keepsake to keepsake_path with save_output: both are shared with the people in the conversation.")
	return nil
}

// maxPartyMemory is how much of a party's memory log its load carries,
// from the end.
const maxPartyMemory = 8 << 10

// partyMemory puts into r, when the room has memory, its memory log's
// workspace and latest part (the log is a project document in a project,
// so the next party of the channel remembers): read here in place of the
// skill's reader step.
func (l *skillLoad) partyMemory(r *party.Roster) {
	if r == nil || !r.Memory || r.Active == "" || r.Active == party.InlineRoom || r.MemoryDir == "" || strings.Contains(r.MemoryDir, "{") {
		return
	}
	r.Memlog = path.Join(r.MemoryDir, r.Active)
	data, _, err := l.sb.ReadFile(path.Join(r.Memlog, memlog.FileName))
	if err != nil {
		return
	}
	r.MemlogExists = true
	log := string(data)
	if len(log) > maxPartyMemory {
		log = "…" + log[len(log)-maxPartyMemory:]
	}
	r.MemoryLog = log
}

package engine

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/prompt"
	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
	"agentbot/engine/vars"
)

// Greeting is what a session shows first; it costs no model call (see
// prompt.Greeting).
type Greeting = prompt.Greeting

// FileContent is one file handed to the model: virtual path and content.
type FileContent = prompt.FileContent

// criticalPath finds file paths an activation step tells the agent to load:
// a {variable}-rooted path ending in a file extension.
var criticalPath = regexp.MustCompile(`\{[A-Za-z0-9_.-]+\}(?:/[A-Za-z0-9_.@+-]+)+\.(?:ya?ml|md|xml|csv|json|txt)`)

// Activate prepares s to talk with agent a: it fixes the date and the
// variables (values the caller put in s.Vars, such as user_name, override
// the agent's config), loads the config files the agent's activation names, and writes
// the system prompt and greeting into the transcript. It makes no model
// call. A missing config file the activation loads stops activation with an
// error naming it.
func (e *Engine) Activate(ctx context.Context, s *Session, a *catalog.Agent) (*Greeting, error) {
	if a == nil {
		return nil, fmt.Errorf("activate session %s: no agent", s.ID)
	}
	e.bindAgent(s, a)
	preset := s.Vars // the caller's own values, such as the user's name
	if a.Format == catalog.FormatSkill {
		return e.activateSkill(ctx, s, a, preset)
	}
	v := pathVars(a)
	v["date"] = s.Date
	s.Vars = v

	sb, err := e.openSandbox(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("activate %s: %w", a.ID, err)
	}
	defer sb.Close()

	// Config the home declares, then every config file activation names.
	if a.Home != nil && len(a.Home.Config) > 0 {
		mergeConfig(v, a.Home.Config)
	}
	missing, err := loadCriticalFiles(a, sb, v)
	if err != nil {
		return nil, err
	}
	if a.Home != nil {
		mapOutputs(v, a.Home.OutputFolder)
	}
	hideHostPaths(v, sb)
	mergePreset(v, preset)
	s.Vars = v

	g := prompt.Greet(a, v)
	s.Messages = append(s.Messages[:0],
		transcript.Message{Role: transcript.RoleSystem, Content: prompt.WithHandoff(s.Handoff, prompt.System(a, v, e.catalog().SkillsFor(a), toolRules(e.toolsFor(s))))},
		transcript.Message{Role: transcript.RoleUser, Content: prompt.SessionFacts(v, missing)},
		transcript.Message{Role: transcript.RoleAssistant, Content: g.Text},
	)
	if err := e.save(ctx, s); err != nil {
		return nil, fmt.Errorf("activate %s: save session: %w", a.ID, err)
	}
	return g, nil
}

// bindAgent makes a the agent of s, and fixes the session's date and
// creation time when they are not set yet.
func (e *Engine) bindAgent(s *Session, a *catalog.Agent) {
	s.AgentDef = a
	s.AgentID = a.ID
	if s.Date == "" {
		s.Date = e.cfg.Now().Format("2006-01-02")
	}
	if s.Created.IsZero() {
		s.Created = e.cfg.Now()
	}
}

// loadCriticalFiles merges into v the config files the agent's activation
// loads and returns the other files it names that sb lacks. The config
// files are critical: without them the variables are wrong, so a missing
// or invalid one stops the agent with an error naming it. Other files are
// loaded by the model through tools; a missing one is only noted.
func loadCriticalFiles(a *catalog.Agent, sb *sandbox.Sandbox, v vars.Vars) ([]string, error) {
	var missing []string
	for _, p := range criticalFiles(a) {
		isConfig := strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")
		if !isConfig {
			if !sb.Exists(p) {
				missing = append(missing, p)
			}
			continue
		}
		data, virtual, err := sb.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("agent %s cannot start: its activation loads %s: %v", a.ID, p, err)
		}
		cfg, err := vars.ParseConfig(data)
		if err != nil {
			return nil, fmt.Errorf("agent %s cannot start: config %s: %w", a.ID, virtual, err)
		}
		mergeConfig(v, cfg)
	}
	return missing, nil
}

// mergePreset sets in v the values the caller put in the session before
// activation (such as user_name), over the agent's config; empty values and
// pinned variables stay as they are.
func mergePreset(v vars.Vars, preset map[string]string) {
	for k, val := range preset {
		if !vars.IsPinned(k) && val != "" {
			v[k] = val
		}
	}
}

// Greet returns the greeting of a session that is already active.
func (e *Engine) Greet(s *Session) *Greeting {
	if s.AgentDef == nil {
		return &Greeting{}
	}
	if s.AgentDef.Format == catalog.FormatSkill {
		return prompt.GreetSkill(s.AgentDef, s.Vars)
	}
	return prompt.Greet(s.AgentDef, s.Vars)
}

// pathVars returns the variables naming the sandbox's virtual folders.
func pathVars(a *catalog.Agent) vars.Vars {
	v := vars.Vars{
		"project-root":  sandbox.ProjectDir,
		"bundle-root":   sandbox.ProjectDir,
		"core-root":     sandbox.CoreDir,
		"output_folder": sandbox.OutputDir,
		"input_folder":  sandbox.InputDir,
	}
	if h := a.Home; h != nil && h.BundleRoot != "" && h.ProjectRoot != "" {
		if rel, err := filepath.Rel(h.ProjectRoot, h.BundleRoot); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			v["bundle-root"] = path.Join(sandbox.ProjectDir, filepath.ToSlash(rel))
		}
	}
	return v
}

// mergeConfig adds config keys to v. Path variables and output_folder stay
// the sandbox's; values are expanded against what is known so far.
func mergeConfig(v vars.Vars, cfg map[string]string) {
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if vars.IsPinned(k) {
			continue
		}
		val, _ := vars.ExpandPartial(cfg[k], v)
		v[k] = val
	}
}

// criticalFiles lists the files the agent's activation steps say to load.
func criticalFiles(a *catalog.Agent) []string {
	var out []string
	seen := map[string]bool{}
	for _, step := range a.Activation {
		for _, m := range criticalPath.FindAllString(step, -1) {
			if !seen[m] && looksLikeLoad(step) {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// looksLikeLoad reports whether an activation step asks to load a file, as
// opposed to mentioning one for later.
func looksLikeLoad(step string) bool {
	s := strings.ToLower(step)
	return strings.Contains(s, "load") || strings.Contains(s, "read")
}

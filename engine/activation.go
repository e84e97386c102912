package engine

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"agentbot/engine/transcript"

	"agentbot/engine/catalog"
	"agentbot/engine/sandbox"
	"agentbot/engine/vars"
)

// Greeting is what a session shows first; it costs no model call.
type Greeting struct {
	// Intro is the greeting without the menu.
	Intro string
	// Text is the intro followed by the numbered menu.
	Text string
	// Menu is the menu shown: all of it, or the first greetItems items of
	// a menu as long as a collection of skills, with More the others.
	Menu []catalog.MenuItem
	More int
}

// Greeting limits: an agent's own menu is shown whole up to maxGreetItems
// items (the Slack front end splits a long one over messages and gives the
// first 100 items buttons); a longer one, such as a collection of skills,
// shows its first greetItems items and a count, so its greeting stays far
// within a message's limits.
const (
	maxGreetItems = 200
	greetItems    = 20
)

// greetMenu returns the items a greeting shows and how many it leaves out.
func greetMenu(menu []catalog.MenuItem) ([]catalog.MenuItem, int) {
	if len(menu) <= maxGreetItems {
		return menu, 0
	}
	return menu[:greetItems], len(menu) - greetItems
}

// MoreLine is the line that tells people how to reach the menu items the
// greeting leaves out, "" when it shows them all.
func (g *Greeting) MoreLine() string {
	if g == nil || g.More == 0 {
		return ""
	}
	return moreText(g.More)
}

// moreText tells people how to reach the menu items a greeting leaves out.
func moreText(more int) string {
	return fmt.Sprintf("…and %d more. Type a number, a name, or just say what you need and I'll find the right one.", more)
}

// criticalPath finds file paths an activation step tells the agent to load:
// a {variable}-rooted path ending in a file extension.
var criticalPath = regexp.MustCompile(`\{[A-Za-z0-9_.-]+\}(?:/[A-Za-z0-9_.@+-]+)+\.(?:ya?ml|md|xml|csv|json|txt)`)

// Activate prepares s to talk with agent a: it fixes the date and the
// variables (values the caller put in s.Vars, such as user_name, override
// the agent's config), loads the config files the agent's activation names, and writes
// the system prompt and greeting into the transcript. It makes no model
// call. A missing config file the activation loads stops activation with an
// error naming it.
func (e *Engine) Activate(s *Session, a *catalog.Agent) (*Greeting, error) {
	if a == nil {
		return nil, fmt.Errorf("activate session %s: no agent", s.ID)
	}
	e.bindAgent(s, a)
	preset := s.Vars // the caller's own values, such as the user's name
	if a.Format == catalog.FormatSkill {
		return e.activateSkill(s, a, preset)
	}
	v := pathVars(a)
	v["date"] = s.Date
	s.Vars = v

	sb, err := e.openSandbox(s)
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
	hideHostPaths(v, sb)
	mergePreset(v, preset)
	s.Vars = v

	g := greeting(a, v)
	s.Messages = append(s.Messages[:0],
		transcript.Message{Role: transcript.RoleSystem, Content: withHandoff(s, systemPrompt(a, v, e.catalog().SkillsFor(a), e.toolsFor(s)))},
		transcript.Message{Role: transcript.RoleUser, Content: sessionFacts(v, missing)},
		transcript.Message{Role: transcript.RoleAssistant, Content: g.Text},
	)
	if err := e.save(s); err != nil {
		return nil, fmt.Errorf("activate %s: save session: %w", a.ID, err)
	}
	return g, nil
}

// bindAgent makes a the agent of s, and fixes the session's date and
// creation time when they are not set yet.
func (e *Engine) bindAgent(s *Session, a *catalog.Agent) {
	s.Agent = a
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
	if s.Agent == nil {
		return &Greeting{}
	}
	if s.Agent.Format == catalog.FormatSkill {
		return skillGreeting(s.Agent, s.Vars)
	}
	return greeting(s.Agent, s.Vars)
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

// sessionFacts is the first user-role message: facts fixed for the session,
// and files the activation names that this install lacks.
func sessionFacts(v vars.Vars, missing []string) string {
	var b strings.Builder
	b.WriteString("[session start] Today's date for this session is ")
	b.WriteString(v["date"])
	b.WriteString(". The agent's configuration is already loaded (see the variables in the system prompt); greet me and show the menu.")
	for _, m := range missing {
		fmt.Fprintf(&b, " Note: %s, named in your activation, does not exist here; carry on without it and tell me if that matters.", m)
	}
	return b.String()
}

// greeting builds the agent's greeting and numbered menu.
func greeting(a *catalog.Agent, v vars.Vars) *Greeting {
	intro := strings.TrimSpace(a.Greeting)
	if intro != "" {
		intro, _ = vars.ExpandPartial(intro, v)
	} else {
		name := v["user_name"]
		hello := "Hello"
		if name != "" {
			hello += " " + name
		}
		who := a.Name
		if a.Icon != "" {
			who = a.Icon + " " + who
		}
		intro = fmt.Sprintf("%s! I'm %s", hello, who)
		if a.Title != "" && a.Title != a.Name {
			intro += ", your " + a.Title
		}
		intro += ". Here is what I can do:"
	}
	var b strings.Builder
	b.WriteString(intro)
	b.WriteString("\n")
	shown, more := greetMenu(a.Menu)
	for i, it := range shown {
		fmt.Fprintf(&b, "\n%d. %s", i+1, menuLabel(it))
	}
	if more > 0 {
		fmt.Fprintf(&b, "\n\n%s", moreText(more))
	}
	if len(a.Menu) > 0 {
		b.WriteString("\n\nPick a number, type a command, or just tell me what you need.")
	}
	return &Greeting{Intro: intro, Text: b.String(), Menu: shown, More: more}
}

// menuLabel renders a menu item as "*cmd — description", "[CP] *cmd —
// description", or "PRD — description" for a skill-format item.
func menuLabel(it catalog.MenuItem) string {
	cmd := "*" + it.Trigger
	if it.Trigger == "" {
		cmd = it.Cmd
	}
	if it.Code != "" && it.Code != cmd {
		cmd = "[" + it.Code + "] " + cmd
	}
	if it.Description == "" {
		return cmd
	}
	return cmd + " — " + it.Description
}

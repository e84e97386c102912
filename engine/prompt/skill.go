package prompt

import (
	"fmt"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/sandbox"
	"agentbot/engine/vars"
)

// maxFactBytes caps the persistent facts loaded from files, all together.
const maxFactBytes = 64 << 10

// runtimeLimits says plainly what a chat runtime lacks, for skill agents.
const runtimeLimits = `## This runtime
A chat, not a coding tool: no shell, uv, python, git, web search or subagents.
- Customization and config are already resolved and given to you: skip resolve_customization.py / resolve_config.py steps and config loads.
- memlog.py lines are the memlog tool.
- Subagent work: do it inline, one piece at a time.
- Other scripts' checks: do them by judgment from the data file the script reads, and tell the user the check was done by hand.
- Web research, a repository or a shell: say plainly you lack it and ask the user to paste the material; never pretend.`

// SkillSessionFacts is the first user-role message of a skill agent's
// session: the date, and the activation steps the runtime cannot run
// itself, handed to the first model call.
func SkillSessionFacts(a *catalog.Agent, v vars.Vars) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[session start] Today's date for this session is %s. Your activation is done; you greeted me and showed the menu.", v["date"])
	steps := func(title string, list []string) {
		if len(list) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s:", title)
		for i, st := range list {
			out, _ := vars.ExpandPartial(st, v)
			fmt.Fprintf(&b, "\n%d. %s", i+1, out)
		}
	}
	if len(a.Prepend)+len(a.Append) > 0 {
		b.WriteString("\nBefore your first answer, carry out these customized activation steps, in order, and confirm each was done:")
		steps("Before the persona (activation_steps_prepend)", a.Prepend)
		steps("After the greeting (activation_steps_append)", a.Append)
	}
	return b.String()
}

// isRuntimeVar reports whether a variable is shown in the prompt's list of
// variables: customization fields are shown in their own sections.
func isRuntimeVar(name string) bool {
	return !strings.HasPrefix(name, "agent.") && !strings.HasPrefix(name, "workflow.")
}

// LoadFacts loads persistent facts: "file:" entries are paths or globs
// (under {project-root}) whose contents become facts, "skill:" entries name
// skills to consult, and other entries are facts verbatim. Files are loaded
// up to maxFactBytes in all; what does not fit is named, not loaded.
func LoadFacts(sb *sandbox.Sandbox, facts []string) (loaded []FileContent, plain, skills, notes []string) {
	budget := maxFactBytes
	for _, f := range facts {
		switch {
		case strings.HasPrefix(f, "file:"):
			pattern := strings.TrimSpace(strings.TrimPrefix(f, "file:"))
			names, err := sb.Glob(pattern)
			if err != nil && len(names) == 0 {
				notes = append(notes, fmt.Sprintf("fact file %s: %v", pattern, err))
				continue
			}
			if len(names) == 0 {
				notes = append(notes, fmt.Sprintf("fact file %s: no file matches", pattern))
			}
			for _, n := range names {
				if strings.HasSuffix(n, "/") {
					continue
				}
				data, virtual, err := sb.ReadFile(n)
				switch {
				case err != nil:
					notes = append(notes, fmt.Sprintf("fact file %s: %v", n, err))
				case len(data) > budget:
					notes = append(notes, fmt.Sprintf("fact file %s (%s) was not loaded: the facts' size cap is reached; read it with read_file when it matters", virtual, sandbox.SizeText(int64(len(data)))))
				default:
					budget -= len(data)
					loaded = append(loaded, FileContent{Path: virtual, Content: string(data)})
				}
			}
		case strings.HasPrefix(f, "skill:"):
			skills = append(skills, strings.TrimSpace(strings.TrimPrefix(f, "skill:")))
		default:
			plain = append(plain, f)
		}
	}
	return loaded, plain, skills, notes
}

// Skill renders the byte-stable system prompt of a skill-format
// agent: its skill file with placeholders resolved, its facts, its menu,
// the skills it may load, what the runtime lacks, the tool rules and the
// variables.
func Skill(a *catalog.Agent, v vars.Vars, sb *sandbox.Sandbox, skills []*catalog.Skill, rules []string) string {
	x := expander(v)
	var b strings.Builder
	writeIdentity(&b, a)
	if a.SkillName != "" {
		b.WriteString(" The runtime did your activation up to the greeting (customization resolved below, facts and config loaded, greeting and menu shown): continue from the dispatch, and follow your skill file's standing instructions.")
	}
	b.WriteString("\n")
	if a.Instructions != "" {
		name := a.SkillName
		if name == "" {
			name = a.ID
		}
		fmt.Fprintf(&b, "\n## Your skill file (%s)\n%s\n", name, x(a.Instructions))
	}
	loaded, plain, factSkills, notes := LoadFacts(sb, a.Facts)
	if len(loaded)+len(plain)+len(factSkills)+len(notes) > 0 {
		b.WriteString("\n## Persistent facts\n")
		for _, f := range plain {
			fmt.Fprintf(&b, "- %s\n", oneBlock(x(f)))
		}
		for _, s := range factSkills {
			fmt.Fprintf(&b, "- Consult the skill %s (load_skill) when it is relevant.\n", s)
		}
		for _, n := range notes {
			fmt.Fprintf(&b, "- (%s)\n", n)
		}
		for _, f := range loaded {
			fmt.Fprintf(&b, "\n### %s\n%s\n", f.Path, strings.TrimSpace(f.Content))
		}
	}
	if len(a.Menu) > 0 && !strings.Contains(a.Instructions, "{agent.menu}") {
		// A skill file that renders {agent.menu} has the menu already.
		writeMenu(&b, a.Menu)
	}
	writeSkills(&b, skills, a.SkillName)
	b.WriteString("\n")
	b.WriteString(runtimeLimits)
	b.WriteString("\n\n")
	b.WriteString(toolRules(rules))
	writeVariables(&b, v)
	return b.String()
}

// writeMenu writes a skill agent's menu, up to skillListBudget; a menu as
// long as a collection ends with how many items are not listed.
func writeMenu(b *strings.Builder, menu []catalog.MenuItem) {
	b.WriteString("\n## Menu (by number, code, skill or description)\n")
	n := 0
	for i, it := range menu {
		line := fmt.Sprintf("%d. %s", i+1, MenuLabel(it))
		if it.Skill != "" {
			line += " → skill " + it.Skill
		} else if it.Prompt != "" {
			line += " → runs its prompt"
		}
		line += "\n"
		if n+len(line) > skillListBudget {
			fmt.Fprintf(b, "- … and %d more items (%d in all): each starts the skill of its name; find_skills finds them.\n", len(menu)-i, len(menu))
			return
		}
		n += len(line)
		b.WriteString(line)
	}
}

// GreetSkill is a skill agent's greeting: its icon first, the user's
// name, who it is, the mention of bmad-help, then the numbered menu.
func GreetSkill(a *catalog.Agent, v vars.Vars) *Greeting {
	var b strings.Builder
	if a.Icon != "" {
		b.WriteString(a.Icon + " ")
	}
	b.WriteString("Hello")
	if n := v["user_name"]; n != "" {
		b.WriteString(" " + n)
	}
	fmt.Fprintf(&b, "! I'm %s", a.Name)
	if a.Title != "" && a.Title != a.Name {
		b.WriteString(", your " + a.Title)
	}
	b.WriteString(".")
	if a.Module != "" || strings.HasPrefix(a.SkillName, "bmad-") {
		b.WriteString(" You can invoke the `bmad-help` skill at any time for advice on what to do next.")
	}
	if len(a.Menu) > 0 {
		b.WriteString(" Here is what I can do:")
	}
	intro := b.String()
	shown, more := greetMenu(a.Menu)
	b.WriteString("\n")
	for i, it := range shown {
		fmt.Fprintf(&b, "\n%d. %s", i+1, MenuLabel(it))
	}
	if more > 0 {
		fmt.Fprintf(&b, "\n\n%s", moreText(more))
	}
	if len(a.Menu) > 0 {
		b.WriteString("\n\nPick a number or a code, or just tell me what you need.")
	}
	return &Greeting{Intro: intro, Text: b.String(), Menu: shown, More: more}
}

// skillListBudget is how many bytes of a system prompt list skills (and a
// menu as long as a collection); past it, find_skills finds the others.
const skillListBudget = 4 << 10

// listedSkills are the skills a prompt lists: those an agent may load but
// itself and the agents.
func listedSkills(skills []*catalog.Skill, self string) []*catalog.Skill {
	out := make([]*catalog.Skill, 0, len(skills))
	for _, s := range skills {
		if s.Name != self && s.Kind != catalog.SkillAgent {
			out = append(out, s)
		}
	}
	return out
}

// skillLine is one skill's line in a prompt: its name, a one-line
// description, and what it needs that the runtime lacks.
func skillLine(s *catalog.Skill) string {
	line := fmt.Sprintf("- %s: %s", s.Name, catalog.OneLine(s.Description, 72))
	switch {
	case s.AliasOf != "":
		line += fmt.Sprintf(" (old name of %s)", s.AliasOf)
	case s.Needs != "":
		line += fmt.Sprintf(" (needs %s: not here; ask for pasted material)", s.Needs)
	}
	return line + "\n"
}

// SkillsOverBudget reports whether the skill list of an agent does not fit
// skillListBudget, so find_skills is offered.
func SkillsOverBudget(skills []*catalog.Skill) bool {
	n := 0
	for _, s := range skills {
		if s.Kind == catalog.SkillAgent {
			continue
		}
		if n += len(skillLine(s)); n > skillListBudget {
			return true
		}
	}
	return false
}

// writeSkills lists the skills an agent may load, up to skillListBudget;
// past it, the prompt says how many more there are and that find_skills
// searches them all.
func writeSkills(b *strings.Builder, skills []*catalog.Skill, self string) {
	list := listedSkills(skills, self)
	if len(list) == 0 {
		return
	}
	b.WriteString("\n## Skills you can load (load_skill; a skill you start keeps your persona)\n")
	n := 0
	for i, s := range list {
		line := skillLine(s)
		if n+len(line) > skillListBudget {
			fmt.Fprintf(b, "- … and %d more skills, not listed here: call find_skills with a few words of what the user wants to find them by name and description.\n", len(list)-i)
			return
		}
		n += len(line)
		b.WriteString(line)
	}
}

package engine

import (
	"context"
	"errors"
	"fmt"
)

// ToolLoadSkill is the name of the tool that loads a skill.
const ToolLoadSkill = "load_skill"

type loadSkillArgs struct {
	Name string `json:"name"`
}

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
	func(_ context.Context, env *toolEnv, a loadSkillArgs) (ToolResult, error) {
		if a.Name == "" {
			return nil, errors.New(`load_skill needs the skill's name, e.g. {"name": "bmad-help"}`)
		}
		l := &skillLoad{cat: env.e.catalog(), s: env.s, sb: env.sb, mu: &env.mu, docs: env.docs, servers: servers(env.extList)}
		return l.loadSkill(a.Name)
	})

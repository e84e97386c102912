package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/menu"
)

// ToolFindSkills is the name of the tool that searches an agent's skills.
const ToolFindSkills = "find_skills"

// maxSkillHits is how many skills one find_skills answer names.
const maxSkillHits = 20

type findSkillsArgs struct {
	Query string `json:"query"`
}

// SkillHit is one skill find_skills found.
type SkillHit struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Needs       string `json:"needs,omitempty"`
}

// FindSkillsResult is find_skills' answer: the best matches first.
type FindSkillsResult struct {
	Query  string     `json:"query"`
	Skills []SkillHit `json:"skills"`
	// More is how many other skills matched.
	More int    `json:"more,omitempty"`
	Note string `json:"note"`
}

// Failure is "" for a search that ran.
func (FindSkillsResult) Failure() string { return "" }

// findSkillsTool searches the skills of an agent whose list is longer
// than the system prompt shows.
var findSkillsTool = define(Tool{
	Name:        ToolFindSkills,
	Description: "Search every skill you can load by name and description; the system prompt lists only some of them. Returns the best matches, then load one with load_skill.",
	Schema:      `{"type":"object","properties":{"query":{"type":"string","description":"A few words of what the user wants, e.g. release notes"}},"required":["query"],"additionalProperties":false}`,
	Rule:        "Your skills are more than the prompt lists: when none listed fits a request, call find_skills with a few words before saying no skill fits.",
	Offered:     func(o Offer) bool { return o.ManySkills },
	Summary: summarize(func(r FindSkillsResult, size int) string {
		return fmt.Sprintf("%d skill(s) found for %q", len(r.Skills)+r.More, r.Query)
	}),
}, `{"query": "release notes"}`,
	func(a findSkillsArgs) string { return "searching skills for " + a.Query },
	func(_ context.Context, env *toolEnv, a findSkillsArgs) (ToolResult, error) {
		if strings.TrimSpace(a.Query) == "" {
			return nil, errors.New(`find_skills needs a query, e.g. {"query": "release notes"}`)
		}
		return findSkills(env.e.catalog().SkillsFor(env.s.AgentDef), a.Query), nil
	})

// findSkills ranks skills by the words of query: a word in the name counts
// three, in the description one; the best matches come first, then by name.
func findSkills(skills []*catalog.Skill, query string) FindSkillsResult {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127)
	})
	type scored struct {
		s     *catalog.Skill
		score int
	}
	var hits []scored
	for _, s := range skills {
		if s.Kind == catalog.SkillAgent {
			continue
		}
		if score := skillScore(s, words); score > 0 {
			hits = append(hits, scored{s, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].s.Name < hits[j].s.Name
	})
	res := FindSkillsResult{Query: query, Skills: []SkillHit{}}
	for i, h := range hits {
		if i == maxSkillHits {
			res.More = len(hits) - i
			break
		}
		res.Skills = append(res.Skills, SkillHit{Name: h.s.Name, Description: catalog.OneLine(h.s.Description, 200), Needs: h.s.Needs})
	}
	switch {
	case len(res.Skills) == 0:
		res.Note = "No skill matches these words; try other words, or go on without a skill."
	case res.More > 0:
		res.Note = "The best matches; narrow the words to see others. Load one with load_skill."
	default:
		res.Note = "Load one with load_skill."
	}
	return res
}

// skillScore scores a skill for the words of a query: three for each word
// in its name, one for each in its description.
func skillScore(s *catalog.Skill, words []string) int {
	name, desc := strings.ToLower(s.Name), strings.ToLower(s.Description)
	score := 0
	for _, w := range words {
		if len(w) < 2 {
			continue
		}
		if strings.Contains(name, w) {
			score += 3
		}
		if strings.Contains(desc, menu.Stem(w)) {
			score++
		}
	}
	return score
}

package engine

import (
	"context"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/party"
	"agentbot/engine/transcript"
)

// partyCalls returns the load_skill call that starts party mode for a
// message that asks for it ("party", "party with Winston and Mary about
// X", "party --party code-review-crew --mode subagent"), when the agent
// has the party skill: the roster and mode then reach the model in its
// first request. Nil for any other message.
func partyCalls(cat *catalog.Catalog, s *Session, input string) []transcript.ToolCall {
	if _, ok, _ := party.ParseCommand(input); !ok {
		return nil
	}
	if _, _, found := cat.LookupSkill(s.AgentDef, party.SkillName); !found {
		return nil
	}
	words := strings.Fields(input)
	name := strings.TrimSpace(party.SkillName + " " + strings.Join(words[1:], " "))
	return []transcript.ToolCall{newCall(ToolLoadSkill, loadSkillArgs{Name: name})}
}

// PartyPool returns the personas party mode draws on in session s's
// project: the installed agents and the custom party members, for showing
// each turn under its persona's name and title. Nil when the agent has no
// party skill or its customization cannot be read.
func (e *Engine) PartyPool(s *Session) []party.Member {
	r, err := e.Party(s.AgentDef, party.Request{})
	if err != nil || r == nil {
		return nil
	}
	return r.Pool
}

// Party resolves party mode's roster for agent a's project as req asks
// (with ListGroups: the saved groups). Nil, nil when a has no party skill.
func (e *Engine) Party(a *catalog.Agent, req party.Request) (*party.Roster, error) {
	sk, _, found := e.catalog().LookupSkill(a, party.SkillName)
	if !found {
		return nil, nil
	}
	return party.Resolve(sk.Project, sk.Dir, req)
}

// roomMessage is a person's message as a party hears it: led by their
// name ("[Anna] what about CSV?"), since anyone in the conversation may
// talk to the room. Outside a party, or when the person's name is not
// known, the message is as written.
func roomMessage(ctx context.Context, s *Session, msg string) string {
	if s.Skill == nil || s.Skill.Name != party.SkillName {
		return msg
	}
	name := strings.TrimSpace(s.nameOf(ctx, s.Person))
	if name == "" {
		return msg
	}
	return "[" + name + "] " + msg
}

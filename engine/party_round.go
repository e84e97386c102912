package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"agentbot/engine/catalog"
	"agentbot/engine/llm"
	"agentbot/engine/party"
	"agentbot/engine/transcript"
)

// Session-skill variables party mode keeps for its rounds.
const (
	partyModeVar  = "party-mode"
	partySceneVar = "party-scene"
)

// Limits of a persona's sub-turn.
const (
	// subTurnSteps bounds a sub-turn's model calls (the last one without
	// tools).
	subTurnSteps = 3
	// maxConversation is how much of the conversation so far a sub-turn
	// is given, from its end.
	maxConversation = 24 << 10
)

// subTurnTools are the tools a persona's sub-turn may use: read-only ones.
var subTurnTools = []Tool{listFilesTool, readFileTool}

// round is one party_round call: its personas' voices and what they are
// given.
type round struct {
	env    *toolEnv
	prompt string
	convo  string
	scene  string
	voices []party.Voice
}

// cast takes the personas the round can draw on and the room's scene.
func (r *round) cast(voices []party.Voice) {
	r.voices = voices
	r.env.mu.Lock()
	if sk := r.env.s.Skill; sk != nil {
		r.scene = sk.Vars[partySceneVar]
	}
	r.env.mu.Unlock()
}

// voice finds the persona a name, code or short alias names.
func (r *round) voice(name string) (party.Voice, bool) {
	ms := make([]party.Member, len(r.voices))
	for i, v := range r.voices {
		ms[i] = v.Member
	}
	m, ok := (&party.Roster{Members: ms}).Find(name)
	if !ok {
		return party.Voice{}, false
	}
	for _, v := range r.voices {
		if v.Code == m.Code {
			return v, true
		}
	}
	return party.Voice{}, false
}

// run runs every persona's sub-turn at once and returns their turns in the
// order asked. A stop (ctx) ends every sub-turn.
func (r *round) run(ctx context.Context, names []string) RoundResult {
	turns := make([]VoiceTurn, len(names))
	n := r.env.e.cfg.PartyParallelism
	if n <= 0 {
		n = len(names)
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, name := range names {
		v, ok := r.voice(name)
		if !ok {
			turns[i] = VoiceTurn{Name: name, Error: "not a persona of this party's pool: voice them yourself"}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			turns[i] = r.subTurn(ctx, v)
		}()
	}
	wg.Wait()
	return RoundResult{Turns: turns, Note: "Each persona thought on its own. Give each answer as that persona's turn, word for word, as {icon} **{name}:** then what they said; add staging between turns if you like, never soften or merge what they argued. Voice yourself any persona with an error."}
}

// subTurn runs one persona's bounded sub-turn: its own persona prompt, the
// conversation so far and the round's prompt, with read-only tools. Its
// usage counts against the turn's budget.
func (r *round) subTurn(ctx context.Context, v party.Voice) VoiceTurn {
	t := VoiceTurn{Name: v.Name, Icon: v.Icon}
	msgs := []transcript.Message{
		{Role: transcript.RoleSystem, Content: v.Prompt(r.scene)},
		{Role: transcript.RoleUser, Content: "## The conversation so far\n" + r.convo + "\n\n## The room is on\n" + r.prompt},
	}
	for step := 0; step < subTurnSteps; step++ {
		req := llm.Request{Messages: msgs}
		if step < subTurnSteps-1 {
			req.Tools = definitions(subTurnTools)
		}
		resp, err := r.env.e.cfg.Model.Complete(ctx, req, nil)
		if err != nil {
			t.Error = "could not answer: " + err.Error()
			return t
		}
		r.env.addSubUsage(resp.Usage)
		msg := resp.Message
		msg.Role = transcript.RoleAssistant
		if len(msg.ToolCalls) == 0 {
			t.Said = strings.TrimSpace(msg.Content)
			if t.Said == "" {
				t.Error = "said nothing"
			}
			return t
		}
		msgs = append(msgs, msg)
		for _, tc := range msg.ToolCalls {
			msgs = append(msgs, transcript.Message{Role: transcript.RoleTool, ToolCallID: tc.ID, Content: encodeResult(r.readOnly(ctx, tc))})
		}
	}
	t.Error = "ran out of steps"
	return t
}

// readOnly runs a sub-turn's tool call: only the read-only tools.
func (r *round) readOnly(ctx context.Context, tc transcript.ToolCall) ToolResult {
	for _, t := range subTurnTools {
		if t.Name == tc.Function.Name {
			args := strings.TrimSpace(tc.Function.Arguments)
			if args == "" {
				args = "{}"
			}
			return t.Run(ctx, r.env, args)
		}
	}
	return errResult("only %s and %s can be used here", ToolListFiles, ToolReadFile)
}

// addSubUsage adds the usage of a model call a tool made (a party's
// sub-turn, a server's sampling).
func (env *toolEnv) addSubUsage(u Usage) {
	u.Calls = 1
	env.subMu.Lock()
	env.sub = env.sub.Add(u)
	env.subMu.Unlock()
}

// takeSubUsage returns and clears the usage of the model calls tools
// made.
func (env *toolEnv) takeSubUsage() Usage {
	env.subMu.Lock()
	defer env.subMu.Unlock()
	u := env.sub
	env.sub = Usage{}
	return u
}

// conversationSoFar is the conversation's words, people's and the
// agent's, without tool traffic, up to maxConversation from its end.
func conversationSoFar(s *Session) string {
	var b strings.Builder
	for _, m := range s.Messages {
		if m.Content == "" || len(m.ToolCalls) > 0 && strings.TrimSpace(m.Content) == "" {
			continue
		}
		switch m.Role {
		case transcript.RoleUser:
			if strings.HasPrefix(m.Content, "(Runtime") {
				continue
			}
			fmt.Fprintf(&b, "User: %s\n\n", m.Content)
		case transcript.RoleAssistant:
			fmt.Fprintf(&b, "Room: %s\n\n", m.Content)
		}
	}
	out := b.String()
	if len(out) > maxConversation {
		out = "…" + out[len(out)-maxConversation:]
	}
	return strings.TrimSpace(out)
}

// partyVoices are the personas of s's party pool with their definitions:
// an installed agent's persona from its agent definition, a custom
// member's from its customization.
func (e *Engine) partyVoices(s *Session) []party.Voice {
	pool := e.PartyPool(s)
	out := make([]party.Voice, 0, len(pool))
	for _, m := range pool {
		v := party.Voice{Member: m}
		if a := e.projectAgent(s, m.Code); a != nil {
			p := a.Persona
			v.Role, v.Identity, v.Style, v.Principles = p.Role, p.Identity, p.CommunicationStyle, p.Principles
		}
		out = append(out, v)
	}
	return out
}

// projectAgent is the agent of s's project whose skill is named code, or
// nil.
func (e *Engine) projectAgent(s *Session, code string) *catalog.Agent {
	if s.AgentDef == nil || s.AgentDef.Home == nil {
		return nil
	}
	for _, a := range e.catalog().Agents {
		if a.SkillName == code && a.Home != nil && a.Home.ProjectRoot == s.AgentDef.Home.ProjectRoot {
			return a
		}
	}
	return nil
}

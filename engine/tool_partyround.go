package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"agentbot/engine/party"
)

// ToolPartyRound is the name of the tool that has personas think for
// themselves in a party.
const ToolPartyRound = "party_round"

// maxRoundVoices bounds the personas of one round.
const maxRoundVoices = 8

type partyRoundArgs struct {
	Personas []string `json:"personas"`
	Prompt   string   `json:"prompt"`
}

// RoundResult is party_round's answer: what each persona said, in the
// order asked, for the orchestrator to place in the conversation as
// written.
type RoundResult struct {
	Turns []VoiceTurn `json:"turns"`
	Note  string      `json:"note"`
}

// VoiceTurn is one persona's turn of a round; Error is set when the
// persona could not answer (the orchestrator voices them itself).
type VoiceTurn struct {
	Name  string `json:"name"`
	Icon  string `json:"icon,omitempty"`
	Said  string `json:"said,omitempty"`
	Error string `json:"error,omitempty"`
}

// Failure is "" for a round that ran, even when a persona failed.
func (RoundResult) Failure() string { return "" }

// partyRoundTool runs one bounded sub-turn per persona, in parallel (see
// partyRound).
var partyRoundTool = define(Tool{
	Name:        ToolPartyRound,
	Description: "Party mode (subagent and auto modes): have each named persona think for itself. Each runs as its own agent with its own persona, the conversation so far and read-only file tools, all at once, and returns what it would say. Put each answer in the conversation as that persona's turn, word for word ({icon} **{name}:** said); you may add staging around them, never change what they argued.",
	Schema:      `{"type":"object","properties":{"personas":{"type":"array","items":{"type":"string"},"description":"The personas' names (or codes), as in party_roster"},"prompt":{"type":"string","description":"What the room is on now: the question or moment each persona answers"}},"required":["personas","prompt"],"additionalProperties":false}`,
	Rule:        "In party mode's subagent mode, call party_round for every substantive round; in auto mode when independent thinking changes the outcome; never in session mode.",
	Offered:     func(o Offer) bool { return o.Party },
	Summary: summarize(func(r RoundResult, size int) string {
		return fmt.Sprintf("a round of %d personas (%d bytes)", len(r.Turns), size)
	}),
}, `{"personas": ["Mary", "Winston"], "prompt": "Should we build exports first?"}`,
	func(a partyRoundArgs) string { return "the room thinks: " + strings.Join(a.Personas, ", ") },
	func(ctx context.Context, env *toolEnv, a partyRoundArgs) (ToolResult, error) {
		return partyRound(ctx, env, a)
	})

// partyRound checks a round's arguments, the session's party mode and the
// budget, then runs the personas' sub-turns.
func partyRound(ctx context.Context, env *toolEnv, a partyRoundArgs) (ToolResult, error) {
	if len(a.Personas) == 0 || strings.TrimSpace(a.Prompt) == "" {
		return nil, errors.New(`party_round needs personas and a prompt, e.g. {"personas": ["Mary", "Winston"], "prompt": "..."}`)
	}
	if len(a.Personas) > maxRoundVoices {
		return nil, fmt.Errorf("party_round takes at most %d personas at once; voice the others yourself or run another round", maxRoundVoices)
	}
	env.mu.Lock()
	mode := ""
	if sk := env.s.Skill; sk != nil {
		mode = sk.Vars[partyModeVar]
	}
	env.mu.Unlock()
	if mode == party.ModeSession {
		return nil, errors.New("this party runs in session mode: voice every persona yourself")
	}
	if b := env.e.budget(ctx, env.s, env.turnUsage); b.Near() {
		return nil, fmt.Errorf("the %s is nearly used up (%d of %d tokens): voice the personas yourself this round", b.Name, b.Used, b.Limit)
	}
	r := &round{env: env, prompt: a.Prompt, convo: conversationSoFar(env.s)}
	r.cast(env.e.partyVoices(env.s))
	return r.run(ctx, a.Personas), nil
}

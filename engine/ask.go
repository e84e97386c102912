package engine

import (
	"context"
	"encoding/json"
	"errors"
)

// Question is what a tool asks, in the middle of one of its calls, of the
// person the call acts for (an MCP server's elicitation): a message and a
// form, a JSON object schema whose properties are strings, numbers,
// integers, booleans or enums, each perhaps with a default.
type Question struct {
	// Source names who asks (the MCP server's name).
	Source string
	// Message is what is asked, in the asker's words.
	Message string
	// Schema is the form's JSON object schema.
	Schema json.RawMessage
}

// The actions of an Answer.
const (
	AnswerAccept  = "accept"  // the person filled in the form: Values holds it
	AnswerDecline = "decline" // the person said no
	AnswerCancel  = "cancel"  // the person dismissed it without choosing
)

// Answer is the person's answer to a Question.
type Answer struct {
	// Action is AnswerAccept, AnswerDecline or AnswerCancel.
	Action string
	// Values are the form's values by property name, with AnswerAccept.
	Values map[string]any
}

// ErrNobodyToAsk is the error of a question where nobody can answer (no
// Config.Ask, or a session without a person).
var ErrNobodyToAsk = errors.New("there is nobody to ask")

// asker is the Ask of one call of tool t in a turn of s: the question goes
// to Config.Ask for the turn's person, and the call's status says it
// waits for them.
func (env *toolEnv) asker(tool, callID string) func(ctx context.Context, q Question) (Answer, error) {
	return func(ctx context.Context, q Question) (Answer, error) {
		if env.e.cfg.Ask == nil || env.s.Person == "" {
			return Answer{}, ErrNobodyToAsk
		}
		if env.emit != nil {
			env.emit(Event{Kind: EventToolStart, Tool: tool, CallID: callID, Status: "waiting for your answer to " + q.Source})
		}
		return env.e.cfg.Ask(ctx, env.s, q)
	}
}

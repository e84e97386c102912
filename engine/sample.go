package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"
)

// Sampling is a tool's request, in the middle of one of its calls, for an
// answer from the agent's model (an MCP server's sampling/createMessage).
// It runs only once the person the call acts for allows it.
type Sampling struct {
	// Source names who asks (the MCP server's name).
	Source string
	// System is the system prompt the tool asks for ("" for none).
	System string
	// Messages are the conversation to answer, oldest first.
	Messages []SamplingMessage
}

// SamplingMessage is one message of a Sampling: its role ("user" or
// "assistant") and text.
type SamplingMessage struct {
	Role, Text string
}

// SamplingReply is the model's answer to a Sampling.
type SamplingReply struct {
	// Text is the answer, cut to the engine's read cap.
	Text string
}

// ErrSamplingRefused is the error of a Sampling the person did not allow,
// or that a token cap stops.
var ErrSamplingRefused = errors.New("the request to use the agent's model was refused")

// allowSchema is the form of the question that asks the person to allow a
// Sampling: no field, Send allows it.
const allowSchema = `{"type":"object","properties":{}}`

// sampler is the Sample of one call in a turn of s: the person is asked
// first (Config.Ask); the model then answers without tools, and its tokens
// count in the turn's usage and against the session's caps, as the model
// calls of every tool do (addSubUsage).
func (env *toolEnv) sampler(tool, callID string) func(ctx context.Context, req Sampling) (SamplingReply, error) {
	ask := env.asker(tool, callID)
	return func(ctx context.Context, req Sampling) (SamplingReply, error) {
		if len(req.Messages) == 0 {
			return SamplingReply{}, fmt.Errorf("%w: no messages to answer", ErrSamplingRefused)
		}
		a, err := ask(ctx, Question{Source: req.Source, Message: samplingQuestion(req), Schema: json.RawMessage(allowSchema)})
		if err != nil {
			return SamplingReply{}, err
		}
		if a.Action != AnswerAccept {
			return SamplingReply{}, fmt.Errorf("%w: the person said no", ErrSamplingRefused)
		}
		if b := env.e.budget(ctx, env.s, env.turnUsage); b.Over() {
			return SamplingReply{}, fmt.Errorf("%w: %s is reached", ErrSamplingRefused, b.Name)
		}
		msgs := make([]transcript.Message, 0, len(req.Messages)+1)
		if req.System != "" {
			msgs = append(msgs, transcript.Message{Role: transcript.RoleSystem, Content: req.System})
		}
		for _, m := range req.Messages {
			role := transcript.RoleUser
			if m.Role == "assistant" {
				role = transcript.RoleAssistant
			}
			msgs = append(msgs, transcript.Message{Role: role, Content: m.Text})
		}
		resp, err := env.e.cfg.Model.Complete(ctx, llm.Request{Messages: msgs}, nil)
		if err != nil {
			return SamplingReply{}, fmt.Errorf("the agent's model: %w", err)
		}
		env.addSubUsage(resp.Usage) // counted in the turn after the calls, as a party's sub-turns
		return SamplingReply{Text: CutUTF8(resp.Message.Content, int(env.e.cfg.MaxRead))}, nil
	}
}

// samplingQuestion is what the person is asked about a Sampling: who asks,
// and the start of what the model would answer.
func samplingQuestion(req Sampling) string {
	last := req.Messages[len(req.Messages)-1].Text
	return fmt.Sprintf("%s asks to use this agent's model to answer %d message(s), the last: “%s”. Send allows it, Decline refuses it.",
		req.Source, len(req.Messages), strings.TrimSpace(CutUTF8(last, 300)))
}

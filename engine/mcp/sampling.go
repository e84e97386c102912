package mcp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
)

// Sampling (sampling/createMessage, deprecated by the 2026-07-28 protocol
// but still served): a server asks, in the middle of a call, for an
// answer from the agent's model. Like a request for input, it goes to the
// call's person, who allows it or not (engine.ExternalCall.Sample); the
// model answers without tools, and its tokens count in the turn. Text
// messages only: a server that sends images or audio is told no.

// sampleKey is the context key of the engine's Sample of a call.
type sampleKey struct{}

// withSample gives the call of ctx the engine's Sample.
func withSample(ctx context.Context, sample func(context.Context, engine.Sampling) (engine.SamplingReply, error)) context.Context {
	if sample == nil {
		return ctx
	}
	return context.WithValue(ctx, sampleKey{}, sample)
}

// sampleOf is the Sample withSample gave ctx's call; nil when none.
func sampleOf(ctx context.Context) func(context.Context, engine.Sampling) (engine.SamplingReply, error) {
	s, _ := ctx.Value(sampleKey{}).(func(context.Context, engine.Sampling) (engine.SamplingReply, error))
	return s
}

// samplingHandler is the go-sdk's sampling handler of the link: the
// request goes to the Sample of the link's latest call under way. nil
// unless Options.AskPeople: then the client declares no sampling.
func (l *link) samplingHandler() func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	c := l.c
	if !c.m.opts.AskPeople {
		return nil
	}
	return func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
		sample := l.sampler()
		if sample == nil {
			return nil, errors.New("no call of this session can ask its person to allow it")
		}
		p := req.Params
		s := engine.Sampling{Source: c.srv.Name, System: p.SystemPrompt}
		for _, m := range p.Messages {
			t, ok := m.Content.(*sdk.TextContent)
			if !ok {
				return nil, fmt.Errorf("sampling from %s: only text messages are answered", c.srv.Name)
			}
			s.Messages = append(s.Messages, engine.SamplingMessage{Role: string(m.Role), Text: t.Text})
		}
		l.asking.Add(1) // the call's timeout waits for the person, and the model
		defer l.asking.Add(-1)
		c.m.log.Info("mcp server asks for the agent's model", "server", c.srv.Name, "messages", len(s.Messages))
		r, err := sample(ctx, s)
		if err != nil {
			c.m.log.Info("mcp server's sampling refused", "server", c.srv.Name, "error", c.redact(err.Error()))
			return nil, fmt.Errorf("sampling from %s: %w", c.srv.Name, err)
		}
		return &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: r.Text}, Model: "agentbot", Role: "assistant", StopReason: "endTurn"}, nil
	}
}

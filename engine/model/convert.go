package model

import (
	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"
)

// This file is the only place that converts between agentbot's transcript
// types and go-openai's.

// toOpenAIMessages converts transcript messages to go-openai's.
func toOpenAIMessages(msgs []transcript.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		out[i] = openai.ChatCompletionMessage{
			Role:       m.Role,
			Content:    m.Content,
			Refusal:    m.Refusal,
			ToolCallID: m.ToolCallID,
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]openai.ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				calls[j] = openai.ToolCall{
					ID:       tc.ID,
					Type:     openai.ToolType(tc.Type),
					Function: openai.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments},
				}
			}
			out[i].ToolCalls = calls
		}
	}
	return out
}

// fromOpenAIMessage converts a go-openai message to a transcript message.
func fromOpenAIMessage(m openai.ChatCompletionMessage) transcript.Message {
	out := transcript.Message{
		Role:       m.Role,
		Content:    m.Content,
		Refusal:    m.Refusal,
		ToolCallID: m.ToolCallID,
	}
	if len(m.ToolCalls) > 0 {
		out.ToolCalls = make([]transcript.ToolCall, len(m.ToolCalls))
		for j, tc := range m.ToolCalls {
			out.ToolCalls[j] = transcript.ToolCall{
				ID:       tc.ID,
				Type:     string(tc.Type),
				Function: transcript.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments},
			}
		}
	}
	return out
}

// toOpenAITools converts tool definitions to go-openai's.
func toOpenAITools(tools []llm.Tool) []openai.Tool {
	if len(tools) == 0 {
		return nil
	}
	out := make([]openai.Tool, len(tools))
	for i, t := range tools {
		out[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}}
	}
	return out
}

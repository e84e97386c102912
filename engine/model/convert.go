package model

import (
	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
)

// This file converts agentbot's tool definitions to go-openai's; messages
// go out in the adapter's own wire form (chatwire.go), which carries the
// reasoning fields go-openai's messages lack.

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

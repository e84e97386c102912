package fakemodel

// Setup is how a user of a provider sets agentbot up, for tests that run
// one scenario against every provider mode.
type Setup struct {
	Name     string
	Provider Provider
	// Model is a model name of that provider; it tells agentbot's adapter
	// which reasoning rules apply (DeepSeek's, Gemini's).
	Model string
	// Azure: the client is configured for Azure (RootURL, api-type azure).
	Azure bool
	// Kept is what every later request of a session must still carry of
	// the reasoning state of the session's first reply with tool calls
	// (request 1), in the mode's wire form; "" for modes without any.
	Kept string
}

// Setups are the provider modes, each as its users set it up.
var Setups = []Setup{
	{Name: "openai", Provider: OpenAI, Model: "gpt-4.1"},
	{Name: "deepseek", Provider: DeepSeek, Model: "deepseek-v4-flash", Kept: `"reasoning_content":"The user asked something; request 1 needs a careful answer."`},
	{Name: "openrouter", Provider: OpenRouter, Model: "google/gemini-3-pro-preview", Kept: `"data":"or-sig-1"`},
	{Name: "gemini", Provider: Gemini, Model: "gemini-3-flash-preview", Kept: `"thought_signature":"gemini-sig-1"`},
	{Name: "mistral", Provider: Mistral, Model: "mistral-medium-latest"},
	{Name: "azure", Provider: Azure, Model: "gpt-5-prod", Azure: true},
}

// ReasoningMarker is a piece of every reasoning text the server makes up,
// for tests that check it never reaches people.
const ReasoningMarker = "needs a careful answer"

// ScenarioReplies script the four answers of the every-provider scenario:
// two parallel tool calls, a streamed question, an answer to the second
// turn, an answer to the third.
func ScenarioReplies() []Reply {
	return []Reply{
		{ToolCalls: []ToolCall{
			{Name: "read_file", Arguments: `{"path":"/outputs/a.md"}`},
			{Name: "read_file", Arguments: `{"path":"/outputs/b.md"}`},
		}},
		{Text: "Who is the reorder button for?", Chunks: 5},
		{Text: "Returning shoppers, noted."},
		{Text: "Third turn answered."},
	}
}

package model

import "testing"

// auto picks Responses for OpenAI's and Azure's reasoning families only.
func TestAutoPick(t *testing.T) {
	for _, tc := range []struct {
		apiType, baseURL, model, family, want string
	}{
		{"", "", "gpt-5.6-terra", "", APIResponses},
		{"", "https://api.openai.com/v1", "o3", "", APIResponses},
		{"", "", "gpt-4.1", "", APIChat},
		{"", "", "gpt-5-chat-latest", "", APIChat},
		{"azure", "https://r.openai.azure.com", "prod", "gpt-6-sol", APIResponses},
		{"azure", "https://r.openai.azure.com", "prod", "", APIChat},
		{"", "https://openrouter.ai/api/v1", "openai/gpt-5.6", "", APIChat},
		{"", "http://localhost:11434/v1", "gpt-oss:20b", "", APIChat},
	} {
		c := New(Config{APIType: tc.apiType, BaseURL: tc.baseURL, Model: tc.model, Family: tc.family})
		if got := c.apiFor(); got != tc.want {
			t.Errorf("%+v: %s", tc, got)
		}
	}
}

// A family is named by its longest known prefix: gpt-4.1 and gpt-4o are
// not called gpt-4 (agentbot check shows the name).
func TestFamilyNames(t *testing.T) {
	for model, want := range map[string]string{
		"gpt-4.1": "gpt-4.1", "gpt-4.1-mini": "gpt-4.1", "GPT-4.1-nano": "gpt-4.1",
		"gpt-4o": "gpt-4o", "gpt-4o-mini": "gpt-4o", "gpt-4-turbo": "gpt-4",
		"gpt-5.1-codex": "gpt-5.1", "o3-mini": "o3", "llama3": "llama3",
	} {
		if got := familyOf(model).name; got != want {
			t.Errorf("family of %q = %q, want %q", model, got, want)
		}
	}
}

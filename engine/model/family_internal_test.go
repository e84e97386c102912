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

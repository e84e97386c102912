package model_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/llm"
	"agentbot/engine/model"
)

// AGENTBOT_TEMPERATURE=0 reaches the wire on both APIs (go-openai alone
// drops a zero temperature on Chat Completions), and is left out for a
// reasoning model at an effort that refuses sampling (the fake refuses it
// as OpenAI does).
func TestTemperatureZeroOnTheWire(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	zero := float32(0)
	for _, tc := range []struct {
		api, model, effort string
		want               bool
	}{
		{model.APIChat, "llama3.1:8b", "", true},
		{model.APIResponses, "gpt-4.1", "", true},
		{model.APIChat, "gpt-5.6-terra", "", true}, // effort none on chat: sampling allowed
		{model.APIChat, "o3", "", false},
		{model.APIResponses, "gpt-5.6-terra", "high", false},
	} {
		n := s.Calls()
		c, _ := newClient(s, func(cfg *model.Config) {
			cfg.API, cfg.Model, cfg.ReasoningEffort, cfg.Temperature = tc.api, tc.model, tc.effort, &zero
		})
		if _, err := c.Complete(context.Background(), llm.Request{Messages: userRequest("hi").Messages, Tools: testTools}, nil); err != nil {
			t.Fatalf("%s %s: %v", tc.api, tc.model, err)
		}
		raw := string(s.Requests()[n].Raw)
		if got := strings.Contains(raw, `"temperature":0`); got != tc.want {
			t.Errorf("%s %s: temperature sent %v, want %v: %s", tc.api, tc.model, got, tc.want, raw)
		}
	}
}

// AGENTBOT_MAX_TOKENS goes out as the field each family and API takes,
// Azure deployments named by AGENTBOT_MODEL_FAMILY included.
func TestMaxTokensFieldPerFamily(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	for _, tc := range []struct {
		api, apiType, model, family, field string
	}{
		{model.APIChat, "", "gpt-4.1", "", "max_tokens"},
		{model.APIChat, "", "gpt-5.6-terra", "", "max_completion_tokens"},
		{model.APIChat, "", "o4-mini", "", "max_completion_tokens"},
		{model.APIChat, "azure", "prod-chat", "gpt-5.2", "max_completion_tokens"},
		{model.APIChat, "azure", "prod-chat", "", "max_tokens"},
		{model.APIResponses, "", "gpt-4.1", "", "max_output_tokens"},
		{model.APIResponses, "azure", "prod-reasoner", "gpt-5.6", "max_output_tokens"},
	} {
		n := s.Calls()
		c, _ := newClient(s, func(cfg *model.Config) {
			cfg.API, cfg.Model, cfg.Family, cfg.MaxTokens = tc.api, tc.model, tc.family, 777
			if tc.apiType != "" {
				cfg.APIType, cfg.BaseURL = tc.apiType, s.RootURL()
			}
		})
		if _, err := c.Complete(context.Background(), userRequest("hi"), nil); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		body := rawField(t, s.Requests()[n])
		for _, f := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
			if _, has := body[f]; has != (f == tc.field) {
				t.Errorf("%+v: field %s present %v: %s", tc, f, has, s.Requests()[n].Raw)
			}
		}
	}
}

// AGENTBOT_REASONING_EFFORT reaches the models that take it, and never one
// that refuses it or the value (the fake refuses both as OpenAI does).
func TestEffortOnlyWhereTaken(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	for _, tc := range []struct {
		api, model, effort, want string
	}{
		{model.APIChat, "gpt-4.1", "high", ""},
		{model.APIResponses, "gpt-4.1", "high", ""},
		{model.APIChat, "gpt-5.1", "minimal", ""},
		{model.APIChat, "gpt-5", "minimal", "minimal"},
		{model.APIChat, "o3-mini", "none", ""},
		{model.APIResponses, "gpt-6-astra", "none", ""},
		{model.APIResponses, "gpt-5.6-luna", "xhigh", "xhigh"},
		{model.APIChat, "qwen3:8b", "low", "low"}, // unknown family: sent as configured
		{model.APIChat, "qwen3:8b", "", ""},
	} {
		n := s.Calls()
		c, _ := newClient(s, func(cfg *model.Config) { cfg.API, cfg.Model, cfg.ReasoningEffort = tc.api, tc.model, tc.effort })
		if _, err := c.Complete(context.Background(), userRequest("hi"), nil); err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		r := s.Requests()[n]
		got := r.ReasoningEffort
		if tc.api == model.APIResponses {
			got = ""
			if m, ok := rawField(t, r)["reasoning"].(map[string]any); ok {
				got, _ = m["effort"].(string)
			}
		}
		if got != tc.want {
			t.Errorf("%+v: effort sent %q: %s", tc, got, r.Raw)
		}
	}
}

// A bad API or effort is a configuration error before any request.
func TestBadAPIConfig(t *testing.T) {
	s := fakemodel.NewTB(t)
	for _, edit := range []func(*model.Config){
		func(cfg *model.Config) { cfg.API = "graphql" },
		func(cfg *model.Config) { cfg.ReasoningEffort = "extreme" },
	} {
		c, _ := newClient(s, edit)
		if _, err := c.Complete(context.Background(), userRequest("hi"), nil); err == nil || !strings.Contains(err.Error(), "bad model configuration") {
			t.Errorf("err %v", err)
		}
	}
	if s.Calls() != 0 {
		t.Errorf("calls %d", s.Calls())
	}
}

package model_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/engine/fakemodel"
	"agentbot/engine/llm"
	"agentbot/engine/model"
)

// Every failure a newcomer meets first gets one prefix and a hint that
// names the setting to fix, through the real client against the fake:
// wrong key, unknown model (with what the endpoint offers), quota (never
// retried), rate limit (retried), nothing listening, a base URL that is
// not the API, and a base URL without a scheme.
func TestErrorHints(t *testing.T) {
	closed := func() string { // a port nothing listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr + "/v1"
	}()
	many := make([]string, 12)
	for i := range many {
		many[i] = fmt.Sprintf("m-%02d", i)
	}
	cases := []struct {
		name   string
		setup  func(s *fakemodel.Server, cfg *model.Config)
		status int
		tries  int
		calls  int // requests the server saw; 0: not checked
		hint   []string
	}{
		{"wrong key", func(s *fakemodel.Server, cfg *model.Config) { s.RequireKey("the-right-key") },
			401, 1, 1, []string{"refused the API key", "OPENAI_API_KEY"}},
		{"unknown model", func(s *fakemodel.Server, cfg *model.Config) {
			s.SetModels("gpt-a", "gpt-b")
			s.RefuseUnknownModels()
			cfg.Model = "gpt-zz"
		}, 404, 1, 1, []string{`does not offer the model "gpt-zz"`, "AGENTBOT_MODEL", "it offers gpt-a, gpt-b"}},
		{"unknown model, long list", func(s *fakemodel.Server, cfg *model.Config) {
			s.SetModels(many...)
			s.RefuseUnknownModels()
			cfg.Model = "gpt-zz"
		}, 404, 1, 1, []string{"it offers m-00, m-01", "m-09 and 2 more"}},
		{"quota", func(s *fakemodel.Server, cfg *model.Config) {
			s.Enqueue(fakemodel.Reply{Status: 429, ErrorBody: fakemodel.InsufficientQuotaBody}, fakemodel.Reply{Text: "never"})
		}, 429, 1, 1, []string{"out of quota", "not retried", "billing"}},
		{"rate limit", func(s *fakemodel.Server, cfg *model.Config) {
			s.Enqueue(fakemodel.Reply{Status: 429}, fakemodel.Reply{Status: 429}, fakemodel.Reply{Status: 429})
		}, 429, 3, 3, []string{"rate limit (tried 3 times)", "AGENTBOT_MAX_CONCURRENT_TURNS"}},
		{"nothing listening", func(s *fakemodel.Server, cfg *model.Config) { cfg.BaseURL = closed },
			0, 3, 0, []string{"nothing answers at " + closed + ": check OPENAI_BASE_URL"}},
		{"base URL without /v1", func(s *fakemodel.Server, cfg *model.Config) { cfg.BaseURL = s.RootURL() },
			404, 1, 0, []string{"OPENAI_BASE_URL " + "http://", "does not look like an OpenAI-compatible API", "/v1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fakemodel.NewTB(t)
			c, _ := newClient(s, func(cfg *model.Config) { tc.setup(s, cfg) })
			_, err := c.Complete(context.Background(), userRequest("hi"), nil)
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *llm.Error", err)
			}
			if e.Status != tc.status || e.Tries != tc.tries {
				t.Errorf("status %d tries %d, want %d %d (%v)", e.Status, e.Tries, tc.status, tc.tries, err)
			}
			if tc.calls > 0 && s.Calls() != tc.calls {
				t.Errorf("the server saw %d requests, want %d", s.Calls(), tc.calls)
			}
			for _, want := range tc.hint {
				if !strings.Contains(e.Hint, want) {
					t.Errorf("hint %q lacks %q", e.Hint, want)
				}
			}
			if llm.HintOf(fmt.Errorf("turn x: %w", err)) != e.Hint {
				t.Error("HintOf does not find the hint through a wrapper")
			}
			if n := strings.Count(err.Error(), "model call"); n != 1 {
				t.Errorf("%q: %d prefixes", err, n)
			}
		})
	}
}

// A base URL without a scheme is refused before any request, and a failed
// models list carries a hint too.
func TestBaseURLAndListHints(t *testing.T) {
	s := fakemodel.NewTB(t)
	c, _ := newClient(s, func(cfg *model.Config) { cfg.BaseURL = "localhost:11434/v1" })
	if _, err := c.Complete(context.Background(), userRequest("hi"), nil); !errors.Is(err, model.ErrConfig) || !strings.Contains(err.Error(), "http or https") {
		t.Errorf("scheme-less base URL: %v", err)
	}
	if s.Calls() != 0 {
		t.Errorf("%d requests sent", s.Calls())
	}
	s.RequireKey("the-right-key")
	c, _ = newClient(s, nil)
	_, err := c.ListModels(context.Background())
	if h := llm.HintOf(err); !strings.Contains(h, "OPENAI_API_KEY") {
		t.Errorf("list with a wrong key: hint %q (%v)", h, err)
	}
}

// A base URL that answers with a web page (a site's front page, a proxy's
// sign-in page) is not an API: every call fails at once, not retried, with
// a hint that names OPENAI_BASE_URL, on both wire APIs and for the models
// list; it is never read as an empty stream.
func TestWebPageIsNotAnAPI(t *testing.T) {
	var hits atomic.Int32
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><html><body>Welcome to nginx!</body></html>")
	}))
	defer page.Close()
	for _, api := range []string{model.APIChat, model.APIResponses} {
		hits.Store(0)
		c := model.New(model.Config{APIKey: testKey, BaseURL: page.URL, Model: "gpt-4.1", API: api,
			Sleep: func(context.Context, time.Duration) error { return nil }})
		_, err := c.Complete(context.Background(), userRequest("hi"), nil)
		if !errors.Is(err, model.ErrNotAnAPI) {
			t.Fatalf("%s: err = %v, want ErrNotAnAPI", api, err)
		}
		if h := llm.HintOf(err); !strings.Contains(h, "OPENAI_BASE_URL "+page.URL) || !strings.Contains(h, "/v1") {
			t.Errorf("%s: hint %q does not name OPENAI_BASE_URL and /v1", api, h)
		}
		if n := hits.Load(); n != 1 {
			t.Errorf("%s: %d requests, want 1 (a web page is not retried)", api, n)
		}
	}
	c := model.New(model.Config{APIKey: testKey, BaseURL: page.URL, Model: "gpt-4.1"})
	if _, err := c.ListModels(context.Background()); !errors.Is(err, model.ErrNotAnAPI) || !strings.Contains(llm.HintOf(err), "OPENAI_BASE_URL") {
		t.Errorf("models list: %v (hint %q)", err, llm.HintOf(err))
	}
}

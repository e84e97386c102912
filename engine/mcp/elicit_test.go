package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
)

// askSchema is what the ask tool of askServer requests.
const askSchema = `{"type":"object","properties":{
	"name":{"type":"string","default":"Ada"},
	"count":{"type":"integer","default":3},
	"ok":{"type":"boolean","default":true},
	"color":{"type":"string","enum":["red","blue"],"default":"blue"},
	"note":{"type":"string"}}}`

// askServer is an MCP server over streamable HTTP whose tool ask
// requests input (elicitation/create, form mode) in the middle of the
// call and returns the answer as JSON, or the error as text; caps gets
// the client's declared capabilities.
func askServer(t *testing.T, caps chan<- *sdk.ClientCapabilities) string {
	s := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "1"}, &sdk.ServerOptions{
		InitializedHandler: func(_ context.Context, r *sdk.InitializedRequest) {
			if caps != nil {
				caps <- r.Session.InitializeParams().Capabilities
			}
		},
	})
	var schema map[string]any
	if err := json.Unmarshal([]byte(askSchema), &schema); err != nil {
		t.Fatal(err)
	}
	s.AddTool(&sdk.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Which one? " + secret, RequestedSchema: schema})
			text := ""
			if err != nil {
				text = "error: " + err.Error()
			} else {
				b, _ := json.Marshal(res)
				text = string(b)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestSchemaDefaults(t *testing.T) {
	got, _ := json.Marshal(SchemaDefaults(json.RawMessage(askSchema)))
	if string(got) != `{"color":"blue","count":3,"name":"Ada","ok":true}` {
		t.Fatalf("defaults = %s", got)
	}
	if d := SchemaDefaults(json.RawMessage(`not json`)); len(d) != 0 {
		t.Fatalf("defaults of a bad schema = %v", d)
	}
}

// A server's request for input reaches the Elicit hook with the server's
// name, its message (secrets scrubbed) and the schema; the person's
// answer, accept with values, decline or cancel, reaches the server.
// Elicitation is declared with the hook (form mode), roots and sampling
// never.
func TestElicitReachesThePerson(t *testing.T) {
	caps := make(chan *sdk.ClientCapabilities, 1)
	url := askServer(t, caps)
	var mu sync.Mutex
	var asked []Elicitation
	answer := ElicitAnswer{Action: ElicitAccept}
	m, logs := setup(t, "servers:\n"+httpEntry(url, "asker", "    headers: {X-Token: \"${MCP_SECRET}\"}\n"), Options{
		Elicit: func(_ context.Context, e Elicitation) (ElicitAnswer, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, e)
			a := answer
			if a.Action == ElicitAccept {
				a.Content = SchemaDefaults(e.Schema)
				a.Content["note"] = "hi"
			}
			return a, nil
		},
	})
	ask := get(t, tools(t, m, "asker"), "asker__ask")
	c := <-caps
	if c.Elicitation == nil || c.Elicitation.Form == nil || c.Elicitation.URL != nil || c.Sampling != nil || c.RootsV2 != nil || c.Roots.ListChanged {
		b, _ := json.Marshal(c)
		t.Errorf("declared capabilities = %s", b)
	}
	if r := call(t, ask, `{}`); r.IsError || r.Text != `{"action":"accept","content":{"color":"blue","count":3,"name":"Ada","note":"hi","ok":true}}` {
		t.Fatalf("accepted = %+v", r)
	}
	for _, action := range []string{ElicitDecline, ElicitCancel} {
		mu.Lock()
		answer = ElicitAnswer{Action: action}
		mu.Unlock()
		if r := call(t, ask, `{}`); r.IsError || r.Text != fmt.Sprintf(`{"action":%q}`, action) {
			t.Fatalf("%s = %+v", action, r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 3 || asked[0].Server != "asker" || asked[0].Message != "Which one? [redacted]" {
		t.Fatalf("asked = %+v", asked)
	}
	var schema map[string]any
	if err := json.Unmarshal(asked[0].Schema, &schema); err != nil || schema["properties"] == nil {
		t.Fatalf("schema = %s (%v)", asked[0].Schema, err)
	}
	if strings.Contains(logs.String(), secret) || !strings.Contains(logs.String(), "action=accept") {
		t.Errorf("logs:\n%s", logs)
	}
}

// Without an Elicit hook, elicitation is not declared, and a server
// that asks all the same gets an error, not a hang.
func TestNoElicitHookDeclaresNone(t *testing.T) {
	caps := make(chan *sdk.ClientCapabilities, 1)
	url := askServer(t, caps)
	m, _ := setup(t, "servers:\n"+httpEntry(url, "asker", "    timeout: 5s\n"), Options{})
	ask := get(t, tools(t, m, "asker"), "asker__ask")
	if c := <-caps; c.Elicitation != nil || c.Sampling != nil || c.RootsV2 != nil {
		b, _ := json.Marshal(c)
		t.Errorf("declared capabilities = %s", b)
	}
	if r := call(t, ask, `{}`); !strings.Contains(r.Text, "error:") {
		t.Fatalf("ask without a hook = %+v", r)
	}
}

// A call does not time out while the person is asked: the server's
// timeout runs again from their answer.
func TestElicitPausesTheCallTimeout(t *testing.T) {
	url := askServer(t, nil)
	m, _ := setup(t, "servers:\n"+httpEntry(url, "asker", "    timeout: 300ms\n"), Options{
		Elicit: func(ctx context.Context, e Elicitation) (ElicitAnswer, error) {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return ElicitAnswer{}, ctx.Err()
			}
			return ElicitAnswer{Action: ElicitDecline}, nil
		},
	})
	ask := get(t, tools(t, m, "asker"), "asker__ask")
	if r := call(t, ask, `{}`); r.IsError || r.Text != `{"action":"decline"}` {
		t.Fatalf("slow answer = %+v", r)
	}
}

// With AskPeople, what a server asks during a call goes to that call's
// own Ask (the engine's: the person the call acts for), even while
// another person's call on another session asks at the same time; the
// answer reaches the server; a call without an Ask, and no Elicit, gets
// an error for the server, not a hang.
func TestElicitGoesToTheCallsPerson(t *testing.T) {
	url := askServer(t, nil)
	m, _ := setup(t, "servers:\n"+httpEntry(url, "asker", "    identity: user\n"), Options{AskPeople: true})
	sessionTools := m.SessionTools(func(*engine.Session) []string { return []string{"asker"} },
		func(s *engine.Session) Identity { return Identity{Kind: IdentityUser, Team: "T1", User: s.Person} })
	call := func(person string) string {
		s := &engine.Session{Person: person}
		var tool engine.ExternalTool
		for _, x := range sessionTools(context.Background(), s, nil) {
			if x.Name == "asker__ask" {
				tool = x
			}
		}
		if tool.Call == nil {
			t.Errorf("%s: no asker__ask tool", person)
			return ""
		}
		ask := func(_ context.Context, q engine.Question) (engine.Answer, error) {
			if q.Source != "asker" || !strings.Contains(q.Message, "Which one?") {
				t.Errorf("question = %+v", q)
			}
			time.Sleep(50 * time.Millisecond) // both questions are open at once
			return engine.Answer{Action: engine.AnswerAccept, Values: map[string]any{"name": person}}, nil
		}
		r, err := tool.Call(context.Background(), json.RawMessage(`{}`), engine.ExternalCall{Progress: func(string) {}, Ask: ask})
		if err != nil {
			t.Errorf("%s: %v", person, err)
		}
		return r.Text
	}
	var wg sync.WaitGroup
	got := map[string]string{}
	var mu sync.Mutex
	for _, p := range []string{"UANN", "UBOB"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := call(p)
			mu.Lock()
			got[p] = text
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, p := range []string{"UANN", "UBOB"} {
		if !strings.Contains(got[p], `"action":"accept"`) || !strings.Contains(got[p], `"name":"`+p+`"`) {
			t.Fatalf("%s's call got %q", p, got[p])
		}
	}

	// A call with nobody to ask: the server is told so, and the call ends.
	var tool engine.ExternalTool
	for _, x := range sessionTools(context.Background(), &engine.Session{Person: "UCAROL"}, nil) {
		if x.Name == "asker__ask" {
			tool = x
		}
	}
	r, err := tool.Call(context.Background(), json.RawMessage(`{}`), engine.ExternalCall{Progress: func(string) {},
		Ask: func(context.Context, engine.Question) (engine.Answer, error) {
			return engine.Answer{}, engine.ErrNobodyToAsk
		}})
	if err != nil || !strings.Contains(r.Text, "error") {
		t.Fatalf("a call with nobody to ask: %q, %v", r.Text, err)
	}
}

// At an identity user server, a request for input names the person the
// session acts as: the one whose call it interrupts.
func TestElicitNamesThePerson(t *testing.T) {
	url := askServer(t, nil)
	asked := make(chan Identity, 4)
	m, _ := setup(t, "servers:\n"+httpEntry(url, "asker", ""), Options{
		Elicit: func(_ context.Context, e Elicitation) (ElicitAnswer, error) {
			asked <- e.Who
			return ElicitAnswer{Action: ElicitDecline}, nil
		},
	})
	for _, n := range []string{"A", "B"} {
		ask := get(t, toolsOf(t, m, user(n), "asker"), "asker__ask")
		if r := call(t, ask, `{}`); r.IsError {
			t.Fatalf("%s: %+v", n, r)
		}
		if who := <-asked; who != user(n) {
			t.Errorf("%s's call asked on behalf of %v", n, who)
		}
	}
}

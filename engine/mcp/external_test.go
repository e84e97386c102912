package mcp

import (
	"context"
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/mcp/mcptest"
)

// SessionTools offers the tools of the servers named for a session as
// engine tools; an unknown server is a warning logged once, not an error.
func TestSessionTools(t *testing.T) {
	srv := mcptest.NewHTTPServer(t)
	m, logs := setup(t, "servers:\n"+httpEntry(srv.URL, "web", ""), Options{})
	ext := m.SessionTools(func(s *engine.Session) []string { return []string{"web", "ghost"} }, nil)
	s := &engine.Session{}
	s.ID = "s1"
	var echo, note engine.ExternalTool
	for range 3 {
		for _, tl := range ext(context.Background(), s, nil) {
			switch tl.Name {
			case "web__echo":
				echo = tl
			case "web__write_note":
				note = tl
			}
		}
	}
	if echo.Server != "web" || echo.Policy != PolicyAuto || note.Policy != PolicyAsk || len(echo.Schema) == 0 || echo.Call == nil {
		t.Fatalf("echo %+v note %+v", echo, note)
	}
	r, err := echo.Call(context.Background(), []byte(`{"text":"hi"}`), engine.ExternalCall{})
	text, isErr := r.Text, r.IsError
	if err != nil || isErr || text != "hi" {
		t.Fatalf("echo call = %q %v %v", text, isErr, err)
	}
	r, err = echo.Call(context.Background(), []byte(`[1]`), engine.ExternalCall{})
	text, isErr = r.Text, r.IsError
	if err != nil || !isErr || !strings.Contains(text, "JSON object") {
		t.Fatalf("bad args = %q %v %v", text, isErr, err)
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\"mcp tools unavailable\" session=s1 server=ghost"); n != 1 {
		t.Fatalf("ghost warned %d times:\n%s", n, logs.String())
	}
	if none := m.SessionTools(func(*engine.Session) []string { return nil }, nil)(context.Background(), s, nil); none != nil {
		t.Fatalf("no servers: %+v", none)
	}
}

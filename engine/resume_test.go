package engine_test

import (
	"errors"
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/transcript"
)

func TestResume(t *testing.T) {
	maren := &catalog.Agent{ID: "product-team/product-lead", Name: "Maren", Icon: "🧭", Source: "bundle", Module: "product-team"}
	mine := &catalog.Agent{ID: "product-lead", Name: "Mine", Source: "bundle", Module: "mine"}
	pm := &catalog.Agent{ID: "pm", Name: "Priya", Source: "module", Module: "bmm"}
	cat := &catalog.Catalog{Agents: []*catalog.Agent{maren, mine, pm}}
	eng := engine.New(engine.Config{Catalog: func() *catalog.Catalog { return cat }})
	msgs := []transcript.Message{{Role: transcript.RoleSystem, Content: "sys"}}

	for _, c := range []struct {
		name string
		rec  transcript.Session
		want *catalog.Agent
	}{
		{"the id's owner", transcript.Session{AgentID: "pm", Agent: engine.Snapshot(pm)}, pm},
		{"no snapshot: by id", transcript.Session{AgentID: "pm"}, pm},
		{"a later owner of the id: by module and name", transcript.Session{AgentID: "product-lead",
			Agent: &transcript.AgentSnapshot{ID: "product-lead", Name: "Maren", Source: "bundle", Module: "product-team"}}, maren},
		{"no agent yet", transcript.Session{}, nil},
	} {
		c.rec.ID, c.rec.Messages = "s1", msgs
		s, err := eng.Resume(&c.rec)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.AgentDef != c.want || s.ID != "s1" || len(s.Messages) != 1 {
			t.Errorf("%s: agent %+v, want %+v", c.name, s.AgentDef, c.want)
		}
	}

	gone := &transcript.Session{ID: "s2", AgentID: "storyteller", Agent: &transcript.AgentSnapshot{ID: "storyteller", Name: "Sophia", Icon: "📖", Module: "cis"}}
	_, err := eng.Resume(gone)
	var ge *engine.AgentGoneError
	if !errors.As(err, &ge) || ge.SessionID != "s2" || ge.AgentID != "storyteller" {
		t.Fatalf("Resume of a gone agent: %v", err)
	}
	for _, want := range []string{"📖 Sophia", "(storyteller)", "start a new thread", "/agent use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if _, err := eng.Resume(nil); err == nil {
		t.Error("Resume(nil): want error")
	}
}

// The record the engine saves carries the agent's snapshot, no host path.
func TestSnapshotHasNoPath(t *testing.T) {
	a := &catalog.Agent{ID: "pm", Name: "Priya", Title: "PM", Icon: "📋", Description: "d", Source: "bundle", Module: "team",
		Path: "/host/bundles/team/agents/pm.md", Format: catalog.FormatXMLCmds, SkillName: "bmad-agent-pm"}
	got := *engine.Snapshot(a)
	want := transcript.AgentSnapshot{ID: "pm", Name: "Priya", Title: "PM", Icon: "📋", Description: "d", Source: "bundle", Module: "team",
		Format: string(catalog.FormatXMLCmds), SkillName: "bmad-agent-pm"}
	if got != want {
		t.Fatalf("Snapshot = %+v, want %+v", got, want)
	}
	if engine.Snapshot(nil) != nil {
		t.Fatal("Snapshot(nil) must be nil")
	}
}

package catalog

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	mk := func(ids ...string) *Catalog {
		c := &Catalog{}
		for _, id := range ids {
			c.Agents = append(c.Agents, &Agent{ID: id, EntryPoint: !strings.HasPrefix(id, "x")})
		}
		return c
	}
	c := mk("PM", "pm", "cis/storyteller", "bmm/dev", "core/dev", "bmm/qa", "bmm/qa-2", "xhidden", "bmm/tea-2b")
	tests := []struct {
		in, want string
	}{
		{"pm", "pm"}, // exact wins over case-insensitive
		{"PM", "PM"}, // exact
		{"Pm", "PM"}, // first case-insensitive match
		{"cis/storyteller", "cis/storyteller"},
		{"storyteller", "cis/storyteller"}, // unique suffix
		{"*Storyteller", "cis/storyteller"},
		{" @storyteller ", "cis/storyteller"},
		{"dev", ""}, // bmm/dev and core/dev: ambiguous
		{"qa", ""},  // bmm/qa and bmm/qa-2: ambiguous
		{"qa-2", "bmm/qa-2"},
		{"tea", ""},    // "-2b" is not a disambiguation suffix
		{"teller", ""}, // only whole segments match
		{"", ""},
		{"xhidden", "xhidden"}, // Find also finds agents that are not entry points
	}
	for _, tt := range tests {
		a, ok := c.Find(tt.in)
		got := ""
		if a != nil {
			got = a.ID
		}
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Find(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	if eps := c.EntryPoints(); len(eps) != 8 || eps[0].ID != "PM" {
		t.Errorf("EntryPoints %v", ids(eps))
	}
	var nilCat *Catalog
	if _, ok := nilCat.Find("pm"); ok || nilCat.EntryPoints() != nil {
		t.Error("nil catalog")
	}
}

func TestAssignIDs(t *testing.T) {
	agents := []*Agent{
		{ID: "pm", Module: "bmm"},
		{ID: "storyteller", Module: "cis"},
		{ID: "PM", Module: "team"},
		{ID: "pm", Module: "bmm"},
		{ID: "bmm/pm-2", Module: "x"}, // already takes the name a suffix would make
		{ID: "", Module: ""},
		{ID: "solo", Module: ""},
		{ID: "solo", Module: ""},
	}
	problems := assignIDs(agents)
	got := ids(agents)
	// The first keeps its id; later ones get the module prefix (and a
	// suffix when that is taken), each with a problem naming both.
	want := []string{"agent", "bmm/pm", "bmm/pm-2", "pm", "solo", "solo-2", "storyteller", "team/PM"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ids %q, want %q", got, want)
	}
	if len(problems) != 3 || !strings.Contains(problems[0].Reason, `id "PM" is taken by`) || !strings.Contains(problems[0].Reason, "available as team/PM") {
		t.Errorf("problems %+v", problems)
	}
}

// TestAgentJSONRoundTrip checks that every field survives encoding/json, as
// sessions store the agent snapshot.
func TestAgentJSONRoundTrip(t *testing.T) {
	a := &Agent{
		ID: "bmm/pm", Name: "John", Title: "PM", Icon: "📋", Description: "d", Source: "module", Module: "bmm",
		Path: "/x/pm.md", Format: FormatXMLV6, EntryPoint: true,
		Persona:    Persona{Role: "r", Identity: "i", CommunicationStyle: "c", Principles: "p"},
		Activation: []string{"a1", "a2"}, Handlers: "<handler/>", Rules: []string{"r1"},
		Prompts: []Prompt{{ID: "p", Content: "c"}}, Greeting: "hi",
		Menu: []MenuItem{{Cmd: "CP or fuzzy match on create-prd", Trigger: "create-prd", Code: "CP", Description: "d",
			Workflow: "w", Exec: "e", Tmpl: "t", Data: "da", Action: "ac", ValidateWorkflow: "v"}},
		Dependencies: map[string][]string{"tasks": {"a.md"}},
		Home: &Home{Kind: "bmad", Name: "bmm", ProjectRoot: "/x", BundleRoot: "/x/bmad", CoreRoot: "/x/bmad/core",
			ConfigPath: "/x/bmad/bmm/config.yaml", Config: map[string]string{"user_name": "BMad"}},
	}
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back Agent
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, a) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, *a)
	}
	for _, key := range []string{`"entry_point":true`, `"validate_workflow":"v"`, `"communication_style":"c"`, `"project_root":"/x"`, `"config_path"`} {
		if !strings.Contains(string(data), key) {
			t.Errorf("JSON lacks %s: %s", key, data)
		}
	}
}

func TestAgentSummaryJSON(t *testing.T) {
	a := &Agent{ID: "pm", Name: "John", Source: "module", Path: "/x/pm.md", Format: FormatXMLV6, EntryPoint: true,
		Persona: Persona{Role: "not in the summary"},
		Menu: []MenuItem{
			{Cmd: "*help", Trigger: "help", Description: "Show menu"},
			{Cmd: "*prd", Trigger: "prd", Description: "PRD", Workflow: "w.yaml", ValidateWorkflow: "v.yaml"},
		}}
	data, err := json.Marshal(a.Summary())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "name", "source", "path", "format", "entry_point", "menu"} {
		if _, ok := got[k]; !ok {
			t.Errorf("summary lacks %s: %s", k, data)
		}
	}
	if _, ok := got["persona"]; ok {
		t.Errorf("summary has persona: %s", data)
	}
	menu := got["menu"].([]any)
	help := menu[0].(map[string]any)
	prd := menu[1].(map[string]any)
	if _, ok := help["workflow"]; ok || help["cmd"] != "*help" || help["description"] != "Show menu" {
		t.Errorf("help item %v", help)
	}
	if prd["workflow"] != "w.yaml" || prd["validate_workflow"] != "v.yaml" {
		t.Errorf("prd item %v", prd)
	}
	if s := (&Agent{ID: "x"}).Summary(); s.Menu == nil {
		t.Error("empty menu should encode as []")
	}
}

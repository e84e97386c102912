package party

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"agentbot/engine/fixtures"
)

// skillDir is the party skill's folder in an install.
func skillDir(root string) string {
	return filepath.Join(root, ".claude", "skills", SkillName)
}

// writeFile writes a file under root.
func writeFile(t *testing.T, root, rel, body string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// teamOverride adds a group, a custom member and pins the default room.
const teamOverride = `
[workflow]
default_party = "writers-room"
party_mode = "auto"

[[workflow.party_members]]
code = "morpheus"
name = "Morpheus"
icon = "🕶️"
title = "Reality Checker"
persona = "Questions whether any of it is real."

[[workflow.party_groups]]
id = "writers-room"
name = "The Writers' Room"
scene = "Late-night room, everyone a little punchy."
members = ["analyst", "Winston", "morpheus", "nobody"]
memory = true
`

func TestRosterInstalled(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V612)
	r, err := Resolve(root, skillDir(root), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Active != InstalledRoom || !r.InstalledResolved || !r.Memory || r.Mode != ModeSession {
		t.Fatalf("roster: %+v", r)
	}
	want := map[string]string{"Mary": "📊", "John": "📋", "Winston": "🏗️", "Sally": "🎨", "Amelia": "💻"}
	got := map[string]string{}
	for _, m := range r.Members {
		got[m.Name] = m.Icon
		if m.Title == "" || m.Source != "installed" {
			t.Errorf("member %+v", m)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("installed agent %s missing from %v", name, got)
		}
	}
	if got["Mary"] != want["Mary"] || got["John"] != want["John"] {
		t.Errorf("icons %v", got)
	}
	var ids []string
	for _, g := range r.Groups {
		ids = append(ids, g.ID)
	}
	if strings.Join(ids, ",") != "code-review-crew,anti-consensus-club" {
		t.Errorf("groups %v", ids)
	}
}

func TestRosterTeamOverrideAddsGroup(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	writeFile(t, root, "_bmad/custom/bmad-party-mode.toml", teamOverride)
	r, err := Resolve(root, skillDir(root), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Active != "writers-room" || r.Name != "The Writers' Room" || !r.Memory || r.Mode != ModeAuto || !strings.Contains(r.Scene, "punchy") {
		t.Fatalf("roster: %+v", r)
	}
	var names []string
	for _, m := range r.Members {
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "Mary,Winston,Morpheus" || strings.Join(r.Unresolved, ",") != "nobody" {
		t.Fatalf("members %v unresolved %v", names, r.Unresolved)
	}
	if len(r.Groups) != 3 || r.Groups[2].ID != "writers-room" || r.Groups[2].MemberCount != 4 {
		t.Fatalf("groups %+v", r.Groups)
	}
	// --party wins over default_party; --mode wins over party_mode.
	r, err = Resolve(root, skillDir(root), Request{Party: "code-review-crew", Mode: ModeSubagent})
	if err != nil {
		t.Fatal(err)
	}
	if r.Active != "code-review-crew" || len(r.Members) != 5 || r.Mode != ModeSubagent || r.Memory {
		t.Fatalf("--party: %+v", r)
	}
	if m, ok := r.Find("vex"); !ok || m.Icon != "🔒" {
		t.Fatalf("find Vex: %+v %v", m, ok)
	}
}

func TestRosterRequests(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	writeFile(t, root, "_bmad/custom/bmad-party-mode.user.toml", `
[[workflow.party_groups]]
id = "rebels"
name = "Rebels"
scene = "Aboard the Ghost."
`)
	r, err := Resolve(root, skillDir(root), Request{ListGroups: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Members) != 0 || len(r.Groups) != 3 || !r.Groups[2].OpenCast {
		t.Fatalf("--list-groups: %+v", r)
	}
	r, err = Resolve(root, skillDir(root), Request{Party: "rebels"})
	if err != nil || !r.OpenCast || r.Scene != "Aboard the Ghost." || len(r.Members) != 0 {
		t.Fatalf("open cast: %+v %v", r, err)
	}
	r, err = Resolve(root, skillDir(root), Request{Party: "nope"})
	if err != nil || r.Error != "unknown_group" || r.Requested != "nope" || len(r.Groups) != 3 {
		t.Fatalf("unknown group: %+v %v", r, err)
	}
	if _, err := Resolve(root, skillDir(root), Request{Mode: "chaos"}); err == nil || !strings.Contains(err.Error(), "chaos") {
		t.Fatalf("bad mode: %v", err)
	}
	r, err = Resolve(root, skillDir(root), Request{Mode: ModeAgentTeam})
	if err != nil || r.Mode != ModeSession || len(r.Notes) == 0 {
		t.Fatalf("agent-team: %+v %v", r, err)
	}
}

func TestRosterBadOverride(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	writeFile(t, root, "_bmad/custom/bmad-party-mode.toml", "[workflow\nbroken")
	r, err := Resolve(root, skillDir(root), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Members) != 5 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "bmad-party-mode.toml") {
		t.Fatalf("bad override: %+v", r)
	}
	writeFile(t, root, "_bmad/config.toml", "not = [toml")
	r, err = Resolve(root, skillDir(root), Request{})
	if err != nil || r.InstalledResolved || len(r.Members) != 0 {
		t.Fatalf("bad central config: %+v %v", r, err)
	}
	// Releases up to 6.2 ship the skill without customize.toml: it
	// resolves, with no saved rooms. A broken one is an error naming the
	// file alone, never its host path.
	if _, err := Resolve(root, t.TempDir(), Request{}); err != nil {
		t.Fatalf("a skill folder without customize.toml: %v", err)
	}
	broken := t.TempDir()
	writeFile(t, broken, "customize.toml", "[workflow\nbroken")
	_, err = Resolve(root, broken, Request{})
	if err == nil || !strings.Contains(err.Error(), "customize.toml") || strings.Contains(err.Error(), broken) {
		t.Fatalf("a broken customize.toml: %v", err)
	}
}

func TestParseArgs(t *testing.T) {
	req, rest, err := ParseArgs("--group writers-room --mode=auto about pricing --list-groups")
	if err != nil || req.Party != "writers-room" || req.Mode != ModeAuto || !req.ListGroups || rest != "about pricing" {
		t.Fatalf("%+v %q %v", req, rest, err)
	}
	if req, _, _ := ParseArgs("--subagents"); req.Mode != ModeSubagent {
		t.Fatalf("--subagents: %+v", req)
	}
	if _, _, err := ParseArgs("--party"); err == nil {
		t.Fatal("--party without a value parsed")
	}
}

// pyMember is the part of resolve_party.py's member entries compared.
type pyMember struct {
	Code, Name, Icon, Title, Source string
}

// TestRosterMatchesPython runs the skill's own resolve_party.py on the
// install with a team override and compares its roster with Resolve's.
func TestRosterMatchesPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		fixtures.Unavailable(t, fixtures.NeedPython, "python3 is not on PATH")
	}
	if out, err := exec.Command(py, "-c", "import sys; print(sys.version_info >= (3, 11))").Output(); err != nil || strings.TrimSpace(string(out)) != "True" {
		fixtures.Unavailable(t, fixtures.NeedPython, "python3 is older than 3.11")
	}
	plain := fixtures.Dir(t, fixtures.V612)
	team := fixtures.Copy(t, fixtures.V612)
	writeFile(t, team, "_bmad/custom/bmad-party-mode.toml", teamOverride)
	for _, c := range []struct {
		root string
		req  Request
	}{{plain, Request{}}, {team, Request{}}, {team, Request{Party: "code-review-crew"}}, {team, Request{Party: "writers-room"}}} {
		root, req := c.root, c.req
		args := []string{"-B", filepath.Join(skillDir(root), "scripts", "resolve_party.py"), "--project-root", root, "--skill", skillDir(root)}
		if req.Party != "" {
			args = append(args, "--party", req.Party)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, py, args...)
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		var so bytes.Buffer
		cmd.Stdout = &so
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Fatalf("resolve_party.py: %v", err)
		}
		var want struct {
			Active     string     `json:"active"`
			Members    []pyMember `json:"members"`
			Unresolved []string   `json:"unresolved"`
			Memory     bool       `json:"memory_enabled"`
			Mode       string     `json:"party_mode"`
			Scene      string     `json:"scene"`
		}
		if err := json.Unmarshal(so.Bytes(), &want); err != nil {
			t.Fatalf("resolve_party.py output: %v\n%s", err, so.String())
		}
		got, err := Resolve(root, skillDir(root), req)
		if err != nil {
			t.Fatal(err)
		}
		var gm []pyMember
		for _, m := range got.Members {
			gm = append(gm, pyMember{m.Code, m.Name, m.Icon, m.Title, m.Source})
		}
		if want.Active == InstalledRoom { // the installed room's order is the TOML file's in Python
			sort.Slice(want.Members, func(i, j int) bool { return want.Members[i].Code < want.Members[j].Code })
		}
		wj, _ := json.Marshal(want.Members)
		gj, _ := json.Marshal(gm)
		if !bytes.Equal(wj, gj) || want.Active != got.Active || want.Memory != got.Memory || want.Mode != got.Mode ||
			want.Scene != got.Scene || strings.Join(want.Unresolved, ",") != strings.Join(got.Unresolved, ",") {
			t.Errorf("%+v:\npython %s %+v\ngo     %s %+v", req, wj, want, gj, got)
		}
	}
}

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		in    string
		ok    bool
		with  string
		topic string
		party string
		mode  string
	}{
		{"party with Winston and Mary about the API gateway", true, "Winston|Mary", "the API gateway", "", ""},
		{"Party with Winston, Mary & John: pricing", true, "Winston|Mary|John", "pricing", "", ""},
		{"party mode", true, "", "", "", ""},
		{"party --party code-review-crew --mode subagent on this diff", true, "", "this diff", "code-review-crew", ModeSubagent},
		{"party planning for the launch", false, "", "", "", ""},
		{"let's party", false, "", "", "", ""},
	} {
		got, ok, err := ParseCommand(c.in)
		if err != nil || ok != c.ok || strings.Join(got.With, "|") != c.with || got.Topic != c.topic || got.Party != c.party || got.Mode != c.mode {
			t.Errorf("%q: %+v ok=%v err=%v", c.in, got, ok, err)
		}
	}
	if _, ok, err := ParseCommand("party --mode"); !ok || err == nil {
		t.Errorf("party --mode: ok=%v err=%v", ok, err)
	}
}

func TestRosterInlineCast(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V612)
	r, err := Resolve(root, skillDir(root), Request{With: []string{"winston", "Mary", "Yoda"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Active != InlineRoom || r.Memory || len(r.Members) != 2 || r.Members[0].Name != "Winston" || r.Members[1].Name != "Mary" || strings.Join(r.Unresolved, ",") != "Yoda" {
		t.Fatalf("inline: %+v", r)
	}
}

func TestParseArgsWith(t *testing.T) {
	c, ok, err := ParseCommand("party --with Winston,Mary --mode auto")
	if err != nil || !ok || strings.Join(c.With, "|") != "Winston|Mary" || c.Mode != ModeAuto {
		t.Fatalf("%+v %v %v", c, ok, err)
	}
}

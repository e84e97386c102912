package main

import (
	"slices"
	"strings"
	"testing"
)

// Every setting is in exactly one group, and every group a command names
// exists: a setting added to the table without a group would be no
// command's flag.
func TestEverySettingInOneGroup(t *testing.T) {
	seen := map[string]string{}
	for g, flags := range groups {
		for _, f := range flags {
			if other, dup := seen[f]; dup {
				t.Errorf("--%s is in groups %s and %s", f, other, g)
			}
			seen[f] = g
		}
	}
	for _, s := range settings {
		if seen[s.flag] == "" {
			t.Errorf("--%s ($%s) is in no group: add it to one in config.go's groups", s.flag, s.env)
		}
		delete(seen, s.flag)
	}
	for f := range seen {
		t.Errorf("group lists --%s, which is no setting", f)
	}
	for _, c := range commands() {
		for _, g := range c.groups {
			if _, ok := groups[g]; !ok && !slices.ContainsFunc(settings, func(s setting) bool { return s.flag == g }) {
				t.Errorf("%s names %q, no group or setting", c.name, g)
			}
		}
	}
	if len(everyGroup) != len(groups) {
		t.Errorf("everyGroup has %d groups, groups %d", len(everyGroup), len(groups))
	}
}

// Each subcommand's -h (and agentbot help CMD) prints its usage line and
// exactly its flags to stdout and exits 0.
func TestSubcommandHelp(t *testing.T) {
	own := map[string][]string{ // flags a command registers itself
		"chat": {"agent", "session", "project", "party", "with"}, "projects": {"all-versions"}, "agents": {"json", "all"}, "sessions": {"o", "force", "older-than"},
		"check": {"check-timeout", "no-slack"}, "backup": {"force"}, "migrate": {"from"}, "health": {"url", "timeout"},
		"connections": {"team", "user", "server"}, "manifest": {"mode"},
	}
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			for _, args := range [][]string{{c.name, "-h"}, {c.name, "--help"}, {"help", c.name}} {
				r := runCmd(t, map[string]string{"SLACK_BOT_TOKEN": "xoxb-secret-in-env"}, "", args...)
				r.wantCode(t, 0)
				if r.stderr != "" {
					t.Errorf("%v writes to stderr: %q", args, r.stderr)
				}
				if !strings.HasPrefix(r.stdout, "usage: agentbot "+c.name) {
					t.Fatalf("%v does not start with its usage line:\n%s", args, r.stdout)
				}
				lacks(t, "help", r.stdout, "xoxb-secret-in-env")
				want := slices.Clone(own[c.name])
				for _, s := range settingsOf(c.groups) {
					want = append(want, s.flag)
				}
				for _, f := range want {
					if !strings.Contains(r.stdout, "\n  -"+f+" ") && !strings.Contains(r.stdout, "\n  -"+f+"\n") {
						t.Errorf("%v lacks -%s:\n%s", args, f, r.stdout)
					}
				}
				// No other flag: count the flag lines.
				n := 0
				for _, l := range strings.Split(r.stdout, "\n") {
					if strings.HasPrefix(l, "  -") {
						n++
					}
				}
				if n != len(want) {
					t.Errorf("%v lists %d flags, want %d (%v):\n%s", args, n, len(want), want, r.stdout)
				}
			}
		})
	}
	// projects offers the one setting of its import, not the turns' others;
	// check offers Slack's tokens, not the bot's other Slack settings.
	r0 := runCmd(t, nil, "", "projects", "-h")
	contains(t, "projects -h", r0.stdout, "-max-file-bytes")
	for _, f := range []string{"-max-iterations", "-turn-timeout", "-deny", "-core-root", "-daily-token-budget"} {
		lacks(t, "projects -h", r0.stdout, f)
	}
	r0 = runCmd(t, nil, "", "check", "-h")
	contains(t, "check -h", r0.stdout, "-slack-app-token")
	lacks(t, "check -h", r0.stdout, "-max-concurrent-turns")
	r0 = runCmd(t, nil, "", "agents", "-h")
	lacks(t, "agents -h", r0.stdout, "-database-url")
	// chat's help does not offer Slack's settings; serve's does.
	r := runCmd(t, nil, "", "chat", "-h")
	lacks(t, "chat -h", r.stdout, "-slack-bot-token")
	r = runCmd(t, nil, "", "serve", "-h")
	contains(t, "serve -h", r.stdout, "-slack-bot-token")
}

// The top-level help lists every command on one line; without a command
// it goes to stderr with exit 2, asked for (-h, help) to stdout with 0.
func TestTopLevelHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		r := runCmd(t, nil, "", args...)
		r.wantCode(t, 0)
		for _, c := range commands() {
			contains(t, "help", r.stdout, "\n  "+c.name+strings.Repeat(" ", 12-len(c.name))+c.summary+"\n")
		}
	}
	r := runCmd(t, nil, "")
	r.wantCode(t, 2)
	contains(t, "bare agentbot", r.stderr, "usage: agentbot <command>")
	r = runCmd(t, nil, "", "frobnicate")
	r.wantCode(t, 2)
	contains(t, "unknown command", r.stderr, `unknown command "frobnicate"`)
	r = runCmd(t, nil, "", "help", "frobnicate")
	r.wantCode(t, 2)
}

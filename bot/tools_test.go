package bot_test

import (
	"context"
	"slices"
	"testing"

	"agentbot/bot"
	"agentbot/bot/keys"
	"agentbot/engine"
	"agentbot/storage"
)

const (
	other     = "U0OTHER1" // a person in the channel who may not approve
	noteArgs  = `{"text":"hello","api_key":"sk-SECRET-4242","nested":{"Authorization":"Bearer tok-SECRET-77","list":[{"password":"pw-SECRET-9"}]}}`
	secretOne = "SECRET"
)

// /agent tools add|remove, by an admin; refused for others; unknown
// servers get the list of known ones.
func TestSlashTools(t *testing.T) {
	ctx := context.Background()
	const admin = "U0ADMIN1"
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
		c.Admins = []string{admin}
		c.MCPServers = []string{"notes", "jira"}
	}})
	team := r.slack.TeamID()
	has(t, r.slash(other, channel, "tools add notes"), "Only workspace admins", "non-admin add")
	if got, _ := storage.ChannelTools(ctx, r.st, team, channel); len(got) != 0 {
		t.Fatalf("a refused add stored %v", got)
	}
	has(t, r.slash(admin, channel, "tools"), "adds no MCP servers", "empty list")
	has(t, r.slash(admin, channel, "tools add notes"), "`notes` added", "add")
	has(t, r.slash(admin, channel, "tools add jira"), "`jira`, `notes`", "add a second")
	unknown := r.slash(admin, channel, "tools add github")
	has(t, unknown, "no MCP server `github`", "unknown server")
	has(t, unknown, "`jira`, `notes`", "known servers listed")
	if got, _ := storage.ChannelTools(ctx, r.st, team, channel); !slices.Equal(got, []string{"jira", "notes"}) {
		t.Fatalf("channel tools = %v", got)
	}
	has(t, r.slash(other, channel, "tools remove notes"), "Only workspace admins", "non-admin remove")
	has(t, r.slash(admin, channel, "tools remove notes"), "`notes` removed", "remove")
	has(t, r.slash(admin, channel, "tools remove notes"), "not one of this channel's tools", "remove twice")
	has(t, r.slash(admin, channel, "tools frobnicate"), "Usage", "bad subcommand")
	if got, _ := storage.ChannelTools(ctx, r.st, team, channel); !slices.Equal(got, []string{"jira"}) {
		t.Fatalf("channel tools = %v", got)
	}
	servers, err := bot.ChannelServers(r.st)(r.sessionKey("123.456"))
	if err != nil || !slices.Equal(servers, []string{"jira"}) {
		t.Fatalf("ChannelServers = %v, %v", servers, err)
	}
}

// A session acts at identity user MCP servers as its turn's person in the
// workspace of its thread.
func TestSessionPerson(t *testing.T) {
	s := &engine.Session{Person: "U0ANN"}
	s.Key = keys.Thread{Team: "T0TEAM", Channel: "C0CHAN", Thread: "123.456"}.String()
	if team, user := bot.SessionPerson(s); team != "T0TEAM" || user != "U0ANN" {
		t.Fatalf("SessionPerson = %s, %s", team, user)
	}
	s.Key, s.Person = "not-a-thread", "U0BOB"
	if team, user := bot.SessionPerson(s); team != "" || user != "U0BOB" {
		t.Fatalf("SessionPerson of another key = %s, %s", team, user)
	}
}

// Command agentbot runs agent bundles as conversations in Slack threads.
//
//	agentbot serve                 run the Slack bot (Socket Mode)
//	agentbot chat --agent ID       talk to an agent in the terminal
//	agentbot agents [--json]       list the agents found
//	agentbot sessions list|show|export|delete|prune
//	agentbot check                 validate the configuration
//	agentbot backup FILE           copy the database, also while serve or chat runs
//	agentbot migrate [--from DIR]  copy a bbolt store into PostgreSQL
//	agentbot rotate-key            re-encrypt stored credentials under the current key
//	agentbot connections list|revoke  the stored MCP connections
//	agentbot health                ask a running serve's /healthz
//	agentbot version               print the version and build
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"agentbot/cmd/agentbot/admin"
	"agentbot/cmd/agentbot/signals"
)

// env is what a command gets from the process: arguments, streams and the
// environment. Tests build one to run commands in-process.
type env struct {
	args   []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// command is one subcommand: its name, a one-line summary for the
// top-level help, its synopsis for -h, the setting groups it uses (see
// groups in config.go; or single settings of a group) and what runs it.
type command struct {
	name, summary string
	// usage is what follows "agentbot NAME" in its -h.
	usage  string
	groups []string
	run    func(ctx context.Context, e *env) int
}

// everyGroup is every setting group, for serve, which uses them all.
var everyGroup = []string{"agents", "store", "replicas", "model", "turns", "slack", "logs", "http", "web", "retention"}

func commands() []command {
	return []command{
		{name: "serve", summary: "run the Slack bot (Socket Mode, or the Events API over HTTP)", groups: everyGroup, run: runServe},
		{name: "chat", summary: "talk to an agent in the terminal", usage: "--agent ID [--session NAME] [--project NAME]",
			groups: []string{"agents", "store", "model", "turns", "logs"}, run: runChat},
		// agents reads the data folder: the built-in sample bundle is
		// unpacked there when no other source is named.
		{name: "agents", summary: "list the agents found in bundles and BMAD roots", usage: "[--json] [--all=false]",
			groups: []string{"agents", "data"}, run: runAgents},
		{name: "sessions", summary: "list, show, export, delete or prune sessions", usage: admin.SessionsSynopsis,
			groups: []string{"store", "retention"}, run: runSessions},
		{name: "projects", summary: "list, show, export or import projects' shared documents", usage: admin.ProjectsSynopsis,
			groups: []string{"store", "max-file-bytes"}, run: runProjects},
		{name: "check", summary: "validate tokens, Slack, the model (a real tool call), MCP servers and bundles", usage: "[--check-timeout DURATION] [--no-slack]",
			groups: []string{"agents", "store", "model", "slack-mode", "slack-app-token", "slack-bot-token", "slack-signing-secret", "slack-client-id", "slack-client-secret", "slack-api-url", "public-url"}, run: runCheck},
		{name: "backup", summary: "copy the database consistently, also while serve or chat runs", usage: "[--force] FILE",
			groups: []string{"store"}, run: runBackup},
		{name: "migrate", summary: "copy a bbolt store into PostgreSQL (AGENTBOT_DATABASE_URL)", usage: "[--from DATA_FOLDER]",
			groups: []string{"store"}, run: runMigrate},
		{name: "rotate-key", summary: "re-encrypt stored credentials under AGENTBOT_SECRET_KEY (older keys: AGENTBOT_SECRET_KEY_PREVIOUS)",
			groups: []string{"store"}, run: runRotateKey},
		{name: "connections", summary: "list or revoke the MCP connections people and service identities hold", usage: admin.ConnectionsSynopsis,
			groups: []string{"store"}, run: runConnections},
		{name: "installs", summary: "list or revoke the Slack workspaces agentbot is installed in (SLACK_CLIENT_ID)", usage: admin.InstallsSynopsis,
			groups: []string{"store", "slack-api-url"}, run: runInstalls},
		{name: "manifest", summary: "print the Slack app manifest (--mode http: the request URLs under AGENTBOT_PUBLIC_URL)", usage: admin.ManifestSynopsis,
			groups: []string{"public-url"}, run: runManifest},
		{name: "health", summary: "ask a running serve's /healthz: exit 0 healthy, 1 not (for HEALTHCHECK)", usage: "[--url URL] [--timeout DURATION]",
			groups: []string{"http"}, run: runHealth},
		{name: "version", summary: "print the version, commit and Go version", run: runVersion},
	}
}

// findCommand returns the command named name.
func findCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func main() {
	// Signals are handled from the first line (package signals): the
	// first SIGINT or SIGTERM cancels the command's context; if the command
	// has not returned within stopGrace, or a second signal comes, the
	// process exits anyway, so a start stuck in a system call can always be
	// stopped.
	ctx := signals.Stop(stopGrace)
	os.Exit(run(ctx, processEnv(os.Args[1:])))
}

// processEnv is the env of the process: args, its streams and environment.
func processEnv(args []string) *env {
	return &env{args: args, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
}

// stopGrace is how long a command may take to stop after a signal.
const stopGrace = 10 * time.Second

// run dispatches to a subcommand and returns the exit code.
func run(ctx context.Context, e *env) int {
	if len(e.args) == 0 {
		usage(e.stderr)
		return 2
	}
	name := e.args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(e.args) > 1 { // agentbot help CMD is agentbot CMD -h
			return run(ctx, &env{args: []string{e.args[1], "-h"}, stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, getenv: e.getenv})
		}
		usage(e.stdout)
		return 0
	case "-version", "--version":
		name = "version"
	}
	if c, ok := findCommand(name); ok {
		sub := *e
		sub.args = e.args[1:]
		return c.run(ctx, &sub)
	}
	fmt.Fprintf(e.stderr, "agentbot: unknown command %q\n\n", e.args[0])
	usage(e.stderr)
	return 2
}

// usage is the top-level help: one line per command.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: agentbot <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nEvery setting is a flag and an environment variable: agentbot <command> -h lists the command's.")
}

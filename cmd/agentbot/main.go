// Command agentbot runs agent bundles as conversations in Slack threads.
//
//	agentbot serve                 run the Slack bot (Socket Mode)
//	agentbot chat --agent ID       talk to an agent in the terminal
//	agentbot agents [--json]       list the agents found
//	agentbot sessions list|show|export|prune
//	agentbot check                 validate the configuration
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
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

type command struct {
	name, summary string
	run           func(ctx context.Context, e *env) int
}

func commands() []command {
	return []command{
		{"serve", "run the Slack bot over Socket Mode", runServe},
		{"chat", "talk to an agent in the terminal", runChat},
		{"agents", "list the agents found in bundles and BMAD roots", runAgents},
		{"sessions", "list, show, export or prune sessions", runSessions},
		{"check", "validate tokens, model endpoint and bundles", runCheck},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, &env{args: os.Args[1:], stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}))
}

// run dispatches to a subcommand and returns the exit code.
func run(ctx context.Context, e *env) int {
	if len(e.args) == 0 || e.args[0] == "help" || e.args[0] == "-h" || e.args[0] == "--help" {
		usage(e.stdout)
		if len(e.args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == e.args[0] {
			sub := *e
			sub.args = e.args[1:]
			return c.run(ctx, &sub)
		}
	}
	fmt.Fprintf(e.stderr, "agentbot: unknown command %q\n\n", e.args[0])
	usage(e.stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: agentbot <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nEvery setting is a flag and an environment variable: agentbot <command> -h lists them.")
}

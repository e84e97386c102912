// Command agentbot runs agent bundles as conversations in Slack threads.
//
//	agentbot serve                 run the Slack bot (Socket Mode)
//	agentbot chat --agent ID       talk to an agent in the terminal
//	agentbot agents [--json]       list the agents found
//	agentbot sessions list|show|export|prune
//	agentbot check                 validate the configuration
//	agentbot backup FILE           copy the database, also while serve runs
//	agentbot migrate [--from DIR]  copy a bbolt store into PostgreSQL
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
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
		{"projects", "list, show, export or import projects' shared documents", runProjects},
		{"check", "validate tokens, model endpoint and bundles", runCheck},
		{"backup", "copy the database consistently, also while serve runs", runBackup},
		{"migrate", "copy a bbolt store into PostgreSQL (AGENTBOT_DATABASE_URL)", runMigrate},
	}
}

func main() {
	// Signals are handled from the first line: the first SIGINT or SIGTERM
	// cancels the command's context; if the command has not returned
	// within stopGrace, or a second signal comes, the process exits anyway,
	// so a start stuck in a system call can always be stopped.
	ctx := stopOnSignals(stopGrace)
	os.Exit(run(ctx, processEnv(os.Args[1:])))
}

// stopOnSignals starts handling SIGINT and SIGTERM (see watchSignals) and
// returns the context the first of them cancels.
func stopOnSignals(grace time.Duration) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go watchSignals(sigs, cancel, grace, os.Stderr, os.Exit)
	return ctx
}

// processEnv is the env of the process: args, its streams and environment.
func processEnv(args []string) *env {
	return &env{args: args, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
}

// stopGrace is how long a command may take to stop after a signal.
const stopGrace = 10 * time.Second

// watchSignals cancels on the first signal and exits with 128+signal when
// the command does not stop within grace, or at once on a second signal.
func watchSignals(sigs <-chan os.Signal, cancel func(), grace time.Duration, stderr io.Writer, exit func(int)) {
	first := <-sigs
	cancel()
	code := 130 // SIGINT
	if first == syscall.SIGTERM {
		code = 143
	}
	select {
	case <-sigs:
		fmt.Fprintln(stderr, "agentbot: second signal, exiting now")
	case <-time.After(grace):
		fmt.Fprintf(stderr, "agentbot: still busy %s after %s, exiting\n", grace, first)
	}
	exit(code)
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

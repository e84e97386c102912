package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"agentbot/storage/bolt"
)

// Commands that only read never make a store in a data folder that has
// none: each says there is none yet, naming the folder, and lists nothing
// or finds nothing. Given a store, each says which it reads.
func TestReadOnlyCommandsMakeNoStore(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	vars := map[string]string{"AGENTBOT_DATA": data}
	out := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"sessions", "list"}, 0},
		{[]string{"sessions", "show", "x"}, 1},
		{[]string{"sessions", "export", "x"}, 1},
		{[]string{"sessions", "delete", "x"}, 1},
		{[]string{"sessions", "prune", "--older-than", "1h"}, 0},
		{[]string{"projects", "list"}, 0},
		{[]string{"projects", "show", "terminal"}, 1},
		{[]string{"projects", "export", "terminal", out}, 1},
		{[]string{"connections", "list"}, 0},
		{[]string{"backup", filepath.Join(out, "b.db")}, 1},
	} {
		r := runCmd(t, vars, "", c.args...)
		r.wantCode(t, c.code)
		contains(t, "stderr of "+c.args[0]+" "+c.args[1], r.stderr, "no store in "+data+" yet: nothing has run with this data folder")
	}
	if _, err := os.Stat(filepath.Join(data, bolt.DBName)); !os.IsNotExist(err) {
		t.Fatalf("a command that only reads made a store: %v", err)
	}

	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, args := range [][]string{{"sessions", "list"}, {"projects", "list"}, {"connections", "list"}} {
		r := runCmd(t, vars, "", args...)
		r.wantCode(t, 0)
		contains(t, "stderr of "+args[0], r.stderr, "agentbot "+args[0]+" list: reading the store in "+data+"\n")
	}
}

// While a running agentbot holds the bbolt store, sessions, connections
// and backup ask it through its control socket at once: they do not wait
// out bbolt's lock (a second) to learn that the store is held.
func TestReadsGoStraightToTheRunningAgentbot(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.NewSession(context.Background(), "chat/demo")
	if err != nil {
		t.Fatal(err)
	}
	stop, err := st.ServeControl(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	vars := map[string]string{"AGENTBOT_DATA": data}
	for _, args := range [][]string{
		{"sessions", "list"}, {"sessions", "show", s.ID}, {"connections", "list"},
		{"backup", filepath.Join(t.TempDir(), "b.db")},
	} {
		start := time.Now()
		r := runCmd(t, vars, "", args...)
		took := time.Since(start)
		r.wantCode(t, 0)
		contains(t, "stderr of "+args[0], r.stderr, "the store in "+data+", through the agentbot running on it")
		if took >= time.Second {
			t.Errorf("%v took %s: it waited out bbolt's lock before asking the running agentbot", args, took)
		}
	}
}

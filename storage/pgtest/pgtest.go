// Package pgtest gives tests a PostgreSQL database, as net/http/httptest
// gives them a server: URL creates a fresh, empty database on the server
// AGENTBOT_TEST_DATABASE_URL names and drops it at cleanup; Cluster starts
// a private throwaway server that a test may stop and start again.
//
// Without the variable (or without initdb, for Cluster) the test is
// skipped, except when CI=true: there it fails, so CI cannot go green by
// skipping the PostgreSQL tests.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/engine/fixtures"
)

// EnvURL names the variable holding the URL of a server tests may create
// databases on, e.g. postgres://postgres@127.0.0.1:5432/postgres.
const EnvURL = "AGENTBOT_TEST_DATABASE_URL"

// unavailable skips the test, or fails it under CI (counted for
// fixtures.Main's summary line).
func unavailable(t testing.TB, why string) {
	t.Helper()
	fixtures.Unavailable(t, fixtures.NeedDatabase, "pgtest: "+why)
}

// URL returns the URL of a fresh, empty database on the server
// AGENTBOT_TEST_DATABASE_URL names; the database is dropped at cleanup.
func URL(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvURL)
	if admin == "" {
		unavailable(t, EnvURL+" is not set")
	}
	return CreateDB(t, admin)
}

// CreateDB creates a fresh database on the server that admin (a database
// URL with the right to create databases) names, returns its URL and drops
// it at cleanup.
func CreateDB(t testing.TB, admin string) string {
	t.Helper()
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("pgtest: the admin database address is not a postgres:// URL")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "agentbot_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect to the test server: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// Server is a private PostgreSQL cluster in a temporary folder, listening
// on a free local port.
type Server struct {
	t    testing.TB
	dir  string // owned by the server's user
	port int
	bin  string // folder of initdb and pg_ctl

	mu      sync.Mutex
	running bool
}

// binDirs are where initdb is looked for after PATH.
var binDirs = []string{"/usr/local/bin", "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"}

// findBin returns the folder holding initdb and pg_ctl, or "".
func findBin() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "pg_ctl")); err == nil {
			return filepath.Dir(p)
		}
	}
	for _, d := range binDirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

// Cluster starts a throwaway server (initdb, then pg_ctl start) and
// stops it and removes its folder at cleanup. Run as root, the server runs
// as the user postgres, since PostgreSQL refuses to run as root.
func Cluster(t testing.TB) *Server {
	t.Helper()
	bin := findBin()
	if bin == "" {
		unavailable(t, "initdb not found")
	}
	dir, err := os.MkdirTemp("", "agentbot-pg-")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	c := &Server{t: t, dir: dir, bin: bin}
	t.Cleanup(func() {
		c.Stop()
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("pgtest: running as root needs the user postgres to run the server: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgtest: find a free port: %v", err)
	}
	c.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	if out, err := c.run("initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	c.Start()
	return c
}

func (c *Server) data() string { return filepath.Join(c.dir, "data") }

// run runs one of the server's programs, as postgres when we are root.
func (c *Server) run(prog string, args ...string) ([]byte, error) {
	path := filepath.Join(c.bin, prog)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = c.dir
	return cmd.CombinedOutput()
}

// URL is the address of the cluster's postgres database, as its
// superuser, without a password.
func (c *Server) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// CreateDB creates a fresh database in the cluster and returns its URL.
func (c *Server) CreateDB(t testing.TB) string {
	t.Helper()
	return CreateDB(t, c.URL())
}

// Start starts the server (again) on its port and waits until it accepts
// connections.
func (c *Server) Start() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return
	}
	// fsync and full-page writes guard against the machine crashing,
	// which a test never plays: off, for speed. Commits stay synchronous:
	// with synchronous_commit=off a server that crashes (Kill) loses
	// transactions it already reported committed ("the most recent
	// transactions may be lost if the database should crash",
	// https://www.postgresql.org/docs/current/wal-async-commit.html),
	// which a production server is not set up to do.
	opts := strings.Join([]string{"-p", strconv.Itoa(c.port), "-k", c.dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "full_page_writes=off"}, " ")
	out, err := c.run("pg_ctl", "start", "-w", "-t", "60", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-o", opts)
	for try := 0; err != nil && try < 20; try++ {
		// After Kill, the old backends may still hold the shared memory
		// for a moment ("pre-existing shared memory block is still in
		// use"): they end once they see the postmaster gone.
		time.Sleep(250 * time.Millisecond)
		out, err = c.run("pg_ctl", "start", "-w", "-t", "60", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-o", opts)
	}
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.t.Fatalf("pgtest: pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	c.running = true
}

// Kill kills the server as kill -9 does: the postmaster gets SIGKILL, its
// backends end when they see it gone, and every connection drops without
// a goodbye. Start then runs crash recovery.
func (c *Server) Kill() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return
	}
	pidFile, err := os.ReadFile(filepath.Join(c.data(), "postmaster.pid"))
	if err != nil {
		c.t.Fatalf("pgtest: kill: %v", err)
	}
	pid, _, _ := strings.Cut(string(pidFile), "\n")
	if out, err := c.run("pg_ctl", "kill", "KILL", strings.TrimSpace(pid)); err != nil {
		c.t.Fatalf("pgtest: pg_ctl kill: %v\n%s", err, out)
	}
	c.running = false
}

// Stop stops the server at once (fast shutdown), closing every
// connection.
func (c *Server) Stop() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return
	}
	if out, err := c.run("pg_ctl", "stop", "-w", "-t", "60", "-m", "fast", "-D", c.data()); err != nil {
		c.t.Errorf("pgtest: pg_ctl stop: %v\n%s", err, out)
	}
	c.running = false
}

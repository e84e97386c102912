package pgtest_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"agentbot/storage/pgtest"
)

// TestClusterStopStart: the cluster answers, refuses while stopped and
// answers again after Start; CreateDB gives a database of its own.
func TestClusterStopStart(t *testing.T) {
	c := pgtest.Cluster(t)
	u := c.CreateDB(t)
	ping := func() error {
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		return conn.Ping(context.Background())
	}
	if err := ping(); err != nil {
		t.Fatalf("fresh cluster: %v", err)
	}
	c.Stop()
	if err := ping(); err == nil {
		t.Fatal("stopped cluster answered")
	}
	c.Start()
	if err := ping(); err != nil {
		t.Fatalf("restarted cluster: %v", err)
	}
}

// stop ends a fake test's helper call, as runtime.Goexit ends a real one.
type stop struct{}

// fakeTB records what a helper did to its test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	panic(stop{})
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(stop{})
}

// TestURLWithoutServer: with no server URL, URL skips, except under
// CI=true, where it fails.
func TestURLWithoutServer(t *testing.T) {
	for _, tc := range []struct {
		ci         string
		skip, fail bool
	}{{"", true, false}, {"false", true, false}, {"true", false, true}} {
		t.Setenv(pgtest.EnvURL, "")
		t.Setenv("CI", tc.ci)
		f := &fakeTB{TB: t}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(stop); !ok {
						panic(r)
					}
				}
			}()
			pgtest.URL(f)
		}()
		if (f.skipped != "") != tc.skip || (f.failed != "") != tc.fail {
			t.Errorf("CI=%q: skipped %q, failed %q", tc.ci, f.skipped, f.failed)
		}
	}
}

// TestURLFreshDatabase: each URL is a database of its own, empty, and
// gone after its test.
func TestURLFreshDatabase(t *testing.T) {
	admin := os.Getenv(pgtest.EnvURL)
	var first, second string
	t.Run("inner", func(t *testing.T) {
		first, second = pgtest.URL(t), pgtest.URL(t)
		if first == second {
			t.Fatal("two calls gave one database")
		}
		conn, err := pgx.Connect(context.Background(), first)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var tables int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables); err != nil || tables != 0 {
			t.Fatalf("fresh database has %d tables (%v)", tables, err)
		}
	})
	if admin == "" {
		return // skipped inside
	}
	conn, err := pgx.Connect(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, u := range []string{first, second} {
		parsed, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(parsed.Path, "/")
		if !strings.HasPrefix(name, "agentbot_test_") {
			t.Fatalf("database name %q", name)
		}
		var n int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil || n != 0 {
			t.Errorf("database %s still exists after its test (%d, %v)", name, n, err)
		}
	}
}

package pgtest_test

import (
	"context"
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

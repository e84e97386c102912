package postgres_test

import (
	"context"
	"testing"

	"agentbot/storage"
	"agentbot/storage/pgtest"
	"agentbot/storage/postgres"
	"agentbot/storage/storetest"
)

// open opens a store on url with its own data folder, closed at cleanup.
func open(t testing.TB, url string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestContract runs the storage contract on a fresh database per
// behaviour.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storage.Backend { return open(t, pgtest.URL(t)) })
}

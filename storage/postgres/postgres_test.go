package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"agentbot/storage"
	"agentbot/storage/bolt"
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

// TestMigrateCopiesChannelTools: bolt.Migrate carries each channel's
// MCP servers (and default agent) from bbolt to PostgreSQL.
func TestMigrateCopiesChannelTools(t *testing.T) {
	ctx := context.Background()
	src, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := storage.SetChannelTools(ctx, src, "T1", "C1", []string{"notes", "jira"}); err != nil {
		t.Fatal(err)
	}
	if err := storage.SetChannelDefault(ctx, src, "T1", "C1", "pm"); err != nil {
		t.Fatal(err)
	}
	dst := open(t, pgtest.URL(t))
	rep, err := bolt.Migrate(ctx, dst, src)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ChannelTools != 1 || rep.Channels != 1 {
		t.Fatalf("report = %+v, want 1 channel default and 1 channel tool list", rep)
	}
	got, err := storage.ChannelTools(ctx, dst, "T1", "C1")
	if err != nil || len(got) != 2 || got[0] != "jira" || got[1] != "notes" {
		t.Fatalf("ChannelTools after migrate = %v, %v; want [jira notes]", got, err)
	}
}

// TestNoPlaintextAtRest: the rows of credentials and flows hold no token,
// client secret, PKCE verifier or state in clear, read as their raw bytes
// (storetest.NoPlaintextAtRest).
func TestNoPlaintextAtRest(t *testing.T) {
	url := pgtest.URL(t)
	s := open(t, url)
	storetest.NoPlaintextAtRest(t, s, func(t *testing.T) []byte {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var out []byte
		for _, q := range []string{
			`SELECT convert_to(team || ' ' || user_id || ' ' || server || ' ' || account || ' ' || array_to_string(scopes, ' '), 'UTF8') || sealed FROM credentials`,
			`SELECT convert_to(state, 'UTF8') || sealed FROM oauth_flows`,
		} {
			rows, err := conn.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var b []byte
				if err := rows.Scan(&b); err != nil {
					t.Fatal(err)
				}
				out = append(out, b...)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
		}
		return out
	})
}

package postgres_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/engine/mcp/oauth"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/pgtest"
	"agentbot/storage/postgres"
	"agentbot/storage/secretbox"
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

// TestMigrateCarriesCredentials: bolt.Migrate copies credentials as they
// are sealed (the same bytes: no key is needed) and moves the pending
// flows, which the same key then opens on PostgreSQL; a second run copies
// the credentials again and finds no flow.
func TestMigrateCarriesCredentials(t *testing.T) {
	ctx := context.Background()
	src, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	raw := make([]byte, secretbox.KeySize)
	rand.Read(raw)
	key, _ := secretbox.NewKey(raw)
	kr, _ := secretbox.NewKeyring(key)
	vSrc, err := credentials.New(src, kr, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := oauth.Token{AccessToken: "migrated-access", RefreshToken: "migrated-refresh", Scopes: []string{"repo"}, Expiry: time.Now().Add(time.Hour).Round(0)}
	if err := vSrc.PutToken(ctx, "T1", "U1", "github", "octocat", tok); err != nil {
		t.Fatal(err)
	}
	if err := vSrc.PutFlow(ctx, oauth.Flow{State: "migrated-state", Verifier: "v", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	before, err := src.Credential(ctx, "T1", "U1", "github")
	if err != nil {
		t.Fatal(err)
	}
	dst := open(t, pgtest.URL(t))
	rep, err := bolt.Migrate(ctx, dst, src)
	if err != nil || rep.Credentials != 1 || rep.Flows != 1 {
		t.Fatalf("Migrate = %+v, %v; want 1 credential and 1 flow", rep, err)
	}
	after, err := dst.Credential(ctx, "T1", "U1", "github")
	if err != nil || !bytes.Equal(after.Sealed, before.Sealed) || !after.Updated.Equal(before.Updated) || after.Account != "octocat" {
		t.Fatalf("migrated credential %+v, %v; want the same sealed bytes and times as %+v", after, err, before)
	}
	vDst, err := credentials.New(dst, kr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := vDst.Token(ctx, "T1", "U1", "github"); err != nil || got.AccessToken != "migrated-access" {
		t.Fatalf("Token on PostgreSQL = %v, %v", got, err)
	}
	if _, err := vSrc.TakeFlow(ctx, "migrated-state"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the flow is still in bbolt after the move: %v", err)
	}
	if f, err := vDst.TakeFlow(ctx, "migrated-state"); err != nil || f.Verifier != "v" {
		t.Fatalf("TakeFlow on PostgreSQL = %v, %v", f, err)
	}
	rep, err = bolt.Migrate(ctx, dst, src)
	if err != nil || rep.Credentials != 1 || rep.Flows != 0 {
		t.Fatalf("second Migrate = %+v, %v", rep, err)
	}
}

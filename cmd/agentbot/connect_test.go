package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentbot/engine/mcp"
	"agentbot/engine/mcp/connect"
	"agentbot/engine/mcp/connect/connecttest"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// MCP authorization as serve wires it: connect.Connector over the
// credentials Vault in a bolt store. A flow begun by one Connector is
// finished by another's public side (replicas), the token is stored
// sealed (the database file holds none of it), refreshed on expiry, and
// deleted when the server refuses its refresh; a replayed redirect is
// refused.
func TestConnectOverVault(t *testing.T) {
	ctx := context.Background()
	p := connecttest.New(t, false)
	dir := t.TempDir()
	st, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	kr, err := secretbox.Load(func(k string) string { return map[string]string{secretbox.EnvKey: testSecretKey}[k] })
	if err != nil {
		t.Fatal(err)
	}
	vault, err := credentials.New(st, kr, nil)
	if err != nil {
		t.Fatal(err)
	}
	replica := func() (*connect.Connector, *httptest.Server) {
		c := &connect.Connector{Store: vault, NotFound: storage.ErrNotFound, ServiceUser: storage.ServiceUser, ClientName: "agentbot"}
		srv := httptest.NewServer(c.Handler())
		t.Cleanup(srv.Close)
		return c, srv
	}
	a, _ := replica()
	b, bsrv := replica()
	a.PublicURL, b.PublicURL = "http://127.0.0.1:9", "http://127.0.0.1:9" // one address for both
	s := &mcp.Server{Name: "tracker", Transport: mcp.TransportHTTP, URL: p.Resource, Identity: mcp.IdentityUser}
	ann := mcp.Identity{Kind: mcp.IdentityUser, Team: "T1", User: "UANN"}

	authURL, err := a.ConnectURL(ctx, s, ann)
	if err != nil {
		t.Fatal(err)
	}
	back := connecttest.Authorize(t, authURL)
	get := func(query string) (int, string) {
		resp, err := http.Get(bsrv.URL + connect.CallbackPath + "?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, page := get(back.RawQuery); code != http.StatusOK {
		t.Fatalf("callback on the other replica: %d %s", code, page)
	}
	if code, _ := get(back.RawQuery); code != http.StatusBadRequest {
		t.Fatalf("replayed callback: %d", code)
	}
	tok, err := a.Token(ctx, s, ann)
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("Token = %v, %v", tok, err)
	}
	list, err := vault.List(ctx, storage.CredentialFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var mine bool
	for _, c := range list {
		mine = mine || c.Team == "T1" && c.User == "UANN" && c.Server == "tracker" && len(c.Scopes) > 0
	}
	if !mine {
		t.Fatalf("the listing lacks the connection: %+v", list)
	}

	tok.Expiry = time.Now().Add(-time.Minute)
	if err := vault.PutToken(ctx, "T1", "UANN", "tracker", "", tok); err != nil {
		t.Fatal(err)
	}
	fresh, err := b.Token(ctx, s, ann)
	if err != nil || fresh.AccessToken == "" || fresh.AccessToken == tok.AccessToken {
		t.Fatalf("Token after expiry = %v, %v", fresh, err)
	}

	st.Close()
	db, err := os.ReadFile(filepath.Join(dir, bolt.DBName))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{tok.AccessToken, tok.RefreshToken, fresh.AccessToken, fresh.RefreshToken, connecttest.DynamicClientSecret} {
		if bytes.Contains(db, []byte(secret)) {
			t.Errorf("the database file holds a secret in the clear (%s...)", secret[:3])
		}
	}
	if st, err = bolt.Open(dir); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if vault, err = credentials.New(st, kr, nil); err != nil {
		t.Fatal(err)
	}
	a.Store = vault

	p.RevokeAll()
	fresh.Expiry = time.Now().Add(-time.Minute)
	if err := vault.PutToken(ctx, "T1", "UANN", "tracker", "", fresh); err != nil {
		t.Fatal(err)
	}
	var nc *connect.NeedsConnection
	if _, err := a.Token(ctx, s, ann); !errors.As(err, &nc) || !errors.Is(err, mcp.ErrAuthorizationNeeded) {
		t.Fatalf("Token after revocation = %v", err)
	}
	if _, err := vault.Token(ctx, "T1", "UANN", "tracker"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the refused token is still stored: %v", err)
	}
	if strings.Contains(nc.Error(), fresh.RefreshToken) {
		t.Fatal("the error shows the refresh token")
	}
}

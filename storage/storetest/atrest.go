package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"
	"time"

	"agentbot/engine/mcp/oauth"
	"agentbot/storage"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// The secrets NoPlaintextAtRest stores, which must never be found at rest.
const (
	atRestAccess   = "at-rest-access-token-4f9b2c"
	atRestRefresh  = "at-rest-refresh-token-8d1e7a"
	atRestSecret   = "at-rest-client-secret-2a6c0f"
	atRestVerifier = "at-rest-pkce-verifier-b3e95d"
	atRestState    = "at-rest-state-c71f04"
	atRestAccount  = "at-rest-account-octocat"
)

// NoPlaintextAtRest stores a token, a client and a flow through a
// credentials.Vault on b, then reads the store's bytes at rest with dump
// (the bbolt file, the rows of PostgreSQL) and fails the test if any
// secret shows there; the account, which is not secret, must show, or
// dump read nothing. The Vault still opens each with the key.
func NoPlaintextAtRest(t *testing.T, b storage.Backend, dump func(t *testing.T) []byte) {
	t.Helper()
	ctx := context.Background()
	raw := make([]byte, secretbox.KeySize)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	key, err := secretbox.NewKey(raw)
	must(t, err)
	kr, err := secretbox.NewKeyring(key)
	must(t, err)
	v, err := credentials.New(b, kr, nil)
	must(t, err)
	tok := oauth.Token{AccessToken: atRestAccess, RefreshToken: atRestRefresh, TokenType: "Bearer", Scopes: []string{"repo"},
		Expiry: time.Now().Add(time.Hour), Resource: "https://mcp.example.com/", Issuer: "https://auth.example.com", ClientID: "agentbot"}
	must(t, v.PutToken(ctx, "T1", "U1", "github", atRestAccount, tok))
	must(t, v.PutClient(ctx, "github", oauth.Client{ID: "agentbot", Secret: atRestSecret, AuthMethod: oauth.AuthClientSecretPost, Issuer: tok.Issuer}))
	must(t, v.PutFlow(ctx, oauth.Flow{State: atRestState, Verifier: atRestVerifier, Issuer: tok.Issuer, Expires: time.Now().Add(time.Hour)}))

	data := dump(t)
	if !bytes.Contains(data, []byte(atRestAccount)) {
		t.Fatal("the dump lacks the account, which is stored in clear: it read nothing")
	}
	for _, s := range []string{atRestAccess, atRestRefresh, atRestSecret, atRestVerifier, atRestState} {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("the store holds %q in clear", s)
		}
	}
	if got, err := v.Token(ctx, "T1", "U1", "github"); err != nil || got.AccessToken != atRestAccess || got.RefreshToken != atRestRefresh {
		t.Fatalf("Token = %v, %v", got, err)
	}
	if got, err := v.Client(ctx, "github"); err != nil || got.Secret != atRestSecret {
		t.Fatalf("Client = %v, %v", got, err)
	}
	if got, err := v.TakeFlow(ctx, atRestState); err != nil || got.Verifier != atRestVerifier {
		t.Fatalf("TakeFlow = %v, %v", got, err)
	}
}

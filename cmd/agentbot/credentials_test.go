package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"agentbot/engine/mcp/oauth"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/pgtest"
	"agentbot/storage/postgres"
	"agentbot/storage/secretbox"
)

// The token the tests store: it must never be found in clear.
const (
	cmdAccess  = "cmd-access-token-e41b7c"
	cmdRefresh = "cmd-refresh-token-93d0aa"
)

// secretKey is a fresh key as AGENTBOT_SECRET_KEY holds it, and its Key.
func secretKey(t *testing.T) (string, secretbox.Key) {
	t.Helper()
	raw := make([]byte, secretbox.KeySize)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	k, err := secretbox.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw), k
}

// seedCredentials stores a person's token and a pending flow in the bbolt
// store of data, sealed under keys.
func seedCredentials(t *testing.T, data string, keys ...secretbox.Key) {
	t.Helper()
	ctx := context.Background()
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	kr, err := secretbox.NewKeyring(keys[0], keys[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	v, err := credentials.New(st, kr, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok := oauth.Token{AccessToken: cmdAccess, RefreshToken: cmdRefresh, Scopes: []string{"repo"}, Expiry: time.Now().Add(time.Hour)}
	if err := v.PutToken(ctx, "T1", "U1", "github", "octocat", tok); err != nil {
		t.Fatal(err)
	}
	if err := v.PutFlow(ctx, oauth.Flow{State: "cmd-state", Verifier: "cmd-verifier", Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

// readToken opens the token of T1/U1/github in st with keys.
func readToken(t *testing.T, st storage.Credentials, keys ...secretbox.Key) (oauth.Token, error) {
	t.Helper()
	kr, err := secretbox.NewKeyring(keys[0], keys[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	v, err := credentials.New(st, kr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v.Token(context.Background(), "T1", "U1", "github")
}

// backup carries the credentials still encrypted: the file holds no
// token, and the restored store opens it with the key alone.
func TestBackupCarriesCredentialsEncrypted(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	_, key := secretKey(t)
	seedCredentials(t, data, key)
	file := filepath.Join(t.TempDir(), "backup.db")
	runCmd(t, map[string]string{"AGENTBOT_DATA": data}, "", "backup", file).wantCode(t, 0)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("octocat")) {
		t.Fatal("the backup lacks the credential's account: it holds no credential")
	}
	for _, s := range []string{cmdAccess, cmdRefresh, "cmd-verifier", "cmd-state"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the backup holds %q in clear", s)
		}
	}
	st, err := bolt.Open(copyTo(t, file))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, err := readToken(t, st, key); err != nil || got.AccessToken != cmdAccess {
		t.Fatalf("token in the restored backup: %v, %v", got, err)
	}
	_, other := secretKey(t)
	if _, err := readToken(t, st, other); err == nil {
		t.Fatal("the restored backup opened under another key")
	}
}

// migrate carries the credentials and pending flows into PostgreSQL still
// encrypted: no key is needed to copy them, and the same key opens them
// there.
func TestMigrateCarriesCredentials(t *testing.T) {
	url := pgtest.URL(t)
	data := filepath.Join(t.TempDir(), "data")
	_, key := secretKey(t)
	seedCredentials(t, data, key)
	r := runCmd(t, map[string]string{"AGENTBOT_DATA": data, "AGENTBOT_DATABASE_URL": url}, "", "migrate")
	r.wantCode(t, 0)
	contains(t, "migrate", r.stdout, "1 credential(s) and 1 pending authorization(s), still encrypted")
	lacks(t, "migrate", r.stdout+r.stderr, cmdAccess)
	st, err := postgres.Open(context.Background(), url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, err := readToken(t, st, key); err != nil || got.AccessToken != cmdAccess || got.RefreshToken != cmdRefresh {
		t.Fatalf("token in PostgreSQL: %v, %v", got, err)
	}
}

// rotate-key re-encrypts every credential under the current key, reading
// the older one from AGENTBOT_SECRET_KEY_PREVIOUS; afterwards the new key
// alone opens them. Without a key, or with a short one, it says what to set.
func TestRotateKey(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	oldText, oldKey := secretKey(t)
	newText, newKey := secretKey(t)
	seedCredentials(t, data, oldKey)
	vars := map[string]string{"AGENTBOT_DATA": data}

	r := runCmd(t, vars, "", "rotate-key")
	r.wantCode(t, 2)
	contains(t, "rotate-key without a key", r.stderr, "AGENTBOT_SECRET_KEY")
	vars["AGENTBOT_SECRET_KEY"] = newText[:20]
	r = runCmd(t, vars, "", "rotate-key")
	r.wantCode(t, 2)
	contains(t, "rotate-key with a short key", r.stderr, "need 32")
	lacks(t, "rotate-key with a short key", r.stderr, newText[:20])

	// The new key alone cannot open what the old one sealed.
	vars["AGENTBOT_SECRET_KEY"] = newText
	r = runCmd(t, vars, "", "rotate-key")
	r.wantCode(t, 1)
	contains(t, "rotate-key without the old key", r.stderr, "T1/U1/github")
	contains(t, "rotate-key without the old key", r.stderr, oldKey.ID())

	vars["AGENTBOT_SECRET_KEY_PREVIOUS"] = oldText
	r = runCmd(t, vars, "", "rotate-key")
	r.wantCode(t, 0)
	contains(t, "rotate-key", r.stdout, "re-encrypted 1 credential(s) under key "+newKey.ID())
	lacks(t, "rotate-key", r.stdout+r.stderr, cmdAccess)
	lacks(t, "rotate-key", r.stdout+r.stderr, oldText)

	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readToken(t, st, newKey); err != nil || got.AccessToken != cmdAccess {
		t.Fatalf("token under the new key alone: %v, %v", got, err)
	}
	st.Close()
	delete(vars, "AGENTBOT_SECRET_KEY_PREVIOUS")
	r = runCmd(t, vars, "", "rotate-key")
	r.wantCode(t, 0)
	contains(t, "second rotate-key", r.stdout, "re-encrypted 0 credential(s)")
	contains(t, "second rotate-key", r.stdout, "1 were under it already")
}

package credentials_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/mcp/oauth"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// The secrets of these tests: none may show in a log, an error or the
// store file.
const (
	access   = "vault-access-token-7d3a91"
	refresh  = "vault-refresh-token-c02e5b"
	secret   = "vault-client-secret-91f4ad"
	verifier = "vault-pkce-verifier-5be210"
	state    = "vault-state-0a8c77"
)

var secrets = []string{access, refresh, secret, verifier, state}

func newKey(t *testing.T) secretbox.Key {
	t.Helper()
	raw := make([]byte, secretbox.KeySize)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	k, err := secretbox.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func keyring(t *testing.T, cur secretbox.Key, older ...secretbox.Key) *secretbox.Keyring {
	t.Helper()
	kr, err := secretbox.NewKeyring(cur, older...)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func openStore(t *testing.T) (*bolt.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func vault(t *testing.T, st storage.Credentials, kr *secretbox.Keyring, log *slog.Logger) *credentials.Vault {
	t.Helper()
	v, err := credentials.New(st, kr, log)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func token() oauth.Token {
	return oauth.Token{AccessToken: access, RefreshToken: refresh, TokenType: "Bearer", Scopes: []string{"repo", "read:org"},
		Expiry: time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC), Resource: "https://mcp.example.com/", Issuer: "https://auth.example.com", ClientID: "agentbot"}
}

func client() oauth.Client {
	return oauth.Client{ID: "agentbot", Secret: secret, AuthMethod: oauth.AuthClientSecretBasic, Registration: oauth.RegistrationDynamic,
		Issuer: "https://auth.example.com", TokenURL: "https://auth.example.com/token", SecretExpiresAt: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func flow() oauth.Flow {
	return oauth.Flow{State: state, Verifier: verifier, Issuer: "https://auth.example.com", Resource: "https://mcp.example.com/",
		Expires: time.Now().Add(10 * time.Minute).Round(0), Caller: map[string]string{"team": "T1", "user": "U1", "server": "github"}}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestNoKey(t *testing.T) {
	st, _ := openStore(t)
	if _, err := credentials.New(st, nil, nil); !errors.Is(err, secretbox.ErrNoKey) {
		t.Fatalf("New without a keyring: %v, want ErrNoKey", err)
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	v := vault(t, st, keyring(t, newKey(t)), nil)
	must(t, v.PutToken(ctx, "T1", "U1", "github", "octocat", token()))
	must(t, v.PutToken(ctx, "T1", storage.ServiceUser, "linear", "", token()))
	must(t, v.PutClient(ctx, "github", client()))
	got, err := v.Token(ctx, "T1", "U1", "github")
	if err != nil || got.AccessToken != access || got.RefreshToken != refresh || !got.Expiry.Equal(token().Expiry) || got.Resource != token().Resource {
		t.Fatalf("Token = %v, %v", got, err)
	}
	c, err := v.Client(ctx, "github")
	if err != nil || c.Secret != secret || c.Registration != oauth.RegistrationDynamic {
		t.Fatalf("Client = %v, %v", c, err)
	}
	list, err := v.List(ctx, storage.CredentialFilter{Team: "T1", User: "U1"})
	must(t, err)
	if len(list) != 1 || list[0].Account != "octocat" || !slices.Equal(list[0].Scopes, token().Scopes) || !list[0].Expiry.Equal(token().Expiry) {
		t.Fatalf("List = %+v", list)
	}
	if _, err := v.Token(ctx, "T1", "U2", "github"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Token of someone else: %v, want ErrNotFound", err)
	}
	must(t, v.Delete(ctx, "T1", "U1", "github"))
	if _, err := v.Token(ctx, "T1", "U1", "github"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Token after Delete: %v, want ErrNotFound", err)
	}

	must(t, v.PutFlow(ctx, flow()))
	f, err := v.TakeFlow(ctx, state)
	if err != nil || f.Verifier != verifier || f.Caller["user"] != "U1" {
		t.Fatalf("TakeFlow = %v, %v", f, err)
	}
	if _, err := v.TakeFlow(ctx, state); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second TakeFlow: %v, want ErrNotFound", err)
	}
	if _, err := v.TakeFlow(ctx, "forged"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("TakeFlow of a forged state: %v, want ErrNotFound", err)
	}
}

// A sealed token copied to another person's record (or another server's)
// does not open: the additional data binds it to its key.
func TestMovedRecordDoesNotOpen(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	v := vault(t, st, keyring(t, newKey(t)), nil)
	must(t, v.PutToken(ctx, "T1", "U1", "github", "", token()))
	c, err := st.Credential(ctx, "T1", "U1", "github")
	must(t, err)
	for _, to := range [][3]string{{"T1", "U2", "github"}, {"T2", "U1", "github"}, {"T1", "U1", "linear"}, {"T1", storage.ServiceUser, "github"}} {
		moved := c
		moved.Team, moved.User, moved.Server = to[0], to[1], to[2]
		must(t, st.PutCredential(ctx, moved))
		if _, err := v.Token(ctx, to[0], to[1], to[2]); !errors.Is(err, secretbox.ErrOpen) {
			t.Errorf("a token moved to %v: %v, want ErrOpen", to, err)
		}
	}
	// A flow's sealed bytes under another state's key do not open either.
	rec := &flowRecorder{Store: st}
	vr := vault(t, rec, keyring(t, newKey(t)), nil)
	must(t, vr.PutFlow(ctx, flow()))
	other := flow()
	other.State = "another-state"
	must(t, vr.PutFlow(ctx, other))
	if len(rec.keys) != 2 || rec.keys[0] == state || strings.Contains(rec.keys[0], state) {
		t.Fatalf("flows stored under %q: want two, by a hash of the state", rec.keys)
	}
	must(t, st.PutFlow(ctx, rec.keys[1], rec.sealed[0], other.Expires))
	if _, err := vr.TakeFlow(ctx, other.State); !errors.Is(err, secretbox.ErrOpen) {
		t.Fatalf("a flow moved to another state: %v, want ErrOpen", err)
	}
}

// flowRecorder records the keys and sealed bytes of the flows put.
type flowRecorder struct {
	*bolt.Store
	keys   []string
	sealed [][]byte
}

func (r *flowRecorder) PutFlow(ctx context.Context, key string, sealed []byte, expires time.Time) error {
	r.keys, r.sealed = append(r.keys, key), append(r.sealed, sealed)
	return r.Store.PutFlow(ctx, key, sealed, expires)
}

func TestWrongKey(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	must(t, vault(t, st, keyring(t, newKey(t)), nil).PutToken(ctx, "T1", "U1", "github", "", token()))
	_, err := vault(t, st, keyring(t, newKey(t)), nil).Token(ctx, "T1", "U1", "github")
	if !errors.Is(err, secretbox.ErrUnknownKey) || !strings.Contains(err.Error(), "T1/U1/github") {
		t.Fatalf("Token under another key: %v, want ErrUnknownKey naming the record", err)
	}
}

func TestRotate(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	old, cur, lost := newKey(t), newKey(t), newKey(t)
	vOld := vault(t, st, keyring(t, old), nil)
	must(t, vOld.PutToken(ctx, "T1", "U1", "github", "octocat", token()))
	must(t, vOld.PutClient(ctx, "github", client()))
	before, err := st.Credential(ctx, "T1", "U1", "github")
	must(t, err)

	v := vault(t, st, keyring(t, cur, old), nil)
	must(t, v.PutToken(ctx, "T1", "U2", "github", "", token())) // already under cur
	rep, err := v.Rotate(ctx)
	if err != nil || rep.Resealed != 2 || rep.Current != 1 || len(rep.Failed) != 0 {
		t.Fatalf("Rotate = %+v, %v", rep, err)
	}
	after, err := st.Credential(ctx, "T1", "U1", "github")
	must(t, err)
	if id, _ := secretbox.KeyID(after.Sealed); id != cur.ID() || !after.Updated.Equal(before.Updated) || after.Account != "octocat" {
		t.Fatalf("after rotation: key %s (want %s), updated %v (want %v), account %q", id, cur.ID(), after.Updated, before.Updated, after.Account)
	}
	// The old key can go now.
	vNew := vault(t, st, keyring(t, cur), nil)
	if got, err := vNew.Token(ctx, "T1", "U1", "github"); err != nil || got.AccessToken != access {
		t.Fatalf("Token under the new key alone: %v, %v", got, err)
	}
	if got, err := vNew.Client(ctx, "github"); err != nil || got.Secret != secret {
		t.Fatalf("Client under the new key alone: %v, %v", got, err)
	}
	rep, err = vNew.Rotate(ctx)
	if err != nil || rep.Resealed != 0 || rep.Current != 3 {
		t.Fatalf("second Rotate = %+v, %v", rep, err)
	}

	// A record under a key the keyring lacks is reported and left alone.
	must(t, vault(t, st, keyring(t, lost), nil).PutToken(ctx, "T9", "U9", "github", "", token()))
	rep, err = vNew.Rotate(ctx)
	if err == nil || len(rep.Failed) != 1 || !strings.Contains(rep.Failed[0], "T9/U9/github") || !strings.Contains(rep.Failed[0], lost.ID()) {
		t.Fatalf("Rotate with a lost key = %+v, %v", rep, err)
	}
}

// A run at debug level, through every path of the Vault (stores, reads,
// flows, a wrong key, a moved record, a replayed state, a rotation), logs
// and returns no secret; the store file holds none either.
func TestDebugLogHoldsNoSecret(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, dir := openStore(t)
	old, cur := newKey(t), newKey(t)
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
			log.DebugContext(ctx, "vault error", "err", err)
		}
	}
	vOld := vault(t, st, keyring(t, old), log)
	must(t, vOld.PutToken(ctx, "T1", "U1", "github", "octocat", token()))
	must(t, vOld.PutClient(ctx, "github", client()))
	must(t, vOld.PutFlow(ctx, flow()))
	_, err := vOld.Token(ctx, "T1", "U1", "github")
	must(t, err)

	_, err = vault(t, st, keyring(t, cur), log).Token(ctx, "T1", "U1", "github")
	note(err)
	c, _ := st.Credential(ctx, "T1", "U1", "github")
	c.User = "U2"
	must(t, st.PutCredential(ctx, c))
	_, err = vOld.Token(ctx, "T1", "U2", "github")
	note(err)
	_, err = vOld.TakeFlow(ctx, state)
	must(t, err)
	_, err = vOld.TakeFlow(ctx, state)
	note(err)
	must(t, st.PutCredential(ctx, storage.Credential{CredentialInfo: storage.CredentialInfo{Team: "T1", User: "U3", Server: "github"}, Sealed: []byte("not a sealed value")}))
	_, err = vOld.Token(ctx, "T1", "U3", "github")
	note(err)
	must(t, st.DeleteCredential(ctx, "T1", "U3", "github"))
	v := vault(t, st, keyring(t, cur, old), log)
	_, err = v.Rotate(ctx)
	note(err) // U2's moved record does not open
	must(t, v.Delete(ctx, "T1", "U1", "github"))

	if len(errs) < 4 {
		t.Fatalf("only %d errors were provoked: %v", len(errs), errs)
	}
	text := logs.String()
	if !strings.Contains(text, "credential stored") || !strings.Contains(text, "flow taken") {
		t.Fatalf("the debug log lacks the Vault's records:\n%s", text)
	}
	for _, e := range errs {
		text += "\n" + e.Error() + fmt.Sprintf(" %v %+v", e, e)
	}
	db, err := os.ReadFile(filepath.Join(dir, bolt.DBName))
	must(t, err)
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("the debug log or an error holds %q:\n%s", s, text)
		}
		if bytes.Contains(db, []byte(s)) {
			t.Errorf("the store file holds %q", s)
		}
	}
}

// Revoke revokes the stored token at the revocation endpoint with the
// stored client; without a client it says so, without a token it is not
// found; the token stays until Delete.
func TestRevoke(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		got = append(got, r.PostForm.Get("token"))
		mu.Unlock()
	}))
	defer srv.Close()
	v := vault(t, st, keyring(t, newKey(t)), nil)
	must(t, v.PutToken(ctx, "T1", "U1", "github", "octocat", token()))
	if err := v.Revoke(ctx, srv.Client(), "T1", "U1", "github"); !errors.Is(err, credentials.ErrNoClient) {
		t.Fatalf("Revoke without a client: %v, want ErrNoClient", err)
	}
	c := client()
	c.RevocationURL = srv.URL + "/revoke"
	must(t, v.PutClient(ctx, "github", c))
	must(t, v.Revoke(ctx, srv.Client(), "T1", "U1", "github"))
	if !slices.Equal(got, []string{refresh, access}) {
		t.Fatalf("revoked %q, want the refresh then the access token", got)
	}
	if _, err := v.Token(ctx, "T1", "U1", "github"); err != nil {
		t.Fatalf("Revoke forgot the token: %v", err)
	}
	if err := v.Revoke(ctx, srv.Client(), "T1", "U2", "github"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Revoke of no token: %v, want ErrNotFound", err)
	}
}

package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/storage"
)

// The Credentials role's behaviours join the contract table.
func init() {
	behaviours = append(behaviours,
		behaviour{"CredentialsPutGetListDelete", credentialsPutGetListDelete},
		behaviour{"CredentialsRejectBadInput", credentialsRejectBadInput},
		behaviour{"FlowTakenOnce", flowTakenOnce},
		behaviour{"FlowExpires", flowExpires},
	)
}

// cred is a credential of (team, user, server) with sealed bytes.
func cred(team, user, server string, sealed string) storage.Credential {
	return storage.Credential{CredentialInfo: storage.CredentialInfo{Team: team, User: user, Server: server}, Sealed: []byte(sealed)}
}

func keysOf(list []storage.CredentialInfo) []string {
	var out []string
	for _, c := range list {
		out = append(out, c.Team+"/"+c.User+"/"+c.Server)
	}
	return out
}

// credentialsPutGetListDelete: a credential round-trips with its
// description, a put replaces, the listing filters by team, user and
// server in key order without the secret, and a delete forgets it.
func credentialsPutGetListDelete(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	if _, err := b.Credential(ctx, "T1", "U1", "github"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Credential of nothing: %v, want ErrNotFound", err)
	}
	expiry := time.Date(2026, 3, 1, 13, 0, 0, 123456789, time.UTC)
	updated := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	full := cred("T1", "U1", "github", "sealed-1")
	full.Account, full.Scopes, full.Expiry, full.Updated = "octocat", []string{"repo", "read:org"}, expiry, updated
	must(t, b.PutCredential(ctx, full))
	for _, c := range []storage.Credential{
		cred("T1", "U2", "github", "sealed-2"),
		cred("T1", storage.ServiceUser, "linear", "sealed-3"),
		cred("T2", "U1", "github", "sealed-4"),
		cred("", storage.ClientUser, "github", "sealed-5"),
	} {
		must(t, b.PutCredential(ctx, c))
	}
	checkCredentialReads(ctx, t, b, full)
	checkCredentialReplaced(ctx, t, b)
	checkCredentialLists(ctx, t, b)
	checkCredentialDeleted(ctx, t, b)
}

// checkCredentialReads: the full record reads back whole, and one put
// without times or scopes reads with the store's Updated.
func checkCredentialReads(ctx context.Context, t *testing.T, b storage.Backend, full storage.Credential) {
	expiry, updated := full.Expiry, full.Updated
	got, err := b.Credential(ctx, "T1", "U1", "github")
	must(t, err)
	if got.Account != "octocat" || !slices.Equal(got.Scopes, full.Scopes) || !got.Expiry.Equal(expiry) ||
		!got.Updated.Equal(updated) || string(got.Sealed) != "sealed-1" || got.Team != "T1" || got.User != "U1" || got.Server != "github" {
		t.Fatalf("Credential = %+v, want %+v", got, full)
	}
	before := time.Now().Add(-time.Hour)
	got, err = b.Credential(ctx, "T1", "U2", "github")
	must(t, err)
	if got.Updated.Before(before) || !got.Expiry.IsZero() || got.Scopes != nil || got.Account != "" {
		t.Fatalf("a credential put without times or scopes reads %+v: want Updated set by the store, no expiry, nil scopes", got)
	}

}

// checkCredentialReplaced: a put replaces the whole record.
func checkCredentialReplaced(ctx context.Context, t *testing.T, b storage.Backend) {
	// A put replaces the whole record.
	repl := cred("T1", "U1", "github", "sealed-1b")
	repl.Scopes = []string{"repo"}
	must(t, b.PutCredential(ctx, repl))
	got, err := b.Credential(ctx, "T1", "U1", "github")
	must(t, err)
	if string(got.Sealed) != "sealed-1b" || got.Account != "" || !got.Expiry.IsZero() || !slices.Equal(got.Scopes, []string{"repo"}) {
		t.Fatalf("after a replacing put: %+v", got)
	}

}

// checkCredentialLists: the listing filters by team, user and server, in
// key order, without the secret.
func checkCredentialLists(ctx context.Context, t *testing.T, b storage.Backend) {
	for _, tc := range []struct {
		f    storage.CredentialFilter
		want []string
	}{
		{storage.CredentialFilter{}, []string{"/(client)/github", "T1/(service)/linear", "T1/U1/github", "T1/U2/github", "T2/U1/github"}},
		{storage.CredentialFilter{Team: "T1"}, []string{"T1/(service)/linear", "T1/U1/github", "T1/U2/github"}},
		{storage.CredentialFilter{User: "U1"}, []string{"T1/U1/github", "T2/U1/github"}},
		{storage.CredentialFilter{Team: "T1", User: storage.ServiceUser}, []string{"T1/(service)/linear"}},
		{storage.CredentialFilter{Server: "github", Team: "T2"}, []string{"T2/U1/github"}},
		{storage.CredentialFilter{Server: "jira"}, nil},
	} {
		list, err := b.ListCredentials(ctx, tc.f)
		must(t, err)
		if got := keysOf(list); !slices.Equal(got, tc.want) {
			t.Errorf("ListCredentials(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
	list, err := b.ListCredentials(ctx, storage.CredentialFilter{Team: "T1", User: "U1"})
	must(t, err)
	if len(list) != 1 || !slices.Equal(list[0].Scopes, []string{"repo"}) || list[0].Updated.IsZero() {
		t.Fatalf("listed %+v", list)
	}

}

// checkCredentialDeleted: a delete forgets one credential, and only it.
func checkCredentialDeleted(ctx context.Context, t *testing.T, b storage.Backend) {
	must(t, b.DeleteCredential(ctx, "T1", "U1", "github"))
	if _, err := b.Credential(ctx, "T1", "U1", "github"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Credential after delete: %v, want ErrNotFound", err)
	}
	must(t, b.DeleteCredential(ctx, "T1", "U1", "github")) // none is fine
	if _, err := b.Credential(ctx, "T2", "U1", "github"); err != nil {
		t.Fatalf("the delete took another team's credential: %v", err)
	}
}

// credentialsRejectBadInput: keys, sealed bytes and flow arguments every
// store refuses alike, changing nothing.
func credentialsRejectBadInput(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	for name, c := range map[string]storage.Credential{
		"empty user":     cred("T", "", "github", "x"),
		"empty server":   cred("T", "U", "", "x"),
		"slash":          cred("T", "U", "git/hub", "x"),
		"slash in team":  cred("T/1", "U", "github", "x"),
		"no sealed":      cred("T", "U", "github", ""),
		"huge sealed":    cred("T", "U", "github", strings.Repeat("x", storage.MaxSealed+1)),
		"long user":      cred("T", strings.Repeat("u", storage.MaxKeyLen+1), "github", "x"),
		"empty scope":    {CredentialInfo: storage.CredentialInfo{Team: "T", User: "U", Server: "github", Scopes: []string{""}}, Sealed: []byte("x")},
		"long account":   {CredentialInfo: storage.CredentialInfo{Team: "T", User: "U", Server: "github", Account: strings.Repeat("a", storage.MaxKeyLen+1)}, Sealed: []byte("x")},
		"NUL in server":  cred("T", "U", "git\x00hub", "x"),
		"long team name": cred(strings.Repeat("t", storage.MaxKeyLen+1), "U", "github", "x"),
	} {
		if err := b.PutCredential(ctx, c); err == nil {
			t.Errorf("PutCredential with %s: accepted", name)
		}
	}
	if list, err := b.ListCredentials(ctx, storage.CredentialFilter{}); err != nil || len(list) != 0 {
		t.Fatalf("refused puts stored %v, %v", keysOf(list), err)
	}
	if _, err := b.Credential(ctx, "T", "", "github"); err == nil || errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Credential with an empty user: %v, want a refusal", err)
	}
	if err := b.DeleteCredential(ctx, "T", "U", "a/b"); err == nil {
		t.Error("DeleteCredential of a bad key: accepted")
	}
	exp := time.Now().Add(time.Hour)
	for name, err := range map[string]error{
		"empty state": b.PutFlow(ctx, "", []byte("x"), exp),
		"no sealed":   b.PutFlow(ctx, "s", nil, exp),
		"huge sealed": b.PutFlow(ctx, "s", make([]byte, storage.MaxSealed+1), exp),
		"no expiry":   b.PutFlow(ctx, "s", []byte("x"), time.Time{}),
	} {
		if err == nil {
			t.Errorf("PutFlow with %s: accepted", name)
		}
	}
	if _, err := b.TakeFlow(ctx, "s"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a refused PutFlow stored a flow: %v", err)
	}
	if _, err := b.TakeFlow(ctx, ""); err == nil || errors.Is(err, storage.ErrNotFound) {
		t.Errorf("TakeFlow of an empty state: %v, want a refusal", err)
	}
}

// flowTakenOnce: a flow is taken once, by one of many concurrent takers;
// a second take, or a take of a state never put, is ErrNotFound.
func flowTakenOnce(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	exp := time.Now().Add(10 * time.Minute)
	must(t, b.PutFlow(ctx, "state-1", []byte("sealed-flow"), exp))
	got, err := b.TakeFlow(ctx, "state-1")
	if err != nil || string(got) != "sealed-flow" {
		t.Fatalf("TakeFlow = %q, %v", got, err)
	}
	if _, err := b.TakeFlow(ctx, "state-1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second TakeFlow: %v, want ErrNotFound", err)
	}
	if _, err := b.TakeFlow(ctx, "never-put"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("TakeFlow of an unknown state: %v, want ErrNotFound", err)
	}
	// A put replaces a flow of the same state.
	must(t, b.PutFlow(ctx, "state-2", []byte("old"), exp))
	must(t, b.PutFlow(ctx, "state-2", []byte("new"), exp))
	if got, err := b.TakeFlow(ctx, "state-2"); err != nil || string(got) != "new" {
		t.Fatalf("TakeFlow after a replacing put = %q, %v", got, err)
	}

	must(t, b.PutFlow(ctx, "state-3", []byte("once"), exp))
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			sealed, err := b.TakeFlow(ctx, "state-3")
			switch {
			case err == nil && string(sealed) == "once":
				wins.Add(1)
			case !errors.Is(err, storage.ErrNotFound):
				t.Errorf("concurrent TakeFlow: %q, %v", sealed, err)
			}
		})
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d concurrent takers got the flow, want 1", n)
	}
}

// flowExpires: a flow past its expiry (on the store's clock) is not taken,
// and is gone; a live one beside it still is.
func flowExpires(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	c := clock(t, b)
	must(t, b.PutFlow(ctx, "short", []byte("a"), c.Now().Add(time.Minute)))
	must(t, b.PutFlow(ctx, "long", []byte("b"), c.Now().Add(time.Hour)))
	c.Add(2 * time.Minute)
	if _, err := b.TakeFlow(ctx, "short"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("TakeFlow of an expired flow: %v, want ErrNotFound", err)
	}
	c.Add(-2 * time.Minute) // back before the expiry: it was deleted all the same
	if _, err := b.TakeFlow(ctx, "short"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("an expired flow survived its take: %v", err)
	}
	c.Add(30 * time.Minute)
	if got, err := b.TakeFlow(ctx, "long"); err != nil || string(got) != "b" {
		t.Fatalf("TakeFlow of a live flow = %q, %v", got, err)
	}
}

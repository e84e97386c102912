package credentials_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
)

const (
	botTokenA  = "xoxe.xoxb-install-a-51c9e2"
	botRefresh = "xoxe-1-install-refresh-8e0d44"
	botTokenO  = "xoxb-install-org-7711aa"
)

// TestInstallations stores a workspace's install (with token rotation)
// and an org-wide one, finds each as a payload of its team would, lists
// them without secrets, and leaves no token in the clear in the file.
func TestInstallations(t *testing.T) {
	ctx := context.Background()
	st, dir := openStore(t)
	v := vault(t, st, keyring(t, newKey(t)), nil)
	exp := time.Now().Add(12 * time.Hour).Round(0).UTC()
	a := credentials.Installation{Team: "TA", TeamName: "Alpha", BotToken: botTokenA, BotUserID: "UBOTA", Scopes: []string{"chat:write"},
		RefreshToken: botRefresh, Expiry: exp, InstalledBy: "UA1"}
	org := credentials.Installation{Enterprise: "E1", EnterpriseInstall: true, BotToken: botTokenO, BotUserID: "UBOTO"}
	must(t, v.PutInstallation(ctx, a))
	must(t, v.PutInstallation(ctx, org))
	if err := v.PutInstallation(ctx, credentials.Installation{Team: "TX"}); err == nil {
		t.Fatal("an installation without a bot token was stored")
	}
	if err := v.PutInstallation(ctx, credentials.Installation{EnterpriseInstall: true, BotToken: "x"}); err == nil {
		t.Fatal("an org-wide installation without an enterprise id was stored")
	}

	got, err := v.Installation(ctx, "TA", "")
	must(t, err)
	if got.BotToken != botTokenA || got.RefreshToken != botRefresh || !got.Expiry.Equal(exp) || got.BotUserID != "UBOTA" {
		t.Fatalf("workspace install = %+v", got)
	}
	// A workspace of E1 without its own install is answered by the org's.
	got, err = v.Installation(ctx, "TB", "E1")
	must(t, err)
	if got.BotToken != botTokenO || !got.EnterpriseInstall {
		t.Fatalf("org install for TB = %+v", got)
	}
	// Neither its own nor its org's: not found.
	if _, err := v.Installation(ctx, "TC", "E2"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("TC/E2: %v, want ErrNotFound", err)
	}
	// A team id never answers as an org's install.
	if _, err := v.Installation(ctx, "E1", ""); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("E1 as a team: %v, want ErrNotFound", err)
	}

	list, err := v.ListInstallations(ctx)
	must(t, err)
	if len(list) != 2 || list[0].ID != "E1" || !list[0].Org || list[1].ID != "TA" || list[1].Org || !list[1].Expiry.Equal(exp) {
		t.Fatalf("list = %+v", list)
	}

	must(t, v.DeleteInstallation(ctx, "E1", true))
	if _, err := v.Installation(ctx, "TB", "E1"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("after uninstall: %v, want ErrNotFound", err)
	}
	st.Close()
	data, err := os.ReadFile(filepath.Join(dir, bolt.DBName))
	must(t, err)
	for _, s := range []string{botTokenA, botRefresh, botTokenO} {
		if bytes.Contains(data, []byte(s)) {
			t.Fatalf("the store file holds a token in the clear")
		}
	}
	if !bytes.Contains(data, []byte("UBOTA")) {
		t.Fatal("the store file does not hold the listed bot user: the clear-text check proves nothing")
	}
}

// TestInstallationsRotate: agentbot rotate-key re-seals installations
// with the MCP credentials, so the old key can go; a record moved to
// another workspace's key does not open.
func TestInstallationsRotate(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	old, cur := newKey(t), newKey(t)
	must(t, vault(t, st, keyring(t, old), nil).PutInstallation(ctx, credentials.Installation{Team: "TA", BotToken: botTokenA, BotUserID: "UBA"}))
	rep, err := vault(t, st, keyring(t, cur, old), nil).Rotate(ctx)
	if err != nil || rep.Resealed != 1 {
		t.Fatalf("Rotate = %+v, %v", rep, err)
	}
	v := vault(t, st, keyring(t, cur), nil)
	in, err := v.Installation(ctx, "TA", "")
	if err != nil || in.BotToken != botTokenA {
		t.Fatalf("under the new key alone: %v", err)
	}
	c, err := st.Credential(ctx, "TA", credentials.InstallUser, "slack")
	must(t, err)
	c.Team = "TB" // a record copied to another workspace
	must(t, st.PutCredential(ctx, c))
	if _, err := v.Installation(ctx, "TB", ""); err == nil {
		t.Fatal("an installation moved to another workspace opened")
	}
}

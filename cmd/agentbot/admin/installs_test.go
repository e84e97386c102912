package admin_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"agentbot/bot/fakeslack"
	"agentbot/cmd/agentbot/admin"
	"agentbot/cmd/agentbot/stores"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// TestInstallsListAndRevoke lists a workspace's and an organization's
// installations without their tokens, and revokes one: Slack no longer
// takes its token, and the store no longer holds it.
func TestInstallsListAndRevoke(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	raw := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(raw)
	env := map[string]string{"AGENTBOT_SECRET_KEY": base64.StdEncoding.EncodeToString(raw)}
	getenv := func(k string) string { return env[k] }
	kr, err := secretbox.Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := credentials.New(st, kr, nil)
	fs := fakeslack.New(t)
	fs.AddInstall(fakeslack.Install{Team: "TA", BotToken: "xoxb-list-a"})
	for _, in := range []credentials.Installation{{Team: "TA", BotToken: "xoxb-list-a", BotUserID: "UBA", Scopes: []string{"chat:write"}},
		{Enterprise: "E1", EnterpriseInstall: true, BotToken: "xoxb-list-e1", BotUserID: "UBE"}} {
		if err := v.PutInstallation(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	var out, errb bytes.Buffer
	o := &admin.Installs{Stdout: &out, Stderr: &errb, Store: stores.Store{DataDir: dir}, Getenv: getenv, APIURL: fs.APIURL()}
	if code := o.Run(ctx, []string{"list"}); code != 0 {
		t.Fatalf("list: %d %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "TA  ") || !strings.Contains(out.String(), "organization") || !strings.Contains(out.String(), "UBA") ||
		strings.Contains(out.String(), "xoxb-") {
		t.Fatalf("list:\n%s", out.String())
	}
	out.Reset()
	if code := o.Run(ctx, []string{"revoke", "TA"}); code != 0 {
		t.Fatalf("revoke: %d %s", code, errb.String())
	}
	if _, err := slack.New("xoxb-list-a", slack.OptionAPIURL(fs.APIURL())).AuthTest(); err == nil {
		t.Fatal("Slack still takes the revoked token")
	}
	if code := o.Run(ctx, []string{"revoke", "TA"}); code != 1 || !strings.Contains(errb.String(), "no installation TA") {
		t.Fatalf("revoke again: %d %s", code, errb.String())
	}
	st, err = bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, _ = credentials.New(st, kr, nil)
	if _, err := v.Installation(ctx, "TA", ""); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("TA after revoke: %v", err)
	}
	if _, err := v.Installation(ctx, "TX", "E1"); err != nil {
		t.Fatalf("the organization's install went too: %v", err)
	}
}

package main

import (
	"net"
	"testing"

	"agentbot/engine/fakemodel"
)

// A model error in the terminal: one "model call" prefix, then a hint line
// naming the setting to fix, for each mistake of a first hour; check says
// the same.
func TestChatModelErrorHints(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	for _, tc := range []struct {
		name  string
		setup func(fm *fakemodel.Server, vars map[string]string)
		want  []string
	}{
		{"wrong key", func(fm *fakemodel.Server, vars map[string]string) { fm.RequireKey("sk-the-right-key") },
			[]string{"model call: status 401", "  hint: the endpoint refused the API key: check OPENAI_API_KEY"}},
		{"unknown model", func(fm *fakemodel.Server, vars map[string]string) {
			fm.SetModels("gpt-a", "gpt-b")
			fm.RefuseUnknownModels()
		}, []string{"model call: status 404", `  hint: the endpoint does not offer the model "m": check AGENTBOT_MODEL; it offers gpt-a, gpt-b`}},
		{"quota", func(fm *fakemodel.Server, vars map[string]string) {
			fm.Handle(func(fakemodel.Request) fakemodel.Reply {
				return fakemodel.Reply{Status: 429, ErrorBody: fakemodel.InsufficientQuotaBody}
			})
		}, []string{"model call: status 429: You exceeded your current quota", "  hint: the account is out of quota or credit, so the call was not retried"}},
		{"nothing listening", func(fm *fakemodel.Server, vars map[string]string) { vars["OPENAI_BASE_URL"] = closed },
			[]string{"  hint: nothing answers at " + closed + ": check OPENAI_BASE_URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := fakemodel.NewTB(t)
			vars := chatVars(t, fm)
			tc.setup(fm, vars)
			r := runCmd(t, vars, "*brief\n", "chat", "--agent", "product-lead")
			for _, w := range tc.want {
				contains(t, "stderr", r.stderr, w)
			}
			if n := fm.Calls(); n > 1 {
				t.Errorf("%d model calls for one failed turn, want 1 (no retry)", n)
			}
			c := runCmd(t, vars, "", "check", "--no-slack")
			contains(t, "check", c.stdout+c.stderr, tc.want[len(tc.want)-1][len("  hint: "):])
		})
	}
}

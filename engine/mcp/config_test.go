package mcp

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentbot/engine"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func parse(t *testing.T, y string, env map[string]string) (*Config, []Problem) {
	t.Helper()
	cfg, probs, err := ParseConfig([]byte(y), envOf(env))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return cfg, probs
}

func hasProblem(probs []Problem, server, substr string) bool {
	for _, p := range probs {
		if p.Server == server && strings.Contains(p.Reason, substr) {
			return true
		}
	}
	return false
}

func TestLoadConfigValid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.yaml")
	y := `
max_result_bytes: 1000
servers:
  - name: files
    transport: stdio
    command: /bin/files
    args: [--root, /data]
    env:
      TOKEN: {env: FILES_TOKEN}
      URL: "https://x/${FILES_TOKEN}"
    timeout: 5s
    include: ["read_*", "list"]
    exclude: ["read_secret"]
    policy:
      read_dangerous: ask
      "*": auto
  - name: gh
    transport: http
    url: https://mcp.example.com/mcp
    headers:
      Authorization: "Bearer ${GH_TOKEN}"
`
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, probs, err := LoadConfig(path, envOf(map[string]string{"FILES_TOKEN": "ft", "GH_TOKEN": "s3cr3t-token"}))
	if err != nil || len(probs) != 0 {
		t.Fatalf("LoadConfig: %v %v", err, probs)
	}
	if cfg.MaxResultBytes != 1000 || len(cfg.Servers) != 2 {
		t.Fatalf("cfg = %+v", cfg)
	}
	f := cfg.Servers[0]
	if f.Name != "files" || f.Transport != TransportStdio || f.Command != "/bin/files" || len(f.Args) != 2 ||
		f.Timeout != 5*time.Second || f.Env["TOKEN"].Reveal() != "ft" || f.Env["URL"].Reveal() != "https://x/ft" {
		t.Errorf("files = %+v", f)
	}
	if len(f.Policy) != 2 || f.Policy[0] != (PolicyRule{"read_dangerous", PolicyAsk}) || f.Policy[1].Glob != "*" {
		t.Errorf("policy rules = %+v, want file order", f.Policy)
	}
	g := cfg.Servers[1]
	if g.Transport != TransportHTTP || g.Headers["Authorization"].Reveal() != "Bearer s3cr3t-token" || g.Timeout != DefaultTimeout {
		t.Errorf("gh = %+v", g)
	}
	// A Server printed any way shows no secret.
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, g); strings.Contains(s, "s3cr3t") {
			t.Errorf("%s of a Server shows the secret: %s", verb, s)
		}
	}
}

func TestLoadConfigEmptyAndBadFiles(t *testing.T) {
	cfg, probs := parse(t, "", nil)
	if len(cfg.Servers) != 0 || len(probs) != 0 || cfg.MaxResultBytes != DefaultMaxResultBytes {
		t.Errorf("empty file: %+v %v", cfg, probs)
	}
	if _, _, err := LoadConfig(filepath.Join(t.TempDir(), "none.yaml"), nil); err == nil {
		t.Error("missing file: no error")
	}
	if _, _, err := ParseConfig([]byte("servers: {a: [}"), nil); err == nil {
		t.Error("bad YAML: no error")
	}
	if _, _, err := ParseConfig([]byte("serverz: []"), nil); err == nil {
		t.Error("unknown top-level key: no error")
	}
}

func TestLoadConfigMissingEnvDisablesOnlyThatServer(t *testing.T) {
	cfg, probs := parse(t, `
servers:
  - name: a
    transport: http
    url: http://127.0.0.1:1/mcp
    headers: {Authorization: "Bearer ${MISSING_TOKEN}"}
  - name: b
    transport: stdio
    command: x
    env: {K: {env: ALSO_MISSING}}
  - name: c
    transport: stdio
    command: x
`, nil)
	if !hasProblem(probs, "a", "MISSING_TOKEN is not set") || !hasProblem(probs, "b", "ALSO_MISSING is not set") {
		t.Errorf("problems = %v", probs)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Name != "c" {
		t.Errorf("servers = %+v, want only c", cfg.Servers)
	}
	names, rp := cfg.Resolve([]string{"c", "a"})
	if len(names) != 1 || names[0] != "c" || !hasProblem(rp, "a", "disabled") {
		t.Errorf("Resolve = %v %v", names, rp)
	}
}

func TestLoadConfigLiteralSecretRefused(t *testing.T) {
	cfg, probs := parse(t, `
servers:
  - name: a
    transport: http
    url: http://127.0.0.1:1/mcp
    headers: {Authorization: "Bearer s3cr3t-token"}
  - name: b
    transport: stdio
    command: x
    env: {TOKEN: s3cr3t-token}
  - name: c
    transport: http
    url: http://user:s3cr3t-token@127.0.0.1:1/mcp
`, nil)
	if !hasProblem(probs, "a", "literal value is refused") || !hasProblem(probs, "b", "literal value is refused") ||
		!hasProblem(probs, "c", "user:password") {
		t.Errorf("problems = %v", probs)
	}
	if len(cfg.Servers) != 0 {
		t.Errorf("servers = %+v, want none", cfg.Servers)
	}
	for _, p := range probs {
		if strings.Contains(p.String(), "s3cr3t") {
			t.Errorf("problem shows the secret: %s", p)
		}
	}
}

func TestLoadConfigBadEntries(t *testing.T) {
	cfg, probs := parse(t, `
servers:
  - name: globs
    transport: stdio
    command: x
    include: ["[a-"]
  - name: pol
    transport: stdio
    command: x
    policy: {"*": maybe}
  - name: Bad.Name
    transport: stdio
    command: x
  - name: dup
    transport: stdio
    command: x
  - name: dup
    transport: stdio
    command: y
  - name: notrans
    command: x
  - name: weird
    transport: carrier-pigeon
  - name: mixed
    transport: http
    url: http://127.0.0.1/mcp
    command: x
  - name: nourl
    transport: http
  - name: typo
    transport: stdio
    command: x
    comand: y
  - name: slow
    transport: stdio
    command: x
    timeout: soon
  - name: ok
    transport: stdio
    command: x
`, nil)
	for _, want := range []struct{ server, reason string }{
		{"globs", "bad tool glob"},
		{"pol", "want auto or ask"},
		{"#3", "name \"Bad.Name\""},
		{"dup", "comes earlier"},
		{"notrans", "transport is missing"},
		{"weird", "unknown transport"},
		{"mixed", "belong to the stdio transport"},
		{"nourl", "needs a url"},
		{"typo", "unknown key \"comand\""},
		{"slow", "not a positive duration"},
	} {
		if !hasProblem(probs, want.server, want.reason) {
			t.Errorf("no problem %q for %s in %v", want.reason, want.server, probs)
		}
	}
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "dup,ok" {
		t.Errorf("usable servers = %v, want dup (the first) and ok", names)
	}
}

func TestResolveUnknownServer(t *testing.T) {
	cfg, _ := parse(t, "servers: [{name: a, transport: stdio, command: x}]", nil)
	names, probs := cfg.Resolve([]string{"a", "nope", "a"})
	if len(names) != 1 || names[0] != "a" {
		t.Errorf("names = %v", names)
	}
	if len(probs) != 1 || !hasProblem(probs, "nope", "no such server") {
		t.Errorf("problems = %v", probs)
	}
}

func TestToolName(t *testing.T) {
	if got := toolName("srv", "read.file/x"); got != "srv__read_file_x" {
		t.Errorf("toolName = %q", got)
	}
	long := toolName("srv", strings.Repeat("x", 100))
	long2 := toolName("srv", strings.Repeat("x", 99)+"y")
	if len(long) != 64 || long == long2 {
		t.Errorf("long names %q %q: want 64 characters and distinct", long, long2)
	}
}

func TestCutUTF8(t *testing.T) {
	s := "aé" // a, then a two-byte character
	if got := engine.CutUTF8(s, 2); got != "a" {
		t.Errorf("CutUTF8 = %q, want no split character", got)
	}
}

func TestSecretHiddenFromSlogAndJSON(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	s := Server{Name: "x", Headers: map[string]Secret{"A": "s3cr3t-token"}}
	log.Info("server", "secret", Secret("s3cr3t-token"), "server", s, "headers", s.Headers)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if out := buf.String() + string(b); strings.Contains(out, "s3cr3t") || !strings.Contains(out, "[redacted]") {
		t.Errorf("secret shown: %s", out)
	}
}

func TestConfigIdentity(t *testing.T) {
	y := `
servers:
  - name: open
    transport: http
    url: https://a.example.com/mcp
  - name: hdr
    transport: http
    url: https://b.example.com/mcp
    headers:
      Authorization: "Bearer ${TOK}"
  - name: gh
    transport: http
    url: https://c.example.com/mcp
    identity: service
    oauth:
      client_id: agentbot
      client_secret: {env: GH_SECRET}
      scopes: [repo, read:org]
  - name: lin
    transport: http
    url: https://d.example.com/mcp
    identity: user
  - name: bad-identity
    transport: http
    url: https://e.example.com/mcp
    identity: everyone
  - name: static-no-header
    transport: http
    url: https://f.example.com/mcp
    identity: static
  - name: user-with-header
    transport: http
    url: https://g.example.com/mcp
    identity: user
    headers:
      Authorization: "Bearer ${TOK}"
  - name: secret-no-id
    transport: http
    url: https://h.example.com/mcp
    identity: service
    oauth:
      client_secret: {env: GH_SECRET}
  - name: literal-secret
    transport: http
    url: https://i.example.com/mcp
    identity: service
    oauth:
      client_id: x
      client_secret: hunter22
  - name: unset-secret
    transport: http
    url: https://j.example.com/mcp
    identity: service
    oauth:
      client_id: x
      client_secret: {env: NOPE}
  - name: oauth-typo
    transport: http
    url: https://k.example.com/mcp
    oauth:
      clientid: x
  - name: stdio-identity
    transport: stdio
    command: /bin/x
    identity: user
`
	cfg, probs := parse(t, y, map[string]string{"TOK": "tok-value", "GH_SECRET": "gh-secret-value"})
	want := map[string]string{"open": IdentityUser, "hdr": IdentityStatic, "gh": IdentityService, "lin": IdentityUser}
	if len(cfg.Servers) != len(want) {
		t.Fatalf("servers = %d, want %d; problems %v", len(cfg.Servers), len(want), probs)
	}
	for _, s := range cfg.Servers {
		if s.Identity != want[s.Name] || IdentityOf(&s) != want[s.Name] {
			t.Errorf("%s: identity %q, want %q", s.Name, s.Identity, want[s.Name])
		}
	}
	gh, _ := cfg.Server("gh")
	if gh.OAuth.ClientID != "agentbot" || gh.OAuth.ClientSecret.Reveal() != "gh-secret-value" || strings.Join(gh.OAuth.Scopes, " ") != "repo read:org" {
		t.Errorf("gh oauth = %+v", gh.OAuth)
	}
	if !slicesContains(gh.secrets(), "gh-secret-value") {
		t.Error("the client secret is not among the values scrubbed from errors")
	}
	for server, sub := range map[string]string{
		"bad-identity":     `unknown identity "everyone"`,
		"static-no-header": "identity static needs headers",
		"user-with-header": "gets its Authorization header by OAuth",
		"secret-no-id":     "client_secret needs a client_id",
		"literal-secret":   "a literal value is refused",
		"unset-secret":     "NOPE is not set",
		"oauth-typo":       `unknown key "clientid"`,
		"stdio-identity":   "belong to the http transport",
	} {
		if !hasProblem(probs, server, sub) {
			t.Errorf("no problem %q for %s in %v", sub, server, probs)
		}
	}
	for _, p := range probs {
		if strings.Contains(p.Reason, "hunter22") || strings.Contains(p.Reason, "gh-secret-value") {
			t.Errorf("a problem shows a secret: %s", p)
		}
	}
	if got := IdentityOf(&Server{Transport: TransportStdio}); got != "" {
		t.Errorf("stdio identity = %q", got)
	}
	if got := IdentityOf(&Server{Transport: TransportHTTP}); got != IdentityUser {
		t.Errorf("code-built http identity = %q, want user", got)
	}
}

func slicesContains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// An oauth client_key is a PEM private key by env reference: parsed when
// the config loads (its algorithm from its type, client_key_id as its
// kid), the settings' credentials then authenticate with it; a key
// without a client id, beside a secret, that does not parse, or written
// literally is a problem that quotes nothing of it.
func TestConfigClientKey(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	body := strings.Split(keyPEM, "\n")[1]
	notKey := strings.Replace(keyPEM, body, strings.Repeat("B", len(body)), 1)
	y := `
servers:
  - name: jwt
    transport: http
    url: https://a.example.com/mcp
    identity: service
    oauth:
      client_id: agentbot
      client_key: {env: KEY}
      client_key_id: k-2026
  - name: key-no-id
    transport: http
    url: https://b.example.com/mcp
    identity: service
    oauth:
      client_key: {env: KEY}
  - name: key-and-secret
    transport: http
    url: https://c.example.com/mcp
    identity: service
    oauth:
      client_id: agentbot
      client_secret: {env: SECRET}
      client_key: {env: KEY}
  - name: kid-no-key
    transport: http
    url: https://d.example.com/mcp
    identity: service
    oauth:
      client_id: agentbot
      client_secret: {env: SECRET}
      client_key_id: k-1
  - name: not-a-key
    transport: http
    url: https://e.example.com/mcp
    identity: service
    oauth:
      client_id: agentbot
      client_key: {env: NOT_KEY}
  - name: literal-key
    transport: http
    url: https://f.example.com/mcp
    identity: service
    oauth:
      client_id: agentbot
      client_key: "-----BEGIN PRIVATE KEY-----"
  - name: unset-key
    transport: http
    url: https://g.example.com/mcp
    identity: service
    oauth:
      client_id: agentbot
      client_key: {env: NOPE}
`
	cfg, probs := parse(t, y, map[string]string{"KEY": keyPEM, "NOT_KEY": notKey, "SECRET": "a-secret-value"})
	if len(cfg.Servers) != 1 {
		t.Fatalf("servers = %d, want 1; problems %v", len(cfg.Servers), probs)
	}
	s, _ := cfg.Server("jwt")
	k := s.OAuth.ClientKey
	if k == nil || k.Algorithm() != "ES256" || k.KeyID() != "k-2026" || !k.Public().(*ecdsa.PublicKey).Equal(&ec.PublicKey) {
		t.Fatalf("jwt oauth = %+v", s.OAuth)
	}
	cr := s.OAuth.Credentials()
	if !s.OAuth.Confidential() || cr == nil || cr.ClientID != "agentbot" || cr.ClientKey != k || cr.ClientSecret != "" {
		t.Fatalf("credentials = %v", cr)
	}
	if (OAuthSettings{}).Credentials() != nil || (OAuthSettings{ClientID: "x"}).Confidential() {
		t.Fatal("settings without a client id or a secret or key are confidential")
	}
	for server, sub := range map[string]string{
		"key-no-id":      "client_key needs a client_id",
		"key-and-secret": "client_secret or client_key (private_key_jwt), not both",
		"kid-no-key":     "client_key_id names the key of client_key, which is not set",
		"not-a-key":      `client_key: the PEM "PRIVATE KEY" block does not parse`,
		"literal-key":    "a literal value is refused",
		"unset-key":      "NOPE is not set",
	} {
		if !hasProblem(probs, server, sub) {
			t.Errorf("no problem %q for %s in %v", sub, server, probs)
		}
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", "server", *s, "oauth", s.OAuth)
	fmt.Fprintf(&buf, "%v %+v %#v", s.OAuth, *s, probs)
	if out := buf.String(); strings.Contains(out, body[:16]) || strings.Contains(out, ec.D.String()) || strings.Contains(out, "a-secret-value") {
		t.Fatalf("the key shows:\n%s", out)
	}
}

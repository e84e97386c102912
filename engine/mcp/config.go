package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"agentbot/engine"
	"agentbot/engine/mcp/oauth"
)

// Defaults for values the config file may leave out.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMaxTimeout     = 10 * time.Minute
	DefaultMaxResultBytes = 64 << 10
	maxServerNameLen      = 32
)

// Transport names accepted in the config file.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Identities an HTTP server's calls act as (the config's identity key).
const (
	// IdentityUser: each person authorizes their own account (OAuth); a
	// call acts as the person whose message started the turn. The default
	// for an HTTP server without headers.
	IdentityUser = "user"
	// IdentityService: one identity for everyone, obtained by an
	// Authorizer (client credentials, or authorized once by an admin).
	IdentityService = "service"
	// IdentityStatic: the configured headers (a token from the
	// environment), as is; the default for an HTTP server with headers.
	IdentityStatic = "static"
)

// Approval policies of a tool: the engine's, which applies them.
const (
	PolicyAuto = engine.PolicyAuto // the tool runs without asking
	PolicyAsk  = engine.PolicyAsk  // a person approves each call
)

// Problem is one thing wrong with the MCP configuration or a server; the named
// server is unusable, everything else keeps working.
type Problem struct {
	Server string // the server concerned; empty for the file as a whole
	Reason string // what is wrong, free of secrets
	// Unavailable is set when none of the server's tools can be offered
	// (unknown, disabled, unreachable, still connecting).
	Unavailable bool
}

func (p Problem) String() string {
	if p.Server == "" {
		return "mcp: " + p.Reason
	}
	return "mcp server " + p.Server + ": " + p.Reason
}

// Secret is a value read from the environment for a header or a child's
// environment. It prints as "[redacted]" in every fmt verb and in slog.
type Secret string

// String hides the value.
func (Secret) String() string { return "[redacted]" }

// GoString hides the value.
func (Secret) GoString() string { return "[redacted]" }

// MarshalJSON hides the value.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// LogValue hides the value from slog.
func (Secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// Reveal returns the value itself, for the one place that needs it.
func (s Secret) Reveal() string { return string(s) }

// PolicyRule sets the approval policy of the tools whose name matches Glob.
type PolicyRule struct {
	Glob   string
	Policy string // PolicyAuto or PolicyAsk
}

// Server is one usable MCP server from the config file, its secret references
// already resolved.
type Server struct {
	Name      string
	Transport string // TransportStdio or TransportHTTP
	// stdio
	Command string
	Args    []string
	Env     map[string]Secret // added to a minimal environment (see childEnv)
	// http (streamable HTTP)
	URL     string
	Headers map[string]Secret
	// Identity is who the server's calls act as: IdentityUser,
	// IdentityService or IdentityStatic; empty (a Server built in code)
	// is IdentityOf's default.
	Identity string
	// IdentityImplied: the config wrote no identity, and Identity is
	// IdentityOf's default.
	IdentityImplied bool
	// OAuth are the server's OAuth settings for identity user or service.
	OAuth OAuthSettings
	// Timeout bounds connecting, listing, and each call between two signs
	// of life: a call's progress notification gives it Timeout again, up
	// to MaxTimeout in all.
	Timeout    time.Duration
	MaxTimeout time.Duration
	// Include and Exclude filter the server's tools by name (path.Match globs);
	// an empty Include means every tool, Exclude wins.
	Include, Exclude []string
	// Policy rules in file order; the first match wins.
	Policy []PolicyRule
}

// OAuthSettings are an HTTP server's OAuth settings (the config's oauth
// key), for identity user or service. All are optional: without a client
// id the client registers itself (client ID metadata document, or
// dynamic registration).
type OAuthSettings struct {
	// ClientID is a client id registered with the server's authorization
	// server beforehand.
	ClientID string
	// ClientSecret is that client's secret, read from the environment;
	// empty for a public client. With identity service and an
	// authorization server that offers the client credentials grant, the
	// service identity is obtained with it.
	ClientSecret Secret
	// ClientKey is that client's private key, instead of a secret (the
	// config's client_key, a PEM read from the environment, and
	// client_key_id): the client authenticates with private_key_jwt, a
	// signed assertion for each token request, for the client credentials
	// grant as for the others. It prints and logs redacted.
	ClientKey *oauth.ClientKey
	// Scopes replace the scopes the server asks for, when set.
	Scopes []string
}

// Confidential reports whether the settings hold a client id with a
// secret or a private key: with identity service, the service identity
// is obtained with the client credentials grant where the authorization
// server offers it.
func (o OAuthSettings) Confidential() bool { return o.credentials().Confidential() }

// Credentials are the pre-registered credentials the settings give, for
// package oauth; nil without a client id.
func (o OAuthSettings) Credentials() *oauth.Credentials {
	if o.ClientID == "" {
		return nil
	}
	c := o.credentials()
	return &c
}

func (o OAuthSettings) credentials() oauth.Credentials {
	return oauth.Credentials{ClientID: o.ClientID, ClientSecret: o.ClientSecret.Reveal(), ClientKey: o.ClientKey}
}

// IdentityOf is who s's calls act as: its Identity when set, else
// IdentityStatic for a server with headers and IdentityUser for another
// HTTP server; empty for a stdio server.
func IdentityOf(s *Server) string {
	switch {
	case s.Transport != TransportHTTP:
		return ""
	case s.Identity != "":
		return s.Identity
	case len(s.Headers) > 0:
		return IdentityStatic
	}
	return IdentityUser
}

// secrets lists the resolved secret values of s, to scrub them from errors.
func (s *Server) secrets() []string {
	var out []string
	if len(s.OAuth.ClientSecret) >= 4 {
		out = append(out, string(s.OAuth.ClientSecret))
	}
	for _, m := range []map[string]Secret{s.Env, s.Headers} {
		for _, v := range m {
			if len(v) >= 4 { // shorter values would scrub ordinary text
				out = append(out, string(v))
			}
		}
	}
	return out
}

// Config is a loaded MCP config file.
type Config struct {
	// Servers are the usable servers, in file order.
	Servers []Server
	// MaxResultBytes caps the text of one tool result.
	MaxResultBytes int
	// disabled maps a named server with problems to its first problem.
	disabled map[string]string
}

// Server returns the usable server called name.
func (c *Config) Server(name string) (*Server, bool) {
	if c == nil {
		return nil, false
	}
	for i := range c.Servers {
		if c.Servers[i].Name == name {
			return &c.Servers[i], true
		}
	}
	return nil, false
}

// Resolve checks an agent's list of MCP server names: it returns the usable
// ones in order (duplicates dropped) and a problem for each name that is
// unknown or disabled by a config problem.
func (c *Config) Resolve(names []string) ([]string, []Problem) {
	var ok []string
	var probs []Problem
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		if _, found := c.Server(n); found {
			ok = append(ok, n)
			continue
		}
		if c != nil {
			if why, dis := c.disabled[n]; dis {
				probs = append(probs, Problem{Server: n, Reason: "disabled by a config problem: " + why})
				continue
			}
		}
		probs = append(probs, Problem{Server: n, Reason: "no such server in the MCP config"})
	}
	return ok, probs
}

var serverNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// refRE matches a ${VAR} reference inside a string value.
var refRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

var knownKeys = map[string]bool{
	"name": true, "transport": true, "command": true, "args": true, "env": true,
	"url": true, "headers": true, "timeout": true, "max_timeout": true, "include": true, "exclude": true, "policy": true,
	"identity": true, "oauth": true,
}

type fileConfig struct {
	Servers        []yaml.Node `yaml:"servers"`
	MaxResultBytes int         `yaml:"max_result_bytes"`
}

type rawServer struct {
	Name       string               `yaml:"name"`
	Transport  string               `yaml:"transport"`
	Command    string               `yaml:"command"`
	Args       []string             `yaml:"args"`
	Env        map[string]yaml.Node `yaml:"env"`
	URL        string               `yaml:"url"`
	Headers    map[string]yaml.Node `yaml:"headers"`
	Timeout    string               `yaml:"timeout"`
	MaxTimeout string               `yaml:"max_timeout"`
	Include    []string             `yaml:"include"`
	Exclude    []string             `yaml:"exclude"`
	Policy     yaml.Node            `yaml:"policy"`
	Identity   string               `yaml:"identity"`
	OAuth      yaml.Node            `yaml:"oauth"`
}

// LoadConfig reads the MCP config file at path. Secrets are looked up with
// getenv (os.Getenv when nil).
//
// The error is for a file that cannot be read or is not YAML of the right
// shape at the top. Everything wrong with one server is a Problem and that
// server is left out of Config.Servers; the others keep working.
//
// Secrets are only ever written as references: a header or env value is
// either {env: VAR} or a string holding ${VAR} references (text around them
// is kept, as in "Bearer ${TOKEN}"). A plain string with no reference is
// refused as a possible literal secret, and so is a URL with a user:password
// part. A reference to an unset or empty variable disables the server.
func LoadConfig(path string, getenv func(string) string) (*Config, []Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read mcp config: %w", err)
	}
	cfg, probs, err := ParseConfig(data, getenv)
	if err != nil {
		return nil, nil, fmt.Errorf("mcp config %s: %w", path, err)
	}
	return cfg, probs, nil
}

// ParseConfig is LoadConfig on the file's bytes.
func ParseConfig(data []byte, getenv func(string) string) (*Config, []Problem, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var fc fileConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("parse: %w", err)
	}
	cfg := &Config{MaxResultBytes: fc.MaxResultBytes, disabled: map[string]string{}}
	var probs []Problem
	if cfg.MaxResultBytes < 0 {
		return nil, nil, fmt.Errorf("max_result_bytes: %d is negative", cfg.MaxResultBytes)
	}
	if cfg.MaxResultBytes == 0 {
		cfg.MaxResultBytes = DefaultMaxResultBytes
	}
	seen := map[string]bool{}
	for i := range fc.Servers {
		srv, label, reasons := parseServer(&fc.Servers[i], i, getenv)
		if len(reasons) == 0 && seen[srv.Name] {
			reasons = append(reasons, "a server of this name comes earlier in the file; this one is left out")
		}
		if label != "" && serverNameRE.MatchString(label) {
			seen[label] = true
		}
		if len(reasons) > 0 {
			for _, r := range reasons {
				probs = append(probs, Problem{Server: label, Reason: r})
			}
			if _, dup := cfg.Server(label); !dup {
				if _, already := cfg.disabled[label]; !already {
					cfg.disabled[label] = reasons[0]
				}
			}
			continue
		}
		cfg.Servers = append(cfg.Servers, srv)
	}
	return cfg, probs, nil
}

// parseServer validates one server entry; label names it in problems.
func parseServer(node *yaml.Node, idx int, getenv func(string) string) (Server, string, []string) {
	var reasons []string
	label := fmt.Sprintf("#%d", idx+1)
	if node.Kind != yaml.MappingNode {
		return Server{}, label, []string{"entry is not a mapping"}
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		k := node.Content[i].Value
		if k == "name" {
			label = node.Content[i+1].Value
		}
		if !knownKeys[k] {
			reasons = append(reasons, fmt.Sprintf("unknown key %q (line %d)", k, node.Content[i].Line))
		}
	}
	var raw rawServer
	if err := node.Decode(&raw); err != nil {
		return Server{}, label, append(reasons, "bad entry: "+err.Error())
	}
	s := Server{
		Name: raw.Name, Transport: raw.Transport, Command: raw.Command, Args: raw.Args,
		URL: raw.URL, Include: raw.Include, Exclude: raw.Exclude, Timeout: DefaultTimeout, MaxTimeout: DefaultMaxTimeout,
	}
	switch {
	case raw.Name == "":
		reasons = append(reasons, "name is missing")
	case len(raw.Name) > maxServerNameLen || !serverNameRE.MatchString(raw.Name) || strings.Contains(raw.Name, "__"):
		reasons = append(reasons, fmt.Sprintf("name %q must be 1-%d characters of a-z 0-9 _ - starting with a letter or digit, without \"__\"", raw.Name, maxServerNameLen))
		label = fmt.Sprintf("#%d", idx+1)
	}
	reasons = append(reasons, checkTransport(&raw)...)
	reasons = append(reasons, parseDuration("timeout", raw.Timeout, "30s", &s.Timeout)...)
	reasons = append(reasons, parseDuration("max_timeout", raw.MaxTimeout, "10m", &s.MaxTimeout)...)
	s.MaxTimeout = max(s.MaxTimeout, s.Timeout)
	for _, g := range append(append([]string{}, raw.Include...), raw.Exclude...) {
		if err := checkGlob(g); err != nil {
			reasons = append(reasons, err.Error())
		}
	}
	var r []string
	s.Env, r = resolveRefs("env", raw.Env, getenv)
	reasons = append(reasons, r...)
	s.Headers, r = resolveRefs("header", raw.Headers, getenv)
	reasons = append(reasons, r...)
	s.Policy, r = parsePolicy(&raw.Policy)
	reasons = append(reasons, r...)
	r = parseIdentity(&raw, &s, getenv)
	reasons = append(reasons, r...)
	return s, label, reasons
}

// parseIdentity checks an entry's identity and oauth keys and sets
// s.Identity (defaulted as IdentityOf says) and s.OAuth.
func parseIdentity(raw *rawServer, s *Server, getenv func(string) string) []string {
	hasOAuth := raw.OAuth.Kind != 0
	if raw.Transport != TransportHTTP {
		if raw.Identity != "" || hasOAuth {
			return []string{"identity and oauth belong to the http transport, not " + raw.Transport}
		}
		return nil
	}
	reasons := checkIdentity(raw, s, hasOAuth)
	if !hasOAuth {
		return reasons
	}
	return append(reasons, parseOAuth(&raw.OAuth, s, getenv)...)
}

// checkIdentity sets s.Identity from an HTTP entry's identity key (or its
// default) and says what does not go with it.
func checkIdentity(raw *rawServer, s *Server, hasOAuth bool) []string {
	var reasons []string
	s.Identity = raw.Identity
	switch raw.Identity {
	case "":
		s.Identity = IdentityOf(&Server{Transport: TransportHTTP, Headers: s.Headers})
		s.IdentityImplied = true
		if hasOAuth && s.Identity == IdentityStatic {
			reasons = append(reasons, "oauth is set but identity defaults to static because headers are set; write identity: user or service")
		}
	case IdentityStatic:
		if len(raw.Headers) == 0 {
			reasons = append(reasons, "identity static needs headers (such as Authorization: \"Bearer ${TOKEN}\")")
		}
		if hasOAuth {
			reasons = append(reasons, "oauth belongs to identity user or service, not static")
		}
	case IdentityUser, IdentityService:
		for k := range raw.Headers {
			if strings.EqualFold(k, "Authorization") {
				reasons = append(reasons, fmt.Sprintf("identity %s gets its Authorization header by OAuth; remove the header, or write identity: static", raw.Identity))
			}
		}
	default:
		reasons = append(reasons, fmt.Sprintf("unknown identity %q (user, service or static)", raw.Identity))
	}
	return reasons
}

// parseOAuth reads an entry's oauth mapping (client_id; client_secret,
// or client_key and client_key_id, by env reference; scopes) into s.OAuth
// and says what is wrong with it.
func parseOAuth(o *yaml.Node, s *Server, getenv func(string) string) []string {
	if o.Kind != yaml.MappingNode {
		return []string{"oauth must be a mapping (client_id, client_secret or client_key, scopes)"}
	}
	var reasons []string
	refs := map[string]yaml.Node{}
	keyID := ""
	for i := 0; i+1 < len(o.Content); i += 2 {
		key, val := o.Content[i], o.Content[i+1]
		switch key.Value {
		case "client_id", "client_key_id":
			if val.Kind != yaml.ScalarNode || val.Value == "" {
				reasons = append(reasons, fmt.Sprintf("oauth: %s must be a string", key.Value))
			} else if key.Value == "client_id" {
				s.OAuth.ClientID = val.Value
			} else {
				keyID = val.Value
			}
		case "client_secret", "client_key":
			refs[key.Value] = *val
		case "scopes":
			if err := val.Decode(&s.OAuth.Scopes); err != nil {
				reasons = append(reasons, "oauth: scopes must be a list of strings")
			}
		default:
			reasons = append(reasons, fmt.Sprintf("oauth: unknown key %q (line %d); want client_id, client_secret, client_key, client_key_id, scopes", key.Value, key.Line))
		}
	}
	reasons = append(reasons, checkScopes(s.OAuth.Scopes)...)
	return append(reasons, parseCredentials(refs, keyID, s, getenv)...)
}

// parseCredentials resolves an oauth mapping's client_secret or
// client_key (refs, by env reference) into s.OAuth, parsing the key, and
// says what is wrong: either needs a client_id, and they exclude each
// other. No reason holds a value.
func parseCredentials(refs map[string]yaml.Node, keyID string, s *Server, getenv func(string) string) []string {
	var reasons []string
	for _, k := range slices.Sorted(maps.Keys(refs)) {
		if s.OAuth.ClientID == "" {
			reasons = append(reasons, "oauth: "+k+" needs a client_id")
		}
	}
	_, hasKey := refs["client_key"]
	switch {
	case hasKey && len(refs) == 2:
		reasons = append(reasons, "oauth: give client_secret or client_key (private_key_jwt), not both")
	case keyID != "" && !hasKey:
		reasons = append(reasons, "oauth: client_key_id names the key of client_key, which is not set")
	}
	vals, r := resolveRefs("oauth", refs, getenv)
	reasons = append(reasons, r...)
	s.OAuth.ClientSecret = vals["client_secret"]
	if pem, ok := vals["client_key"]; ok {
		k, err := oauth.ParseClientKey([]byte(pem.Reveal()), keyID)
		if err != nil {
			return append(reasons, "oauth client_key: "+strings.TrimPrefix(err.Error(), "oauth: client key: "))
		}
		s.OAuth.ClientKey = k
	}
	return reasons
}

// checkScopes says which configured scopes are not single scope tokens.
func checkScopes(scopes []string) []string {
	var reasons []string
	for _, sc := range scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\"\\") {
			reasons = append(reasons, fmt.Sprintf("oauth: scope %q is not a single scope token", sc))
		}
	}
	return reasons
}

// checkTransport checks the transport of a server entry and the keys
// that go with it.
func checkTransport(raw *rawServer) []string {
	var reasons []string
	switch raw.Transport {
	case TransportStdio:
		if raw.Command == "" {
			reasons = append(reasons, "stdio transport needs a command")
		}
		if raw.URL != "" || len(raw.Headers) > 0 {
			reasons = append(reasons, "url and headers belong to the http transport, not stdio")
		}
	case TransportHTTP:
		if raw.Command != "" || len(raw.Args) > 0 || len(raw.Env) > 0 {
			reasons = append(reasons, "command, args and env belong to the stdio transport, not http")
		}
		reasons = append(reasons, checkURL(raw.URL)...)
	case "":
		reasons = append(reasons, "transport is missing (stdio or http)")
	default:
		reasons = append(reasons, fmt.Sprintf("unknown transport %q (stdio or http)", raw.Transport))
	}
	return reasons
}

// checkURL checks the url of an http server.
func checkURL(raw string) []string {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return []string{"http transport needs a url"}
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return []string{"url must be an absolute http or https URL"}
	case u.User != nil:
		return []string{"url must not carry user:password; send credentials in a header by env reference"}
	}
	return nil
}

// parseDuration sets *d from the value of key, when there is one.
func parseDuration(key, value, example string, d *time.Duration) []string {
	if value == "" {
		return nil
	}
	v, err := time.ParseDuration(value)
	if err != nil || v <= 0 {
		return []string{fmt.Sprintf("%s %q is not a positive duration like %s", key, value, example)}
	}
	*d = v
	return nil
}

func checkGlob(g string) error {
	if g == "" {
		return errors.New("empty tool glob")
	}
	if _, err := path.Match(g, ""); err != nil {
		return fmt.Errorf("bad tool glob %q: %v", g, err)
	}
	return nil
}

func parsePolicy(n *yaml.Node) ([]PolicyRule, []string) {
	if n.Kind == 0 {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, []string{"policy must be a mapping of tool glob to auto or ask"}
	}
	var rules []PolicyRule
	var reasons []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		g, v := n.Content[i].Value, n.Content[i+1].Value
		if err := checkGlob(g); err != nil {
			reasons = append(reasons, "policy: "+err.Error())
			continue
		}
		if v != PolicyAuto && v != PolicyAsk {
			reasons = append(reasons, fmt.Sprintf("policy for %q is %q; want auto or ask", g, v))
			continue
		}
		rules = append(rules, PolicyRule{Glob: g, Policy: v})
	}
	return rules, reasons
}

// resolveRefs turns env or header values, each {env: VAR} or a string with
// ${VAR} references, into their values. Reasons never hold a value.
func resolveRefs(kind string, in map[string]yaml.Node, getenv func(string) string) (map[string]Secret, []string) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]Secret, len(in))
	var reasons []string
	for _, key := range slices.Sorted(maps.Keys(in)) {
		n := in[key]
		switch n.Kind {
		case yaml.MappingNode:
			var ref struct {
				Env string `yaml:"env"`
			}
			if err := n.Decode(&ref); err != nil || ref.Env == "" || len(n.Content) != 2 {
				reasons = append(reasons, fmt.Sprintf("%s %s: want {env: VAR}", kind, key))
				continue
			}
			v := getenv(ref.Env)
			if v == "" {
				reasons = append(reasons, fmt.Sprintf("%s %s: environment variable %s is not set", kind, key, ref.Env))
				continue
			}
			out[key] = Secret(v)
		case yaml.ScalarNode:
			if !refRE.MatchString(n.Value) {
				reasons = append(reasons, fmt.Sprintf("%s %s: a literal value is refused; write {env: VAR} or ${VAR} so no secret sits in the file", kind, key))
				continue
			}
			var missing []string
			v := refRE.ReplaceAllStringFunc(n.Value, func(m string) string {
				name := refRE.FindStringSubmatch(m)[1]
				val := getenv(name)
				if val == "" {
					missing = append(missing, name)
				}
				return val
			})
			if len(missing) > 0 {
				reasons = append(reasons, fmt.Sprintf("%s %s: environment variable %s is not set", kind, key, strings.Join(missing, ", ")))
				continue
			}
			out[key] = Secret(v)
		default:
			reasons = append(reasons, fmt.Sprintf("%s %s: want {env: VAR} or a string with ${VAR}", kind, key))
		}
	}
	return out, reasons
}

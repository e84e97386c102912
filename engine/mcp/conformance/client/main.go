// Command client is the MCP client that the official conformance suite
// (@modelcontextprotocol/conformance, pinned in engine/mcp/testdata/npm)
// tests: it runs each client scenario through agentbot's own MCP code, a
// mcp.Manager with one streamable HTTP server, listing its tools and
// calling them as a turn does.
//
// The suite runs it as `client <server-url>`, with the scenario's name in
// MCP_CONFORMANCE_SCENARIO and, for some scenarios, a JSON object of
// extra data in MCP_CONFORMANCE_CONTEXT. The auth scenarios run as a
// server with identity service, authorized by an mcp.OAuthAuthorizer
// whose Browse follows the authorization URL with an http.Client and
// reads the code from the redirect (the suite's authorization server
// redirects at once); the pre-registered client id, and secret or private
// key, the suite passes in the context become the server's oauth settings
// (client_id, client_secret or client_key, in a config loaded as a
// person's would be), with which the client credentials scenarios get
// their token: with the secret, or with a signed assertion
// (private_key_jwt). It exits with status 1 when the
// scenario could not be run through; the suite's own checks decide
// whether it passed. engine/mcp's TestConformance builds and runs it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"agentbot/engine/mcp"
)

// server is the name the scenario's server gets in the config.
const server = "conformance"

// The redirect URI of the authorization code flows, and the client ID
// metadata document URL the suite expects (auth/basic-cimd); the suite's
// authorization server does not fetch it.
const (
	redirectURL         = "http://localhost:3000/callback"
	metadataDocumentURL = "https://conformance-test.local/client-metadata.json"
)

// call is the tool a scenario expects to be called, and its arguments.
type call struct {
	tool string
	args string
}

// calls are the tools each scenario's server expects a call of (the
// scenarios' descriptions in the suite, and the go-sdk's conformance
// client); a scenario not listed only connects and lists the tools.
var calls = map[string]call{
	"tools_call":                          {"add_numbers", `{"a":5,"b":3}`},
	"elicitation-sep1034-client-defaults": {"test_client_elicitation_defaults", `{}`},
	"sse-retry":                           {"test_reconnection", `{}`},
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: client <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if err := run(log, os.Args[1], scenario); err != nil {
		log.Error("scenario failed", "scenario", scenario, "error", err)
		os.Exit(1)
	}
	log.Info("scenario done", "scenario", scenario)
}

// run connects to url as a Manager would, lists the tools and makes the
// scenario's call.
func run(log *slog.Logger, url, scenario string) error {
	if scenario == "" {
		return errors.New("MCP_CONFORMANCE_SCENARIO is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	cfg, err := config(url, os.Getenv("MCP_CONFORMANCE_CONTEXT"))
	if err != nil {
		return err
	}
	m := mcp.NewManager(cfg, mcp.Options{Logger: log, Elicit: acceptDefaults, Authorizer: &mcp.OAuthAuthorizer{
		RedirectURL:         redirectURL,
		MetadataDocumentURL: metadataDocumentURL,
		ClientName:          "agentbot conformance client",
		Browse:              followRedirect,
	}})
	defer m.Close()
	tools, probs := m.ToolsWait(ctx, []string{server})
	for _, p := range probs {
		if p.Unavailable {
			return fmt.Errorf("list tools: %s", p.Reason)
		}
		log.Warn("tool left out", "problem", p.Reason)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Remote()
	}
	log.Info("tools listed", "tools", strings.Join(names, ","))
	want, ok := calls[scenario]
	if !ok && strings.HasPrefix(scenario, "auth/") {
		want, ok = call{"test-tool", `{}`}, true
	}
	if !ok {
		return nil
	}
	for _, t := range tools {
		if t.Remote() != want.tool {
			continue
		}
		r, err := t.Call(ctx, json.RawMessage(want.args))
		if err != nil {
			return fmt.Errorf("call %s: %w", want.tool, err)
		}
		if r.IsError {
			return fmt.Errorf("call %s: error result: %s", want.tool, r.Text)
		}
		log.Info("tool called", "tool", want.tool, "result", r.Text)
		return nil
	}
	return fmt.Errorf("the server lists no tool %q (it lists %s)", want.tool, strings.Join(names, ", "))
}

// scenarioContext is the part of MCP_CONFORMANCE_CONTEXT the client
// reads: the pre-registered client id, and its secret
// (auth/client-credentials-basic) or PEM private key
// (auth/client-credentials-jwt, which signs ES256).
type scenarioContext struct {
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	PrivateKeyPEM string `json:"private_key_pem"`
	SigningAlg    string `json:"signing_algorithm"`
}

// config is the MCP config of the scenario's server, written as a person
// would write it (the secret and the key by env reference) and loaded by
// mcp.ParseConfig, with the context's values as the environment.
func config(url, context string) (*mcp.Config, error) {
	var sc scenarioContext
	if context != "" {
		if err := json.Unmarshal([]byte(context), &sc); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	env := map[string]string{"CONFORMANCE_CLIENT_SECRET": sc.ClientSecret, "CONFORMANCE_CLIENT_KEY": sc.PrivateKeyPEM}
	var oauth []string
	if sc.ClientID != "" {
		oauth = append(oauth, fmt.Sprintf("client_id: %q", sc.ClientID))
	}
	if sc.ClientSecret != "" {
		oauth = append(oauth, "client_secret: {env: CONFORMANCE_CLIENT_SECRET}")
	}
	if sc.PrivateKeyPEM != "" {
		oauth = append(oauth, "client_key: {env: CONFORMANCE_CLIENT_KEY}")
	}
	y := fmt.Sprintf("servers:\n  - name: %s\n    transport: http\n    url: %q\n    timeout: 10s\n    identity: service\n", server, url)
	if len(oauth) > 0 {
		y += "    oauth: {" + strings.Join(oauth, ", ") + "}\n"
	}
	cfg, probs, err := mcp.ParseConfig([]byte(y), func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("the config: %s", probs[0])
	}
	if s, _ := cfg.Server(server); sc.SigningAlg != "" && (s.OAuth.ClientKey == nil || s.OAuth.ClientKey.Algorithm() != sc.SigningAlg) {
		return nil, fmt.Errorf("the scenario signs with %s, the key with %v", sc.SigningAlg, s.OAuth.ClientKey)
	}
	return cfg, nil
}

// acceptDefaults answers a server's request for input as a person who
// accepts the form as it comes: each field with its default
// (elicitation-sep1034-client-defaults).
func acceptDefaults(_ context.Context, e mcp.Elicitation) (mcp.ElicitAnswer, error) {
	return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: mcp.SchemaDefaults(e.Schema)}, nil
}

// followRedirect is a headless person at the authorization URL: the
// suite's authorization server redirects to the redirect URI at once, and
// the redirect's query (code, state, iss) is returned without following
// it. Neither the URL nor the code is logged.
func followRedirect(ctx context.Context, authURL string) (url.Values, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, errors.New("bad authorization URL")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("authorization request: %w", errors.Unwrap(err))
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode/100 != 3 || !strings.HasPrefix(loc.String(), redirectURL) {
		return nil, fmt.Errorf("the authorization server answered %s without a redirect to %s", resp.Status, redirectURL)
	}
	return loc.Query(), nil
}

package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// Covers: the token goes to its resource's origin and path, and nowhere
// else.
func TestCovers(t *testing.T) {
	tok := Token{AccessToken: "a", Resource: "https://mcp.example.com/mcp"}
	for raw, want := range map[string]bool{
		"https://mcp.example.com/mcp":           true,
		"https://MCP.example.com:443/mcp/":      true,
		"https://mcp.example.com/mcp/sse?x=1":   true,
		"https://mcp.example.com/mcpx":          false,
		"https://mcp.example.com/":              false,
		"https://mcp.example.com/other/mcp":     false,
		"http://mcp.example.com/mcp":            false,
		"https://mcp.example.com:8443/mcp":      false,
		"https://evil.example.com/mcp":          false,
		"https://mcp.example.com.evil.test/mcp": false,
		"https://user@mcp.example.com/mcp":      false,
		"https://mcp.example.com/%2E%2E/x/mcp":  false,
		"https://mcp.example.com/mcp%2F..%2Fx":  false,
	} {
		u, _ := url.Parse(raw)
		if got := tok.Covers(u); got != want {
			t.Errorf("Covers(%s) = %v", raw, got)
		}
	}
	if (Token{AccessToken: "a"}).Covers(&url.URL{Scheme: "https", Host: "x", Path: "/"}) {
		t.Error("a token without a resource covers something")
	}
	root := Token{Resource: "https://mcp.example.com"}
	if u, _ := url.Parse("https://mcp.example.com/any/path"); !root.Covers(u) {
		t.Error("an origin resource does not cover its paths")
	}
}

// Classify: 401 needs authorization with the new challenge; 403
// insufficient_scope is a step-up with the new scope; anything else asks
// nothing.
func TestClassify(t *testing.T) {
	resp := func(status int, www ...string) *http.Response {
		h := http.Header{}
		for _, w := range www {
			h.Add("WWW-Authenticate", w)
		}
		return &http.Response{StatusCode: status, Header: h}
	}
	ch := Classify(resp(401, `Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource", error="invalid_token"`))
	if ch.Kind != NeedsAuthorization || ch.ResourceMetadata != "https://mcp.example/.well-known/oauth-protected-resource" || ch.Error != "invalid_token" || len(ch.WWWAuthenticate) != 1 {
		t.Fatalf("401 = %+v", ch)
	}
	if ch := Classify(resp(401)); ch.Kind != NeedsAuthorization {
		t.Fatalf("bare 401 = %+v", ch)
	}
	ch = Classify(resp(403, `Bearer error="insufficient_scope", scope="files:read files:write"`))
	if ch.Kind != InsufficientScope || !reflect.DeepEqual(ch.Scopes, []string{"files:read", "files:write"}) {
		t.Fatalf("403 insufficient_scope = %+v", ch)
	}
	if got := StepUpScopes([]string{"files:read", "user"}, ch); !reflect.DeepEqual(got, []string{"files:read", "files:write", "user"}) {
		t.Fatalf("step-up scopes = %v", got)
	}
	for _, r := range []*http.Response{resp(403), resp(403, `Bearer error="invalid_token"`), resp(200), resp(500), nil} {
		if ch := Classify(r); ch.Kind != NoChallenge {
			t.Errorf("%v = %+v", r, ch)
		}
	}
}

// The Transport puts the token on requests to its resource only: not on
// another origin, not on a sibling path, not across a redirect to another
// origin; it reports a 401 to OnChallenge and returns it as it came.
func TestTransportOnlyToResource(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	record := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen[name+" "+r.URL.Path] = r.Header.Get("Authorization")
			mu.Unlock()
			if r.URL.Path == "/mcp/denied" {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", scope="more"`)
				w.WriteHeader(http.StatusUnauthorized)
			}
		})
	}
	other := httptest.NewServer(record("other"))
	defer other.Close()
	res := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp/away" {
			http.Redirect(w, r, other.URL+"/mcp/landed", http.StatusFound)
			return
		}
		record("res").ServeHTTP(w, r)
	}))
	defer res.Close()

	tok := Token{AccessToken: "the-access-token", Resource: res.URL + "/mcp"}
	var challenges []Challenge
	calls := 0
	hc := &http.Client{Transport: &Transport{
		Resource: tok.Resource,
		Token: func(context.Context) (Token, error) {
			calls++
			return tok, nil
		},
		OnChallenge: func(_ *http.Request, ch Challenge) { challenges = append(challenges, ch) },
	}}
	for _, u := range []string{res.URL + "/mcp", res.URL + "/mcp/x", res.URL + "/mcpx", res.URL + "/", other.URL + "/mcp", res.URL + "/mcp/away", res.URL + "/mcp/denied"} {
		resp, err := hc.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if strings.HasSuffix(u, "/denied") && resp.StatusCode != 401 {
			t.Errorf("401 became %d", resp.StatusCode)
		}
	}
	want := map[string]string{
		"res /mcp":          "Bearer the-access-token",
		"res /mcp/x":        "Bearer the-access-token",
		"res /mcpx":         "",
		"res /":             "",
		"other /mcp":        "",
		"other /mcp/landed": "",
		"res /mcp/denied":   "Bearer the-access-token",
	}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("Authorization seen = %v", seen)
	}
	if calls != 4 { // /mcp, /mcp/x, /mcp/away, /mcp/denied
		t.Errorf("Token called %d times", calls)
	}
	if len(challenges) != 1 || challenges[0].Kind != NeedsAuthorization || !reflect.DeepEqual(challenges[0].Scopes, []string{"more"}) {
		t.Fatalf("challenges = %+v", challenges)
	}

	// A token issued for another resource is not sent even where the
	// transport is asked to authorize.
	tok.Resource = other.URL + "/mcp"
	resp, err := hc.Get(res.URL + "/mcp/again")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen["res /mcp/again"] != "" {
		t.Fatal("a token for another resource was sent")
	}

	// A failing token source fails the request without sending it, and
	// the error names the resource.
	hc.Transport.(*Transport).Token = func(context.Context) (Token, error) { return Token{}, errors.New("no connection") }
	if _, err := hc.Get(res.URL + "/mcp/none"); err == nil || !strings.Contains(err.Error(), "no connection") {
		t.Fatalf("failing source = %v", err)
	}
	if _, ok := seen["res /mcp/none"]; ok {
		t.Fatal("the request went out without its token")
	}
}

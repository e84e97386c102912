package oauth

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Covers reports whether a request to u may carry t: u has the origin of
// t's resource (scheme, host and port, default ports made explicit) and
// its path is the resource's path or below it ("/mcp" covers "/mcp" and
// "/mcp/x", not "/mcpx" nor "/mcp/../x"). A token without a resource covers nothing.
func (t Token) Covers(u *url.URL) bool {
	if t.Resource == "" || u == nil {
		return false
	}
	r, err := url.Parse(t.Resource)
	if err != nil || r.Host == "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, u.Scheme) || !strings.EqualFold(hostPort(r), hostPort(u)) || u.User != nil {
		return false
	}
	base := strings.TrimSuffix(r.EscapedPath(), "/")
	p := u.EscapedPath()
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return false // a server may resolve it to a path outside
		}
	}
	return base == "" || p == base || strings.HasPrefix(p, base+"/")
}

// hostPort is u's host with its port, the scheme's default port when none
// is given.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return u.Hostname() + ":" + port
}

// Transport is an http.RoundTripper that authorizes requests to one
// resource. It asks Token for the current token (the caller's function
// loads it, and refreshes it when Expired) and sets
// "Authorization: Bearer ..." only on a request the token Covers; any
// other request, a redirect elsewhere included, goes out without it, and
// without asking for the token. Each response is classified; a challenge
// (Classify) goes to OnChallenge, and the response is returned as it came,
// for the caller to authorize again or step up, and to bound its retries.
type Transport struct {
	// Base sends the requests; nil is http.DefaultTransport.
	Base http.RoundTripper
	// Resource is the resource the token is for; requests elsewhere do not
	// call Token.
	Resource string
	// Token returns the token to send. Required.
	Token func(ctx context.Context) (Token, error)
	// OnChallenge, if set, is called with each 401, and each 403
	// insufficient_scope, of a request that carried the token or that was
	// for the resource.
	OnChallenge func(*http.Request, Challenge)
}

// RoundTrip sends req, with the bearer token where it belongs.
func (tr *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := tr.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if !(Token{Resource: tr.Resource}).Covers(req.URL) {
		return base.RoundTrip(req)
	}
	tok, err := tr.Token(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("oauth: the token for %s: %w", tr.Resource, err)
	}
	if tok.Covers(req.URL) && tok.AccessToken != "" {
		r2 := req.Clone(req.Context())
		r2.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req = r2
	}
	resp, err := base.RoundTrip(req)
	if err != nil || tr.OnChallenge == nil {
		return resp, err
	}
	if ch := Classify(resp); ch.Kind != NoChallenge {
		tr.OnChallenge(req, ch)
	}
	return resp, nil
}

// ChallengeKind is what a response asks of the client.
type ChallengeKind int

const (
	// NoChallenge: nothing to do about authorization.
	NoChallenge ChallengeKind = iota
	// NeedsAuthorization: a 401; the token is missing, expired or revoked.
	// Refresh it, or authorize again with Challenge.WWWAuthenticate.
	NeedsAuthorization
	// InsufficientScope: a 403 with error="insufficient_scope"; authorize
	// again for the union of the granted scopes and Challenge.Scopes
	// (StepUpScopes).
	InsufficientScope
)

// String names the kind.
func (k ChallengeKind) String() string {
	switch k {
	case NeedsAuthorization:
		return "needs authorization"
	case InsufficientScope:
		return "insufficient scope"
	}
	return "none"
}

// Challenge is a response's request for (more) authorization.
type Challenge struct {
	// Kind is what is asked.
	Kind ChallengeKind
	// Status is the response's HTTP status.
	Status int
	// WWWAuthenticate are the response's WWW-Authenticate values, for
	// Discover.
	WWWAuthenticate []string
	// ResourceMetadata is the challenge's resource_metadata URL, if any.
	ResourceMetadata string
	// Scopes are the challenge's scope, if any.
	Scopes []string
	// Error is the challenge's error code (invalid_token,
	// insufficient_scope), if any.
	Error string
}

// Classify tells what resp asks: a 401 needs authorization; a 403 whose
// Bearer challenge says error="insufficient_scope" needs a step-up; any
// other response, a 403 without that error included, asks nothing.
func Classify(resp *http.Response) Challenge {
	if resp == nil || resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return Challenge{}
	}
	values := slices.Clone(resp.Header.Values("WWW-Authenticate"))
	ch := Challenge{Status: resp.StatusCode, WWWAuthenticate: values}
	cs, _ := oauthex.ParseWWWAuthenticate(values) // a malformed header still means 401
	ch.ResourceMetadata = challengeParam(cs, "resource_metadata")
	ch.Scopes = strings.Fields(challengeParam(cs, "scope"))
	ch.Error = challengeParam(cs, "error")
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		ch.Kind = NeedsAuthorization
	case ch.Error == "insufficient_scope":
		ch.Kind = InsufficientScope
	default:
		return Challenge{}
	}
	return ch
}

// StepUpScopes are the scopes to ask for after an insufficient_scope
// challenge: the granted ones and the challenged ones, so a step-up keeps
// what was granted (SEP-2350); sorted.
func StepUpScopes(granted []string, ch Challenge) []string {
	set := map[string]bool{}
	for _, s := range append(slices.Clone(granted), ch.Scopes...) {
		set[s] = true
	}
	return slices.Sorted(maps.Keys(set))
}

package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"agentbot/engine/mcp/oauth"
)

// Identity is who a call to a server acts as.
type Identity struct {
	// Kind is IdentityUser or IdentityService.
	Kind string
	// Team and User name the person, for IdentityUser.
	Team, User string
}

// String names the identity (no secret in it).
func (id Identity) String() string {
	if id.Kind == IdentityUser {
		return fmt.Sprintf("user %s/%s", id.Team, id.User)
	}
	return id.Kind
}

// Authorizer gives the HTTP transport of a server with identity user or
// service its OAuth tokens. It is shared by all servers and sessions, so
// it is safe for concurrent use; it keeps (and refreshes) the tokens, and
// no token it returns is ever logged or put in an error by this package.
//
// A person counts as connected at an identity user server when Token
// gives them a token, one the server has not refused since (see
// Tool.External): a zero token, or an error wrapping
// ErrAuthorizationNeeded, means they must connect first.
type Authorizer interface {
	// Token is the token for a request of s acting as who: the stored
	// one, refreshed when it has expired. A zero Token (no access token)
	// means there is none yet: the request goes out without one, and a
	// 401 brings Authorize.
	Token(ctx context.Context, s *Server, who Identity) (oauth.Token, error)
	// Authorize is told of a challenge (oauth.Classify: a 401, or a 403
	// insufficient_scope) to a request that carried sent (zero if none),
	// and returns the token to send the request again with: a new one it
	// obtained (authorized again, or stepped up to oauth.StepUpScopes), or
	// the current one when another request already replaced sent. When a
	// person must act first, it returns an error wrapping
	// ErrAuthorizationNeeded. It gives up (an error) rather than ask again
	// for the scopes it was just granted.
	Authorize(ctx context.Context, s *Server, who Identity, sent oauth.Token, ch oauth.Challenge) (oauth.Token, error)
}

// ErrAuthorizationNeeded is wrapped by the error of a request that needs a
// person (or an admin) to authorize first; the server's tools are
// unavailable until then.
var ErrAuthorizationNeeded = errors.New("authorization needed")

// Retry limits of one request: authorizing again after a 401, and
// stepping up after a 403 insufficient_scope. A request that is still
// refused after them fails.
const (
	maxReauthorize = 1
	maxStepUps     = 2
)

// authRT sends the requests of one HTTP server: the configured headers
// (identity static) on requests to its host, or (identity user and
// service) the bearer token from an Authorizer through oauth.Transport,
// which sets it only on requests its resource covers. A challenge is
// handed to the Authorizer and the request sent again, within the retry
// limits. Every answer's body is shown to sniff.
type authRT struct {
	srv   *Server
	who   Identity
	auth  Authorizer // nil: challenges are answered with noAuth
	oauth *oauth.Transport
	// noAuth is the error a challenge gets without an Authorizer.
	noAuth error
	hooks  authHooks

	headers *headerRT
	sniff   func(line []byte)
}

// authHooks tell the owner of an authRT what became of its requests.
type authHooks struct {
	// asked is told that the server challenged a request, or was sent a
	// token: it wants authorization.
	asked func()
	// failed is told of each authorization error (to show why the server
	// is unavailable), with the token the refused request carried (zero
	// if none).
	failed func(err error, sent oauth.Token)
}

// newAuthRT is the transport of s's HTTP requests.
func newAuthRT(s *Server, who Identity, a Authorizer, noAuth error, sniff func([]byte), hooks authHooks) http.RoundTripper {
	h := newHeaderRT(s)
	if IdentityOf(s) == IdentityStatic {
		h.sniff = sniff
		return h
	}
	rt := &authRT{srv: s, who: who, auth: a, noAuth: noAuth, hooks: hooks, headers: h, sniff: sniff}
	rt.oauth = &oauth.Transport{Base: h, Resource: s.URL, Token: rt.token}
	return rt
}

// token is oauth.Transport's Token: the Authorizer's, or none.
func (rt *authRT) token(ctx context.Context) (oauth.Token, error) {
	if rt.auth == nil {
		return oauth.Token{}, nil
	}
	t, err := rt.auth.Token(ctx, rt.srv, rt.who)
	if err != nil {
		rt.authErr(err, oauth.Token{})
	}
	return t, err
}

// tokenKey is the context key under which a request notes the token it
// carried (a *oauth.Token), for Authorize.
type tokenKey struct{}

// RoundTrip sends req, and again after the Authorizer answered a
// challenge, within the retry limits.
func (rt *authRT) RoundTrip(req *http.Request) (*http.Response, error) {
	var tries retries
	for {
		var carried oauth.Token
		r := req.WithContext(context.WithValue(req.Context(), tokenKey{}, &carried))
		resp, err := rt.send(r)
		if err != nil {
			return nil, err
		}
		ch := oauth.Classify(resp)
		if carried.AccessToken != "" && rt.hooks.asked != nil {
			rt.hooks.asked()
		}
		if !rt.answerable(req, ch, &tries) {
			return rt.sniffed(resp), nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if req, err = rt.reauthorize(req, carried, ch); err != nil {
			return nil, err
		}
	}
}

// retries counts a request's answered challenges, by kind.
type retries struct{ reauth, stepUps int }

// answerable reports whether challenge ch to req is one to answer (and
// counts it): a 401 or 403 insufficient_scope of this server, within the
// limits, to a request that can be sent again.
func (rt *authRT) answerable(req *http.Request, ch oauth.Challenge, n *retries) bool {
	switch {
	case ch.Kind == oauth.NoChallenge,
		ch.Kind == oauth.NeedsAuthorization && n.reauth >= maxReauthorize,
		ch.Kind == oauth.InsufficientScope && n.stepUps >= maxStepUps:
		return false // the caller sees the answer, or the refusal
	case req.Body != nil && req.Body != http.NoBody && req.GetBody == nil:
		return false // cannot be sent again
	case !(oauth.Token{Resource: rt.srv.URL}).Covers(req.URL):
		return false // not our server's challenge
	}
	if ch.Kind == oauth.NeedsAuthorization {
		n.reauth++
	} else {
		n.stepUps++
	}
	if rt.hooks.asked != nil {
		rt.hooks.asked()
	}
	return true
}

// reauthorize asks the Authorizer to answer ch (the request carried
// carried) and returns req ready to be sent again.
func (rt *authRT) reauthorize(req *http.Request, carried oauth.Token, ch oauth.Challenge) (*http.Request, error) {
	if rt.auth == nil {
		rt.authErr(rt.noAuth, carried)
		return nil, rt.noAuth
	}
	if _, err := rt.auth.Authorize(req.Context(), rt.srv, rt.who, carried, ch); err != nil {
		rt.authErr(err, carried)
		return nil, fmt.Errorf("authorize at %s (%s): %w", rt.srv.Name, ch.Kind, err)
	}
	if req.GetBody == nil {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Body = body
	return req, nil
}

// send is one try of req through oauth.Transport, noting in the
// request's context the token it carried.
func (rt *authRT) send(req *http.Request) (*http.Response, error) {
	carried, _ := req.Context().Value(tokenKey{}).(*oauth.Token)
	tr := *rt.oauth
	tr.Token = func(ctx context.Context) (oauth.Token, error) {
		t, err := rt.token(ctx)
		if err == nil && carried != nil && t.Covers(req.URL) {
			*carried = t
		}
		return t, err
	}
	return tr.RoundTrip(req)
}

func (rt *authRT) sniffed(resp *http.Response) *http.Response {
	if rt.sniff != nil && resp.Body != nil {
		resp.Body = sniffBody{Reader: &sniffer{r: resp.Body, note: rt.sniff}, Closer: resp.Body}
	}
	return resp
}

func (rt *authRT) authErr(err error, sent oauth.Token) {
	if rt.hooks.failed != nil && err != nil {
		rt.hooks.failed(err, sent)
	}
}

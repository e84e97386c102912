package oauth

import (
	"errors"
	"fmt"
	"net/url"

	"golang.org/x/oauth2"
)

// Errors the caller acts on; test them with errors.Is.
var (
	// ErrState: the redirect's state is missing or is not the flow's.
	ErrState = errors.New("oauth: the redirect's state does not match the flow")
	// ErrExpired: the flow is past its expiry; the person starts again.
	ErrExpired = errors.New("oauth: the authorization flow has expired")
	// ErrIssuer: the redirect's iss (RFC 9207) is missing where the
	// authorization server advertises it, or names another server; or a
	// client or token belongs to another authorization server.
	ErrIssuer = errors.New("oauth: issuer mismatch")
	// ErrDenied: the authorization server answered the redirect with an
	// error (the person declined, or the request was refused).
	ErrDenied = errors.New("oauth: authorization was not granted")
	// ErrInvalidGrant: the code, or the refresh token, is no longer
	// accepted (used, revoked, expired): the person must connect again.
	ErrInvalidGrant = errors.New("oauth: the grant is no longer valid")
	// ErrNoRegistration: none of the client registration methods offered
	// by the caller is supported by the authorization server.
	ErrNoRegistration = errors.New("oauth: no usable client registration method")
	// ErrNoRevocation: the authorization server has no revocation endpoint.
	ErrNoRevocation = errors.New("oauth: the authorization server offers no revocation")
	// ErrNoRefreshToken: the token has no refresh token.
	ErrNoRefreshToken = errors.New("oauth: the token has no refresh token")
)

// ServerError is an OAuth error answered by the authorization server: an
// error response of its token, revocation or registration endpoint, or an
// error in the authorization redirect. It carries RFC 6749's error code and
// description, never the request's secrets.
type ServerError struct {
	// Op is the step: "authorization", "token exchange", "refresh",
	// "client credentials", "revocation" or "registration".
	Op string
	// Endpoint is the URL that answered (empty for the redirect).
	Endpoint string
	// Status is the HTTP status (0 for the redirect).
	Status int
	// Code is RFC 6749's error code, such as invalid_grant.
	Code string
	// Description is the server's error_description.
	Description string
}

// Error describes the error with its step, endpoint, status and code.
func (e *ServerError) Error() string {
	s := "oauth: " + e.Op
	if e.Endpoint != "" {
		s += " at " + e.Endpoint
	}
	s += " failed"
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += fmt.Sprintf(" (%s)", e.Description)
	}
	return s
}

// Is makes an authorization redirect's error match ErrDenied and
// invalid_grant match ErrInvalidGrant.
func (e *ServerError) Is(target error) bool {
	switch target {
	case ErrDenied:
		return e.Op == "authorization"
	case ErrInvalidGrant:
		return e.Code == "invalid_grant"
	}
	return false
}

// tokenError turns an x/oauth2 error into one without the response body
// (which an odd server could fill with anything, a token included).
func tokenError(op, endpoint string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		se := &ServerError{Op: op, Endpoint: endpoint, Code: re.ErrorCode, Description: re.ErrorDescription}
		if re.Response != nil {
			se.Status = re.Response.StatusCode
		}
		return se
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("oauth: %s: %w", op, ue)
	}
	return fmt.Errorf("oauth: %s at %s failed: %s", op, endpoint, scrub(err))
}

// scrub keeps an error's first line: x/oauth2 appends the raw response
// body after a newline.
func scrub(err error) string {
	s := err.Error()
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// Package oauth is the OAuth 2.1 client that MCP authorization needs
// (specification 2025-11-25), built for a bot whose flows are
// asynchronous: a person opens the authorization link whenever they like,
// the process may restart meanwhile, and another replica may receive the
// redirect. So every step takes and returns plain values (Discovery,
// Client, Flow, Token) that marshal to JSON; the caller persists them
// (tokens and secrets encrypted) and nothing lives only in memory here.
//
// The steps, in order:
//
//   - Discover: the protected resource metadata (RFC 9728) named by a 401's
//     WWW-Authenticate resource_metadata, or found at the well-known URIs;
//     then the authorization server metadata (RFC 8414, with the OpenID
//     Connect fallback); and the scopes to ask for.
//   - Register: a client in the specification's order of preference: the
//     client ID metadata document agentbot serves (MetadataDocument renders
//     it), pre-registered credentials from the config, dynamic client
//     registration (RFC 7591).
//   - Begin: a Flow (random single-use state, PKCE S256 verifier, the
//     resource of RFC 8707, the endpoints, an expiry and the caller's own
//     binding fields) and the authorization URL to send the person to.
//   - Finish: checks the redirect's state, expiry, error and RFC 9207 iss,
//     and exchanges the code with the verifier and the resource.
//   - Refresh, Revoke (RFC 7009), and ClientCredentials (the MCP
//     client-credentials extension) for service identities.
//   - Client authentication at the token and revocation endpoints:
//     client_secret_basic, client_secret_post, none, or private_key_jwt
//     (RFC 7523 section 2.2): a Client or Credentials with a ClientKey (a
//     PEM ECDSA, RSA or Ed25519 key, ParseClientKey) signs a new
//     short-lived assertion for each request, with the standard library.
//   - Transport sets the bearer token only on requests to the resource it
//     was issued for; Classify tells a 401 (authorize again) from a 403
//     insufficient_scope (step up) and hands back the new challenge.
//
// The go-sdk's oauthex and auth packages do discovery and dynamic
// registration; golang.org/x/oauth2 does PKCE, the authorization URL, the
// code exchange and the client-credentials grant. Neither signs client
// assertions (x/oauth2's jws is RSA only, and for the JWT bearer grant),
// so ClientKey does, with crypto/ecdsa, crypto/rsa and crypto/ed25519. Refresh and revocation
// are plain form posts here, because x/oauth2's refresh cannot carry the
// resource parameter and it has no revocation.
//
// The caller makes a state single use: it looks a Flow up by the
// callback's state (StateOf) with an atomic take that deletes it, so a
// replayed redirect finds nothing; Finish then checks everything else.
//
// No error from this package contains an access or refresh token, an
// authorization code, a PKCE verifier, a client secret or private key, or
// a client assertion, and Token, Flow, Client, Credentials and ClientKey
// print and log redacted (String, GoString, LogValue).
package oauth

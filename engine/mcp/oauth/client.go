package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Registration is how a Client came to be known to its authorization
// server.
type Registration string

// The registration methods, in the MCP specification's order of
// preference.
const (
	// RegistrationMetadataDocument: the client id is the URL of a client ID
	// metadata document that agentbot serves (MetadataDocument).
	RegistrationMetadataDocument Registration = "metadata_document"
	// RegistrationPreregistered: credentials from the config.
	RegistrationPreregistered Registration = "preregistered"
	// RegistrationDynamic: dynamic client registration (RFC 7591).
	RegistrationDynamic Registration = "dynamic"
)

// Token endpoint authentication methods (RFC 7591 section 2).
const (
	AuthNone              = "none"
	AuthClientSecretBasic = "client_secret_basic"
	AuthClientSecretPost  = "client_secret_post"
	// AuthPrivateKeyJWT: a JWT assertion signed with the client's private
	// key (RFC 7523 section 2.2), a new one for each request.
	AuthPrivateKeyJWT = "private_key_jwt"
)

// Client is agentbot as a client of one authorization server: what
// Register found or obtained, to be stored per issuer (the secret
// encrypted) and used for every flow, refresh and revocation there.
type Client struct {
	// ID is the client id (for a metadata document, its URL).
	ID string `json:"client_id"`
	// Secret is the client secret; empty for a public client.
	Secret string `json:"client_secret,omitempty"`
	// Key is the private key of a client that authenticates with
	// private_key_jwt. The Client's JSON holds it (as PKCS #8 PEM in
	// client_key, its id in client_key_id), as it holds the secret: the
	// caller stores both sealed.
	Key *ClientKey `json:"-"`
	// AuthMethod is how the client authenticates at the token and
	// revocation endpoints: AuthNone, AuthClientSecretBasic,
	// AuthClientSecretPost or AuthPrivateKeyJWT.
	AuthMethod string `json:"token_endpoint_auth_method"`
	// Registration is how the client was registered.
	Registration Registration `json:"registration"`
	// Issuer is the authorization server the client belongs to.
	Issuer string `json:"issuer"`
	// TokenURL is the server's token endpoint.
	TokenURL string `json:"token_endpoint"`
	// RevocationURL is the server's revocation endpoint (RFC 7009), if any.
	RevocationURL string `json:"revocation_endpoint,omitempty"`
	// RedirectURIs are the redirect URIs the client was registered with
	// (none recorded for clients stored before they were kept): a client
	// that lacks the one in use now (a loopback redirect on a new port) is
	// registered again.
	RedirectURIs []string `json:"redirect_uris,omitempty"`
	// SecretExpiresAt is when a dynamically registered secret expires
	// (zero: never); register again after it.
	SecretExpiresAt time.Time `json:"client_secret_expires_at,omitzero"`
}

// String shows the client without its secret or key.
func (c Client) String() string {
	return fmt.Sprintf("oauth.Client{ID:%q Registration:%s Issuer:%q AuthMethod:%s Secret:%s Key:%s}",
		c.ID, c.Registration, c.Issuer, c.AuthMethod, redacted(c.Secret), keyOf(c.Key))
}

// GoString is String, so %#v does not print the secret either.
func (c Client) GoString() string { return c.String() }

// LogValue logs the client without its secret or key.
func (c Client) LogValue() slog.Value {
	return slog.GroupValue(slog.String("client_id", c.ID), slog.String("registration", string(c.Registration)),
		slog.String("issuer", c.Issuer), slog.String("auth_method", c.AuthMethod),
		slog.String("client_secret", redacted(c.Secret)), slog.String("client_key", keyOf(c.Key)))
}

// clientFields are Client's fields without its methods, for its JSON.
type clientFields Client

// storedClient is a Client's JSON: its fields, and its key as PEM.
type storedClient struct {
	clientFields
	KeyPEM string `json:"client_key,omitempty"`
	KeyID  string `json:"client_key_id,omitempty"`
}

// MarshalJSON is the client as the caller stores it (sealed): its fields,
// its secret, and its private key in PEM.
func (c Client) MarshalJSON() ([]byte, error) {
	v := storedClient{clientFields: clientFields(c)}
	if c.Key != nil {
		pemKey, err := c.Key.pem()
		if err != nil {
			return nil, err
		}
		v.KeyPEM, v.KeyID = string(pemKey), c.Key.id
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (c *Client) UnmarshalJSON(b []byte) error {
	var v storedClient
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Client(v.clientFields)
	if v.KeyPEM != "" {
		k, err := ParseClientKey([]byte(v.KeyPEM), v.KeyID)
		if err != nil {
			return fmt.Errorf("oauth: the stored client %q: %w", c.ID, err)
		}
		c.Key = k
	}
	return nil
}

// audience is what the client's assertions name as their aud: the
// authorization server's issuer, or its token endpoint when it has none
// (the 2025-03-26 fallback without metadata).
func (c Client) audience() string {
	if c.Issuer != "" {
		return c.Issuer
	}
	return c.TokenURL
}

// Credentials are pre-registered client credentials from the config.
type Credentials struct {
	// ClientID is the client id.
	ClientID string
	// ClientSecret is the secret; empty for a public client or one with a
	// ClientKey.
	ClientSecret string
	// ClientKey, when set, is the private key the client authenticates
	// with (private_key_jwt) instead of a secret.
	ClientKey *ClientKey
	// Issuer, when set, is the only authorization server the credentials
	// may be used with.
	Issuer string
}

// Confidential reports whether the credentials can authenticate the
// client: a client id with a secret or a private key.
func (c Credentials) Confidential() bool {
	return c.ClientID != "" && (c.ClientSecret != "" || c.ClientKey != nil)
}

// authMethod is how the credentials authenticate at a server that
// supports the methods supported: private_key_jwt with a key;
// client_secret_post, else client_secret_basic, with a secret; else none.
func (c Credentials) authMethod(supported []string) string {
	switch {
	case c.ClientKey != nil:
		return AuthPrivateKeyJWT
	case c.ClientSecret != "":
		return pickAuthMethod(supported, AuthClientSecretPost, AuthClientSecretBasic)
	}
	return AuthNone
}

// String shows the credentials without the secret or key.
func (c Credentials) String() string {
	return fmt.Sprintf("oauth.Credentials{ClientID:%q Issuer:%q ClientSecret:%s ClientKey:%s}", c.ClientID, c.Issuer, redacted(c.ClientSecret), keyOf(c.ClientKey))
}

// GoString is String.
func (c Credentials) GoString() string { return c.String() }

// LogValue logs the credentials without the secret or key.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("client_id", c.ClientID), slog.String("issuer", c.Issuer),
		slog.String("client_secret", redacted(c.ClientSecret)), slog.String("client_key", keyOf(c.ClientKey)))
}

// ClientMetadata describes agentbot as an OAuth client: the content of its
// client ID metadata document, and of its dynamic registration requests.
type ClientMetadata struct {
	// ClientName is shown to people on the consent screen.
	ClientName string
	// ClientURI is a page about the client (optional).
	ClientURI string
	// LogoURI is the client's logo (optional).
	LogoURI string
	// RedirectURIs are the redirect URLs flows may use (required).
	RedirectURIs []string
}

// RegisterOptions are the registration methods the caller can offer.
type RegisterOptions struct {
	// MetadataDocumentURL is the HTTPS URL at which agentbot serves its
	// client ID metadata document; empty when it serves none (no public
	// URL).
	MetadataDocumentURL string
	// Preregistered are credentials from the config, if any.
	Preregistered *Credentials
	// Metadata is what a dynamic registration asks for.
	Metadata ClientMetadata
	// AuthMethod is the token endpoint authentication method a dynamic
	// registration asks for. Empty picks client_secret_basic, else
	// client_secret_post, else none, from what the server supports
	// (agentbot is a server and can keep a secret).
	AuthMethod string
}

// Register chooses or obtains a client at d's authorization server, in the
// MCP specification's order: the client ID metadata document when the
// server says client_id_metadata_document_supported and
// o.MetadataDocumentURL is set; else the pre-registered credentials; else
// dynamic registration (RFC 7591) when the server has a registration
// endpoint. Otherwise it fails with ErrNoRegistration.
func Register(ctx context.Context, client *http.Client, d Discovery, o RegisterOptions) (Client, error) {
	as := d.AuthServer
	c := Client{Issuer: as.Issuer, TokenURL: as.TokenEndpoint, RevocationURL: as.RevocationEndpoint,
		RedirectURIs: slices.Clone(o.Metadata.RedirectURIs)}
	switch {
	case o.MetadataDocumentURL != "" && as.ClientIDMetadataDocumentSupported:
		c.ID, c.AuthMethod, c.Registration = o.MetadataDocumentURL, AuthNone, RegistrationMetadataDocument
		return c, nil

	case o.Preregistered != nil:
		p := o.Preregistered
		if p.ClientID == "" {
			return Client{}, errors.New("oauth: registration: the pre-registered credentials have no client id")
		}
		if p.Issuer != "" && !sameIssuer(p.Issuer, as.Issuer) {
			return Client{}, fmt.Errorf("%w: the pre-registered credentials are for %s, the server is %s", ErrIssuer, p.Issuer, as.Issuer)
		}
		c.ID, c.Secret, c.Key, c.Registration = p.ClientID, p.ClientSecret, p.ClientKey, RegistrationPreregistered
		c.AuthMethod = p.authMethod(as.TokenEndpointAuthMethodsSupported)
		if c.Key != nil {
			c.Secret = ""
		}
		return c, nil

	case as.RegistrationEndpoint != "":
		if len(o.Metadata.RedirectURIs) == 0 {
			return Client{}, errors.New("oauth: registration: no redirect URIs to register")
		}
		method := o.AuthMethod
		if method == "" {
			method = pickAuthMethod(as.TokenEndpointAuthMethodsSupported, AuthClientSecretBasic, AuthClientSecretPost, AuthNone)
		}
		m := &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            o.Metadata.RedirectURIs,
			TokenEndpointAuthMethod: method,
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			ClientName:              o.Metadata.ClientName,
			ClientURI:               o.Metadata.ClientURI,
			LogoURI:                 o.Metadata.LogoURI,
		}
		if client == nil {
			client = http.DefaultClient
		}
		r, err := oauthex.RegisterClient(ctx, as.RegistrationEndpoint, m, client)
		if err != nil {
			return Client{}, registrationError(as.RegistrationEndpoint, err)
		}
		c.ID, c.Secret, c.Registration = r.ClientID, r.ClientSecret, RegistrationDynamic
		c.AuthMethod = r.TokenEndpointAuthMethod
		if c.AuthMethod == "" {
			c.AuthMethod = AuthClientSecretBasic // RFC 7591's default
		}
		if c.Secret == "" {
			c.AuthMethod = AuthNone
		}
		c.SecretExpiresAt = r.ClientSecretExpiresAt
		return c, nil
	}
	return Client{}, fmt.Errorf("%w at %s (client ID metadata document: server %v, ours %q; pre-registered: no; registration endpoint: none)",
		ErrNoRegistration, as.Issuer, as.ClientIDMetadataDocumentSupported, o.MetadataDocumentURL)
}

// registrationError keeps the server's error code and a network error,
// and drops the go-sdk's other messages, which may quote the response body
// (and with it a client secret).
func registrationError(endpoint string, err error) error {
	var re *oauthex.ClientRegistrationError
	if errors.As(err, &re) {
		return &ServerError{Op: "registration", Endpoint: endpoint, Status: http.StatusBadRequest, Code: re.ErrorCode, Description: re.ErrorDescription}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("oauth: registration: %w", ue)
	}
	// "failed to decode successful registration response: <err> (<body>)"
	// and "registration failed with status <status>: <body>" quote the
	// body: keep what comes before it.
	msg := scrub(err)
	if strings.HasPrefix(msg, "failed to decode") {
		msg, _, _ = strings.Cut(msg, ":")
	} else if rest, ok := strings.CutPrefix(msg, "registration failed with status "); ok {
		status, _, _ := strings.Cut(rest, ":")
		msg = "HTTP " + status
	}
	return fmt.Errorf("oauth: registration at %s failed: %s", endpoint, msg)
}

// pickAuthMethod is the first of prefs the server supports; a server that
// lists none gets the first.
func pickAuthMethod(supported []string, prefs ...string) string {
	for _, p := range prefs {
		if slices.Contains(supported, p) {
			return p
		}
	}
	if len(supported) == 0 {
		return prefs[0]
	}
	return supported[0]
}

// sameIssuer compares issuers ignoring one trailing slash (as the go-sdk
// does for RFC 8414 metadata).
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// MetadataDocument renders agentbot's client ID metadata document, to be
// served as application/json at docURL, which is its client_id: an HTTPS
// URL with a path (a loopback http URL is accepted for tests). The client
// is public (token_endpoint_auth_method none) and uses the authorization
// code and refresh token grants.
func MetadataDocument(docURL string, m ClientMetadata) ([]byte, error) {
	u, err := url.Parse(docURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) ||
		strings.Trim(u.Path, "/") == "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("oauth: client ID metadata document: %q is not an https URL with a path", docURL)
	}
	if len(m.RedirectURIs) == 0 {
		return nil, errors.New("oauth: client ID metadata document: no redirect URIs")
	}
	doc := struct {
		ClientID                string   `json:"client_id"`
		ClientName              string   `json:"client_name,omitempty"`
		ClientURI               string   `json:"client_uri,omitempty"`
		LogoURI                 string   `json:"logo_uri,omitempty"`
		RedirectURIs            []string `json:"redirect_uris"`
		GrantTypes              []string `json:"grant_types"`
		ResponseTypes           []string `json:"response_types"`
		TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	}{docURL, m.ClientName, m.ClientURI, m.LogoURI, m.RedirectURIs,
		[]string{"authorization_code", "refresh_token"}, []string{"code"}, AuthNone}
	return json.MarshalIndent(doc, "", "  ")
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// keyOf describes a client key without showing it.
func keyOf(k *ClientKey) string {
	if k == nil {
		return "(none)"
	}
	return k.alg + " (redacted)"
}

// redacted says whether a secret is set without showing it.
func redacted(s string) string {
	if s == "" {
		return "(none)"
	}
	return "(redacted)"
}

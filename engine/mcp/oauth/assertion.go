package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// ClientAssertionType is the client_assertion_type of a JWT client
// assertion (RFC 7523 section 2.2).
const ClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// AssertionLifetime is how long a client assertion is valid after it is
// signed; each token request signs a new one.
const AssertionLifetime = 2 * time.Minute

// The JWS algorithms a ClientKey signs with, by key type.
const (
	AlgES256 = "ES256" // ECDSA P-256 with SHA-256
	AlgES384 = "ES384" // ECDSA P-384 with SHA-384
	AlgES512 = "ES512" // ECDSA P-521 with SHA-512
	AlgRS256 = "RS256" // RSA PKCS #1 v1.5 with SHA-256
	AlgEdDSA = "EdDSA" // Ed25519
)

// minRSABits is the smallest RSA key accepted (RFC 7518 section 3.3).
const minRSABits = 2048

// ClientKey is the private key of a client that authenticates to the
// token endpoint with private_key_jwt (RFC 7523 section 2.2, OpenID
// Connect Core section 9): it signs a short-lived assertion for each
// request. It is a secret: it prints, logs and marshals as its algorithm
// and key id alone (only a Client's JSON, which is stored sealed, holds
// it), and no error of this package holds any of it.
type ClientKey struct {
	signer crypto.Signer
	alg    string
	hash   crypto.Hash // zero for EdDSA, which signs the message itself
	size   int         // ECDSA: the byte length of r and of s
	id     string
}

// ParseClientKey reads a PEM private key: PKCS #8 ("PRIVATE KEY"), SEC 1
// ("EC PRIVATE KEY", an "EC PARAMETERS" block before it is skipped) or
// PKCS #1 ("RSA PRIVATE KEY"). Its type gives the algorithm: ECDSA P-256
// signs ES256 (P-384 ES384, P-521 ES512), RSA of 2048 bits or more RS256,
// Ed25519 EdDSA. keyID, when set, goes in each assertion's kid header (for
// an authorization server that knows several keys of the client). A PEM
// whose line breaks were written as \n, as some .env files hold it, is
// read too. Errors say what is wrong without quoting the key.
func ParseClientKey(pemData []byte, keyID string) (*ClientKey, error) {
	if !strings.Contains(string(pemData), "\n") && strings.Contains(string(pemData), `\n`) {
		pemData = []byte(strings.ReplaceAll(string(pemData), `\n`, "\n"))
	}
	rest := pemData
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("oauth: client key: no PEM private key (want -----BEGIN PRIVATE KEY-----, EC PRIVATE KEY or RSA PRIVATE KEY)")
		}
		var key any
		var err error
		switch b.Type {
		case "EC PARAMETERS":
			continue
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("oauth: client key: the key is encrypted; give it unencrypted (openssl pkcs8 -nocrypt)")
		default:
			return nil, fmt.Errorf("oauth: client key: a PEM %q block is not a private key", b.Type)
		}
		if err != nil {
			// x509's messages are left out: they describe the key's bytes.
			return nil, fmt.Errorf("oauth: client key: the PEM %q block does not parse as one", b.Type)
		}
		k, err := clientKeyOf(key)
		if err != nil {
			return nil, err
		}
		k.id = keyID
		return k, nil
	}
}

// clientKeyOf is the ClientKey of a parsed private key.
func clientKeyOf(key any) (*ClientKey, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return &ClientKey{signer: k, alg: AlgES256, hash: crypto.SHA256, size: 32}, nil
		case elliptic.P384():
			return &ClientKey{signer: k, alg: AlgES384, hash: crypto.SHA384, size: 48}, nil
		case elliptic.P521():
			return &ClientKey{signer: k, alg: AlgES512, hash: crypto.SHA512, size: 66}, nil
		}
		return nil, fmt.Errorf("oauth: client key: the ECDSA curve %s has no JWS algorithm (want P-256, P-384 or P-521)", k.Curve.Params().Name)
	case *rsa.PrivateKey:
		if k.N.BitLen() < minRSABits {
			return nil, fmt.Errorf("oauth: client key: the RSA key has %d bits; RS256 needs at least %d", k.N.BitLen(), minRSABits)
		}
		return &ClientKey{signer: k, alg: AlgRS256, hash: crypto.SHA256}, nil
	case ed25519.PrivateKey:
		return &ClientKey{signer: k, alg: AlgEdDSA}, nil
	}
	return nil, fmt.Errorf("oauth: client key: a %T cannot sign a client assertion (want ECDSA, RSA or Ed25519)", key)
}

// Algorithm is the JWS algorithm the key signs with (AlgES256...).
func (k ClientKey) Algorithm() string { return k.alg }

// KeyID is the kid of its assertions; empty when none is sent.
func (k ClientKey) KeyID() string { return k.id }

// Public is the public key, which the authorization server verifies the
// assertions with (registered there as the client's JWK or JWKS).
func (k ClientKey) Public() crypto.PublicKey {
	if k.signer == nil {
		return nil
	}
	return k.signer.Public()
}

// String shows the algorithm and key id, never the key.
func (k ClientKey) String() string {
	return fmt.Sprintf("oauth.ClientKey{Alg:%s KeyID:%q Key:%s}", k.alg, k.id, redactedKey(k.signer))
}

// GoString is String.
func (k ClientKey) GoString() string { return k.String() }

// LogValue logs the algorithm and key id, never the key.
func (k ClientKey) LogValue() slog.Value {
	return slog.GroupValue(slog.String("alg", k.alg), slog.String("kid", k.id), slog.String("key", redactedKey(k.signer)))
}

// MarshalJSON hides the key; a Client's JSON, which its caller stores
// sealed, holds its key (as it holds its secret).
func (k ClientKey) MarshalJSON() ([]byte, error) { return json.Marshal(k.String()) }

// pem is the key in PKCS #8 PEM, for a Client's JSON.
func (k ClientKey) pem() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.signer)
	if err != nil {
		return nil, fmt.Errorf("oauth: client key: the %s key cannot be stored", k.alg)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func redactedKey(s crypto.Signer) string {
	if s == nil {
		return "(none)"
	}
	return "(redacted)"
}

// Assertion signs a client assertion for clientID to present to the
// authorization server audience (its issuer, or its token endpoint when
// it has no issuer): a JWT with iss and sub the client id, aud, iat and
// exp (now + AssertionLifetime), and a random jti, so that each one
// serves once (RFC 7523 section 3).
func (k *ClientKey) Assertion(clientID, audience string, now time.Time) (string, error) {
	if k == nil || k.signer == nil {
		return "", errors.New("oauth: client assertion: no client key")
	}
	if clientID == "" || audience == "" {
		return "", errors.New("oauth: client assertion: no client id or audience")
	}
	header := struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid,omitempty"`
	}{k.alg, "JWT", k.id}
	claims := struct {
		Iss string `json:"iss"`
		Sub string `json:"sub"`
		Aud string `json:"aud"`
		Iat int64  `json:"iat"`
		Exp int64  `json:"exp"`
		Jti string `json:"jti"`
	}{clientID, clientID, audience, now.Unix(), now.Add(AssertionLifetime).Unix(), rand.Text()}
	h, err := json.Marshal(header)
	if err != nil {
		return "", fmt.Errorf("oauth: client assertion: %w", err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("oauth: client assertion: %w", err)
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	sig, err := k.sign([]byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// sign is the JWS signature of input (RFC 7518 section 3): for ECDSA the
// fixed-length r || s, not ASN.1.
func (k *ClientKey) sign(input []byte) ([]byte, error) {
	if k.hash == 0 {
		sig, err := k.signer.Sign(rand.Reader, input, crypto.Hash(0))
		if err != nil {
			return nil, fmt.Errorf("oauth: client assertion: signing with %s failed", k.alg)
		}
		return sig, nil
	}
	h := k.hash.New()
	h.Write(input)
	digest := h.Sum(nil)
	if ec, ok := k.signer.(*ecdsa.PrivateKey); ok {
		r, s, err := ecdsa.Sign(rand.Reader, ec, digest)
		if err != nil {
			return nil, fmt.Errorf("oauth: client assertion: signing with %s failed", k.alg)
		}
		sig := make([]byte, 2*k.size)
		r.FillBytes(sig[:k.size])
		s.FillBytes(sig[k.size:])
		return sig, nil
	}
	sig, err := k.signer.Sign(rand.Reader, digest, k.hash)
	if err != nil {
		return nil, fmt.Errorf("oauth: client assertion: signing with %s failed", k.alg)
	}
	return sig, nil
}

package oauth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// testKey is a generated private key in PEM, as the config would hold it.
type testKey struct {
	name string
	pem  []byte
	key  crypto.Signer
	alg  string
}

// pemOf encodes der as a PEM block of type typ.
func pemOf(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func pkcs8(t *testing.T, k crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pemOf("PRIVATE KEY", der)
}

// testKeys generates one key of each kind ParseClientKey reads, in each
// PEM form.
func testKeys(t *testing.T) []testKey {
	t.Helper()
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	sec1, err := x509.MarshalECPrivateKey(p256)
	if err != nil {
		t.Fatal(err)
	}
	// openssl ecparam -genkey writes the curve's parameters first.
	params := pemOf("EC PARAMETERS", []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07})
	return []testKey{
		{"P-256 PKCS #8", pkcs8(t, p256), p256, AlgES256},
		{"P-256 SEC 1 after EC PARAMETERS", append(params, pemOf("EC PRIVATE KEY", sec1)...), p256, AlgES256},
		{"P-384", pkcs8(t, p384), p384, AlgES384},
		{"P-521", pkcs8(t, p521), p521, AlgES512},
		{"RSA PKCS #1", pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), rsaKey, AlgRS256},
		{"RSA PKCS #8", pkcs8(t, rsaKey), rsaKey, AlgRS256},
		{"Ed25519", pkcs8(t, edKey), edKey, AlgEdDSA},
	}
}

// jwt is a decoded client assertion.
type jwt struct {
	Header struct {
		Alg, Typ, Kid string
	}
	Claims struct {
		Iss, Sub, Aud, Jti string
		Iat, Exp           int64
	}
}

// verifyJWS decodes a compact JWS and checks its signature with pub, by
// RFC 7518's rules for its alg (written apart from ClientKey.sign, so the
// two check each other).
func verifyJWS(t *testing.T, token string, pub crypto.PublicKey) jwt {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("%d parts in the assertion", len(parts))
	}
	var j jwt
	for i, v := range []any{&j.Header, &j.Claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	input := []byte(parts[0] + "." + parts[1])
	ok := false
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		var digest []byte
		switch j.Header.Alg {
		case AlgES256:
			s := sha256.Sum256(input)
			digest = s[:]
		case AlgES384:
			s := sha512.Sum384(input)
			digest = s[:]
		case AlgES512:
			s := sha512.Sum512(input)
			digest = s[:]
		}
		n := (k.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*n {
			t.Fatalf("%s signature of %d bytes, want r||s of %d", j.Header.Alg, len(sig), 2*n)
		}
		ok = digest != nil && ecdsa.Verify(k, digest, new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:]))
	case *rsa.PublicKey:
		s := sha256.Sum256(input)
		ok = j.Header.Alg == AlgRS256 && rsa.VerifyPKCS1v15(k, crypto.SHA256, s[:], sig) == nil
	case ed25519.PublicKey:
		ok = j.Header.Alg == AlgEdDSA && ed25519.Verify(k, input, sig)
	}
	if !ok {
		t.Fatalf("the %s signature does not verify with the public key", j.Header.Alg)
	}
	return j
}

// Each kind of key signs an assertion that verifies with its public key,
// with the claims RFC 7523 asks for and a new jti each time.
func TestClientKeyAssertion(t *testing.T) {
	now := time.Now()
	for _, tk := range testKeys(t) {
		t.Run(tk.name, func(t *testing.T) {
			k, err := ParseClientKey(tk.pem, "kid-1")
			if err != nil {
				t.Fatal(err)
			}
			if k.Algorithm() != tk.alg || k.KeyID() != "kid-1" {
				t.Fatalf("alg %s kid %q, want %s", k.Algorithm(), k.KeyID(), tk.alg)
			}
			a, err := k.Assertion("client-1", "https://as.example", now)
			if err != nil {
				t.Fatal(err)
			}
			j := verifyJWS(t, a, tk.key.Public())
			c := j.Claims
			if j.Header.Alg != tk.alg || j.Header.Typ != "JWT" || j.Header.Kid != "kid-1" ||
				c.Iss != "client-1" || c.Sub != "client-1" || c.Aud != "https://as.example" ||
				c.Iat != now.Unix() || c.Exp != now.Add(AssertionLifetime).Unix() || len(c.Jti) < 20 {
				t.Fatalf("assertion = %+v", j)
			}
			b, _ := k.Assertion("client-1", "https://as.example", now)
			if again := verifyJWS(t, b, tk.key.Public()); again.Claims.Jti == c.Jti {
				t.Fatalf("two assertions share the jti %q", c.Jti)
			}
		})
	}
	k, err := ParseClientKey(testKeys(t)[0].pem, "")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := k.Assertion("c", "https://as.example", now)
	h, _ := base64.RawURLEncoding.DecodeString(strings.Split(a, ".")[0])
	if strings.Contains(string(h), "kid") {
		t.Fatalf("a key without an id sends a kid: %s", h)
	}
	if _, err := k.Assertion("", "https://as.example", now); err == nil {
		t.Fatal("an assertion without a client id")
	}
	if _, err := (*ClientKey)(nil).Assertion("c", "https://as.example", now); err == nil {
		t.Fatal("an assertion without a key")
	}
}

// Keys that cannot sign are refused with a message that says why and
// quotes nothing of the key; a PEM with its line breaks written as \n
// (as an .env file may hold it) is read.
func TestParseClientKeyRefuses(t *testing.T) {
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	good := testKeys(t)[0].pem
	body := string(bytes.Split(good, []byte("\n"))[1]) // a line of the key's base64
	cert := pemOf("CERTIFICATE", []byte("not really a certificate"))
	broken := bytes.Replace(good, []byte(body), []byte(strings.Repeat("A", len(body))), 1)
	for name, tc := range map[string]struct {
		pem  []byte
		want string
	}{
		"not PEM":       {[]byte(body), "no PEM private key"},
		"empty":         {nil, "no PEM private key"},
		"a certificate": {cert, `"CERTIFICATE" block is not a private key`},
		"encrypted":     {pemOf("ENCRYPTED PRIVATE KEY", []byte{1, 2, 3}), "encrypted"},
		"garbled":       {broken, "does not parse"},
		"P-224":         {pkcs8(t, p224), "P-224 has no JWS algorithm"},
		"RSA 1024":      {pkcs8(t, small), "1024 bits"},
	} {
		_, err := ParseClientKey(tc.pem, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), body) || strings.Contains(err.Error(), body[:16]) {
			t.Errorf("%s: the error quotes the key: %v", name, err)
		}
	}
	escaped := strings.ReplaceAll(string(good), "\n", `\n`)
	if k, err := ParseClientKey([]byte(escaped), ""); err != nil || k.Algorithm() != AlgES256 {
		t.Fatalf("a PEM with \\n escapes = %v, %v", k, err)
	}
}

// A key prints, logs and marshals as its algorithm, never its value:
// alone, in a Client and in Credentials, however it is formatted.
func TestClientKeyRedacted(t *testing.T) {
	tk := testKeys(t)[0]
	k, err := ParseClientKey(tk.pem, "kid-9")
	if err != nil {
		t.Fatal(err)
	}
	d := tk.key.(*ecdsa.PrivateKey).D
	c := Client{ID: "cid", Key: k, AuthMethod: AuthPrivateKeyJWT}
	cr := Credentials{ClientID: "cid", ClientKey: k}
	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&buf, nil), slog.NewTextHandler(&buf, nil)} {
		slog.New(h).Info("x", "key", k, "keyv", *k, "client", c, "creds", cr)
	}
	for _, v := range []any{k, *k, c, cr, &c, []*ClientKey{k}} {
		fmt.Fprintf(&buf, "%v %+v %#v %s\n", v, v, v, v)
	}
	for _, v := range []any{k, cr} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
	}
	out := buf.String()
	body := string(bytes.Split(tk.pem, []byte("\n"))[1])
	for _, secret := range []string{body[:16], d.String(), d.Text(16), base64.RawURLEncoding.EncodeToString(d.Bytes())} {
		if strings.Contains(out, secret) {
			t.Fatalf("the key printed:\n%s", out)
		}
	}
	if !strings.Contains(out, "ES256") || !strings.Contains(out, "kid-9") {
		t.Fatalf("nothing useful printed:\n%s", out)
	}
}

// A Client's JSON, which the store seals, holds its key as it holds its
// secret: read back, the key signs assertions its public key verifies;
// a stored key that no longer parses is an error that quotes none of it.
func TestClientKeyStored(t *testing.T) {
	tk := testKeys(t)[4] // RSA, from PKCS #1: stored as PKCS #8
	k, err := ParseClientKey(tk.pem, "kid-9")
	if err != nil {
		t.Fatal(err)
	}
	c := Client{ID: "cid", Key: k, AuthMethod: AuthPrivateKeyJWT, Issuer: "https://as.example", RedirectURIs: []string{"https://bot.example/cb"}}
	back := roundTrip(t, c)
	if back.Key == nil || back.Key.Algorithm() != AlgRS256 || back.Key.KeyID() != "kid-9" || back.ID != "cid" ||
		back.AuthMethod != AuthPrivateKeyJWT || back.Issuer != c.Issuer || len(back.RedirectURIs) != 1 {
		t.Fatalf("stored and read back = %v", back)
	}
	a, err := back.Key.Assertion("cid", back.audience(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if j := verifyJWS(t, a, tk.key.Public()); j.Header.Kid != "kid-9" || j.Claims.Aud != "https://as.example" {
		t.Fatalf("assertion = %+v", j)
	}
	if plain := roundTrip(t, Client{ID: "pub", AuthMethod: AuthNone}); plain.Key != nil {
		t.Fatalf("a client without a key = %v", plain)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	stored, _ := m["client_key"].(string)
	body := strings.Split(stored, "\n")[1]
	m["client_key"] = strings.Replace(stored, body, strings.Repeat("C", len(body)), 1)
	b, _ = json.Marshal(m)
	var bad Client
	err = json.Unmarshal(b, &bad)
	if err == nil || !strings.Contains(err.Error(), `stored client "cid"`) || strings.Contains(err.Error(), body[:16]) {
		t.Fatalf("a garbled stored key = %v", err)
	}
}

// Every token request of a private_key_jwt client carries a new
// assertion for the issuer and no secret: client credentials, refresh
// and revocation; a client without its key fails before any request,
// saying so; the pre-registered client of a key authenticates with it.
func TestPrivateKeyJWTRequests(t *testing.T) {
	as := newStubAS(t, func(m *oauthex.AuthServerMeta) {
		m.TokenEndpointAuthMethodsSupported = []string{"client_secret_basic", "private_key_jwt"}
	})
	tk := testKeys(t)[0]
	k, err := ParseClientKey(tk.pem, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := Discovery{Resource: "https://mcp.example/mcp", AuthServer: as.meta, Scopes: []string{"read"}}

	tok, err := ClientCredentials(ctx, nil, d, Credentials{ClientID: "svc", ClientKey: k})
	if err != nil || tok.AccessToken != "new-access-token" {
		t.Fatalf("client credentials = %v, %v", tok, err)
	}
	c, err := Register(ctx, nil, d, RegisterOptions{Preregistered: &Credentials{ClientID: "svc", ClientKey: k, ClientSecret: "ignored-secret"}})
	if err != nil || c.AuthMethod != AuthPrivateKeyJWT || c.Key != k || c.Secret != "" {
		t.Fatalf("pre-registered client = %v, %v", c, err)
	}
	tok.RefreshToken = "rt-1"
	if _, err := Refresh(ctx, nil, c, tok); err != nil {
		t.Fatal(err)
	}
	if err := Revoke(ctx, nil, c, tok); err != nil {
		t.Fatal(err)
	}

	as.mu.Lock()
	forms := as.reqs
	as.mu.Unlock()
	if len(forms) != 4 { // client credentials, refresh, revoke refresh token, revoke access token
		t.Fatalf("%d requests: %v", len(forms), forms)
	}
	jtis := map[string]bool{}
	for i, f := range forms {
		if f.Get("client_assertion_type") != ClientAssertionType || f.Has("client_secret") || f.Get("client_id") != "svc" {
			t.Fatalf("request %d = %v", i, f)
		}
		j := verifyJWS(t, f.Get("client_assertion"), tk.key.Public())
		if j.Claims.Iss != "svc" || j.Claims.Sub != "svc" || j.Claims.Aud != as.URL || jtis[j.Claims.Jti] {
			t.Fatalf("request %d's assertion = %+v", i, j)
		}
		jtis[j.Claims.Jti] = true
	}
	if forms[0].Get("grant_type") != "client_credentials" || forms[0].Get("resource") != d.Resource || forms[1].Get("grant_type") != "refresh_token" {
		t.Fatalf("the grants = %v, %v", forms[0], forms[1])
	}

	stored := c
	stored.Key = nil
	_, err = Refresh(ctx, nil, stored, tok)
	if err == nil || !strings.Contains(err.Error(), "private key is not configured") {
		t.Fatalf("refresh without the key = %v", err)
	}
	if _, err := ClientCredentials(ctx, nil, d, Credentials{ClientID: "svc"}); err == nil {
		t.Fatal("client credentials without a secret or key")
	}
	as.mu.Lock()
	n := len(as.reqs)
	as.mu.Unlock()
	if n != 4 {
		t.Fatalf("a request went out without the key (%d requests)", n)
	}
}

// An assertion the server refuses gives its error, without the
// assertion.
func TestPrivateKeyJWTRefused(t *testing.T) {
	var seen string
	as := newStubAS(t, nil)
	as.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		seen = r.PostForm.Get("client_assertion")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"invalid_client","error_description":"bad assertion","echo":%q}`, seen)
	})
	k, err := ParseClientKey(testKeys(t)[0].pem, "")
	if err != nil {
		t.Fatal(err)
	}
	d := Discovery{Resource: "https://mcp.example/mcp", AuthServer: as.meta}
	_, err = ClientCredentials(context.Background(), nil, d, Credentials{ClientID: "svc", ClientKey: k})
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "invalid_client" || seen == "" || strings.Contains(err.Error(), seen) {
		t.Fatalf("refused = %v", err)
	}
}

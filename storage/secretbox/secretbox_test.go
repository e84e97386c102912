package secretbox

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newKey(t *testing.T) (Key, []byte) {
	t.Helper()
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	k, err := NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	return k, raw
}

func ring(t *testing.T, current Key, older ...Key) *Keyring {
	t.Helper()
	kr, err := NewKeyring(current, older...)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

const secret = "gho_the-access-token-0123456789"

var ad = []byte("credential/T1/U1/github")

func TestRoundTrip(t *testing.T) {
	k, _ := newKey(t)
	kr := ring(t, k)
	sealed, err := kr.Seal([]byte(secret), ad)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte(secret)) || bytes.Contains(sealed, []byte("access")) {
		t.Fatal("the sealed value holds the plaintext")
	}
	if id, err := KeyID(sealed); err != nil || id != k.ID() || id != kr.Current() {
		t.Fatalf("KeyID = %q, %v; want %q", id, err, k.ID())
	}
	got, err := kr.Open(sealed, ad)
	if err != nil || string(got) != secret {
		t.Fatalf("Open = %q, %v", got, err)
	}
	again, _ := kr.Seal([]byte(secret), ad)
	if bytes.Equal(again, sealed) {
		t.Fatal("two seals of one plaintext are equal: the nonce is not random")
	}
}

func TestWrongKey(t *testing.T) {
	k1, _ := newKey(t)
	k2, _ := newKey(t)
	sealed, _ := ring(t, k1).Seal([]byte(secret), ad)
	_, err := ring(t, k2).Open(sealed, ad)
	if !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("Open under another key: %v, want ErrUnknownKey", err)
	}
	if !strings.Contains(err.Error(), k1.ID()) {
		t.Errorf("the error does not name the key id: %v", err)
	}
	// A forged id that names k2 does not help: the id is authenticated.
	forged := bytes.Clone(sealed)
	copy(forged[2:], k2.ID())
	if _, err := ring(t, k2).Open(forged, ad); !errors.Is(err, ErrOpen) {
		t.Fatalf("Open with a forged key id: %v, want ErrOpen", err)
	}
}

func TestTampered(t *testing.T) {
	k, _ := newKey(t)
	kr := ring(t, k)
	sealed, _ := kr.Seal([]byte(secret), ad)
	for i := 2 + len(k.ID()); i < len(sealed); i++ {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x01
		if _, err := kr.Open(bad, ad); !errors.Is(err, ErrOpen) {
			t.Fatalf("byte %d flipped: %v, want ErrOpen", i, err)
		}
	}
	if _, err := kr.Open(sealed[:len(sealed)-1], ad); !errors.Is(err, ErrOpen) {
		t.Fatalf("truncated: %v, want ErrOpen", err)
	}
	for _, b := range [][]byte{nil, {1}, {2, 0}, []byte("plain text, not sealed")} {
		if _, err := kr.Open(b, ad); !errors.Is(err, ErrFormat) {
			t.Errorf("Open(%q): %v, want ErrFormat", b, err)
		}
	}
}

func TestWrongAD(t *testing.T) {
	k, _ := newKey(t)
	kr := ring(t, k)
	sealed, _ := kr.Seal([]byte(secret), ad)
	for _, other := range []string{"credential/T1/U2/github", "credential/T2/U1/github", "credential/T1/U1/linear", ""} {
		if _, err := kr.Open(sealed, []byte(other)); !errors.Is(err, ErrOpen) {
			t.Errorf("Open for %q: %v, want ErrOpen", other, err)
		}
	}
}

func TestRotation(t *testing.T) {
	old, _ := newKey(t)
	cur, _ := newKey(t)
	sealedOld, _ := ring(t, old).Seal([]byte(secret), ad)
	kr := ring(t, cur, old)
	if kr.Current() != cur.ID() || !kr.Holds(old.ID()) {
		t.Fatalf("keyring current %s, holds old: %v", kr.Current(), kr.Holds(old.ID()))
	}
	got, err := kr.Open(sealedOld, ad)
	if err != nil || string(got) != secret {
		t.Fatalf("Open of a value sealed under the older key: %q, %v", got, err)
	}
	resealed, err := kr.Seal(got, ad)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := KeyID(resealed); id != cur.ID() {
		t.Fatalf("resealed under %s, want the current %s", id, cur.ID())
	}
	// Once the old key is dropped, only the resealed value opens.
	only := ring(t, cur)
	if _, err := only.Open(resealed, ad); err != nil {
		t.Fatal(err)
	}
	if _, err := only.Open(sealedOld, ad); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("old value without the old key: %v", err)
	}
}

func TestParseKey(t *testing.T) {
	_, raw := newKey(t)
	want, _ := NewKey(raw)
	for name, text := range map[string]string{
		"hex":        hex.EncodeToString(raw),
		"HEX":        strings.ToUpper(hex.EncodeToString(raw)),
		"base64":     base64.StdEncoding.EncodeToString(raw),
		"raw base64": base64.RawStdEncoding.EncodeToString(raw),
		"url base64": base64.URLEncoding.EncodeToString(raw),
		"newline":    base64.StdEncoding.EncodeToString(raw) + "\n",
	} {
		k, err := ParseKey(text)
		if err != nil || k.ID() != want.ID() {
			t.Errorf("%s: %v, id %s want %s", name, err, k.ID(), want.ID())
		}
	}
	short := base64.StdEncoding.EncodeToString(raw[:16])
	for text, msg := range map[string]string{
		"":                             "empty",
		short:                          "decodes to 16 bytes, need 32",
		hex.EncodeToString(raw[:16]):   "need 32",
		"not a key at all!":            "neither base64 nor hex",
		hex.EncodeToString(raw) + "00": "need 32",
		base64.StdEncoding.EncodeToString(append(raw, 1)): "decodes to 33 bytes",
	} {
		_, err := ParseKey(text)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseKey(%q) = %v, want %q", text, err, msg)
		}
		if err != nil && len(text) > 8 && strings.Contains(err.Error(), text) {
			t.Errorf("the error shows the key text: %v", err)
		}
	}
}

func TestLoad(t *testing.T) {
	_, raw1 := newKey(t)
	_, raw2 := newKey(t)
	k1, _ := NewKey(raw1)
	k2, _ := NewKey(raw2)
	b64 := base64.StdEncoding.EncodeToString
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	if _, err := Load(env(nil)); !errors.Is(err, ErrNoKey) {
		t.Fatalf("no key: %v", err)
	}
	if !strings.Contains(ErrNoKey.Error(), EnvKey) {
		t.Fatalf("ErrNoKey does not name %s", EnvKey)
	}
	kr, err := Load(env(map[string]string{EnvKey: b64(raw1), EnvPreviousKeys: hex.EncodeToString(raw2)}))
	if err != nil || kr.Current() != k1.ID() || !kr.Holds(k2.ID()) {
		t.Fatalf("env keys: %v", err)
	}
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, []byte("# rotated 2026-03\n"+b64(raw2)+"\n\n"+b64(raw1)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kr, err = Load(env(map[string]string{EnvKeyFile: file}))
	if err != nil || kr.Current() != k2.ID() || !kr.Holds(k1.ID()) {
		t.Fatalf("file keys: %v", err)
	}
	if _, err := Load(env(map[string]string{EnvKeyFile: file, EnvKey: b64(raw1)})); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("both set: %v", err)
	}
	_, err = Load(env(map[string]string{EnvKey: b64(raw1[:20])}))
	if err == nil || !strings.Contains(err.Error(), EnvKey) || !strings.Contains(err.Error(), "need 32") {
		t.Fatalf("short key: %v", err)
	}
	if _, err := Load(env(map[string]string{EnvKeyFile: filepath.Join(t.TempDir(), "missing")})); err == nil {
		t.Fatal("a missing key file loaded")
	}
}

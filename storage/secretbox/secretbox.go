// Package secretbox seals secrets at rest (OAuth tokens, client secrets,
// pending authorization flows) with AES-256-GCM, under keys an operator
// gives agentbot (AGENTBOT_SECRET_KEY or AGENTBOT_SECRET_KEY_FILE).
//
// A sealed value names the key that sealed it (its id, derived from the
// key itself), so a Keyring that holds the current key and older ones
// opens values sealed under any of them while it seals under the current
// one: that is how a key is rotated. Every value is sealed with additional
// data that binds it to its record (its team, person and server): a
// sealed value copied to another record does not open.
//
// Nothing here ever puts a key or a plaintext into an error.
package secretbox

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// The settings that hold the keys.
const (
	// EnvKey holds the current key: 32 bytes, base64 or hex.
	EnvKey = "AGENTBOT_SECRET_KEY"
	// EnvKeyFile names a file whose first key is the current one; the
	// keys on its further lines are older ones, still opened.
	EnvKeyFile = "AGENTBOT_SECRET_KEY_FILE"
	// EnvPreviousKeys holds older keys (comma or space separated), opened
	// but never sealed with, while `agentbot rotate-key` re-seals.
	EnvPreviousKeys = "AGENTBOT_SECRET_KEY_PREVIOUS"
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

// version is the first byte of a sealed value: its format.
const version = 1

// nonceSize is GCM's standard nonce size.
const nonceSize = 12

// idSize is the length of a key id in bytes (hex in IDs).
const idSize = 8

var (
	// ErrNoKey means no key is configured.
	ErrNoKey = errors.New("no secret key: set " + EnvKey + " to 32 random bytes in base64 or hex (for example the output of `openssl rand -base64 32`), or " + EnvKeyFile + " to a file holding one")
	// ErrUnknownKey means a value was sealed under a key the keyring does
	// not hold.
	ErrUnknownKey = errors.New("sealed under a key the keyring does not hold")
	// ErrOpen means a value did not open: another key with the same id
	// (impossible by chance), tampered bytes, or a value moved to another
	// record than the one it was sealed for.
	ErrOpen = errors.New("the sealed value does not open: tampered with, or moved from another record")
	// ErrFormat means the bytes are not a sealed value.
	ErrFormat = errors.New("not a sealed value")
)

// Key is one AES-256 key and its id.
type Key struct {
	id   string
	aead cipher.AEAD
}

// ID is the key's id: hex of the first 8 bytes of a SHA-256 of the key,
// so it names the key without revealing it.
func (k Key) ID() string { return k.id }

// String names the key by its id only.
func (k Key) String() string { return "secretbox.Key{" + k.id + "}" }

// GoString is String.
func (k Key) GoString() string { return k.String() }

// NewKey makes a Key of 32 raw bytes.
func NewKey(raw []byte) (Key, error) {
	if len(raw) != KeySize {
		return Key{}, fmt.Errorf("secret key: %d bytes, need %d", len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return Key{}, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return Key{}, fmt.Errorf("secret key: %w", err)
	}
	sum := sha256.Sum256(append([]byte("agentbot secretbox key id\x00"), raw...))
	return Key{id: hex.EncodeToString(sum[:idSize]), aead: aead}, nil
}

// ParseKey reads a key written as 64 hex digits or as base64 (standard
// or URL alphabet, padded or not) of 32 bytes. Surrounding space is
// ignored. The error says what is wrong, never what the text was.
func ParseKey(text string) (Key, error) {
	s := strings.TrimSpace(text)
	if s == "" {
		return Key{}, errors.New("secret key: empty")
	}
	if len(s) == 2*KeySize {
		if raw, err := hex.DecodeString(s); err == nil {
			return NewKey(raw)
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		raw, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		if len(raw) != KeySize {
			return Key{}, fmt.Errorf("secret key: decodes to %d bytes, need %d (make one with `openssl rand -base64 32`)", len(raw), KeySize)
		}
		return NewKey(raw)
	}
	if len(s)%2 == 0 {
		if raw, err := hex.DecodeString(s); err == nil {
			return Key{}, fmt.Errorf("secret key: %d bytes of hex, need %d (make one with `openssl rand -hex 32`)", len(raw), KeySize)
		}
	}
	return Key{}, fmt.Errorf("secret key: neither base64 nor hex (%d characters); make one with `openssl rand -base64 32`", len(s))
}

// Keyring seals under its current key and opens under any of its keys.
// It is safe for concurrent use.
type Keyring struct {
	current Key
	keys    map[string]Key
}

// NewKeyring makes a keyring that seals under current and also opens
// values sealed under older.
func NewKeyring(current Key, older ...Key) (*Keyring, error) {
	if current.aead == nil {
		return nil, errors.New("secretbox: no current key")
	}
	kr := &Keyring{current: current, keys: map[string]Key{current.id: current}}
	for _, k := range older {
		if k.aead == nil {
			return nil, errors.New("secretbox: an older key is empty")
		}
		kr.keys[k.id] = k
	}
	return kr, nil
}

// Current is the id of the key new values are sealed under.
func (kr *Keyring) Current() string { return kr.current.id }

// Holds reports whether the keyring holds the key with id.
func (kr *Keyring) Holds(id string) bool { _, ok := kr.keys[id]; return ok }

// Seal encrypts plaintext under the current key, bound to ad (the
// record's key): the result is version, key id, nonce, ciphertext.
func (kr *Keyring) Seal(plaintext, ad []byte) ([]byte, error) {
	k := kr.current
	header := append([]byte{version, byte(len(k.id))}, k.id...)
	out := make([]byte, len(header)+nonceSize, len(header)+nonceSize+len(plaintext)+k.aead.Overhead())
	copy(out, header)
	if _, err := rand.Read(out[len(header):]); err != nil {
		return nil, fmt.Errorf("secretbox: nonce: %w", err)
	}
	return k.aead.Seal(out, out[len(header):], plaintext, additional(header, ad)), nil
}

// Open decrypts a value Seal made under any key of the keyring, for the
// same ad. A value of another record, tampered with, or sealed under a
// key the keyring lacks fails (ErrOpen, ErrUnknownKey).
func (kr *Keyring) Open(sealed, ad []byte) ([]byte, error) {
	id, header, body, err := split(sealed)
	if err != nil {
		return nil, err
	}
	k, ok := kr.keys[id]
	if !ok {
		return nil, fmt.Errorf("secretbox: %w (%s; the current key is %s)", ErrUnknownKey, id, kr.current.id)
	}
	plain, err := k.aead.Open(nil, body[:nonceSize], body[nonceSize:], additional(header, ad))
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", ErrOpen)
	}
	return plain, nil
}

// KeyID returns the id of the key a value was sealed under.
func KeyID(sealed []byte) (string, error) {
	id, _, _, err := split(sealed)
	return id, err
}

// split parses a sealed value: the key id, the header (version and id)
// and the rest (nonce, ciphertext and tag).
func split(sealed []byte) (id string, header, body []byte, err error) {
	if len(sealed) < 2 || sealed[0] != version {
		return "", nil, nil, fmt.Errorf("secretbox: %w", ErrFormat)
	}
	n := int(sealed[1])
	if len(sealed) < 2+n+nonceSize+16 {
		return "", nil, nil, fmt.Errorf("secretbox: %w (too short)", ErrFormat)
	}
	return string(sealed[2 : 2+n]), sealed[:2+n], sealed[2+n:], nil
}

// additional is the GCM additional data: the header, so the key id cannot
// be swapped, then the caller's ad.
func additional(header, ad []byte) []byte {
	return append(append(make([]byte, 0, len(header)+len(ad)), header...), ad...)
}

// Load reads the keyring from the settings: the current key from EnvKey
// or from the file EnvKeyFile names (setting both is an error), older keys
// from that file's further lines and from EnvPreviousKeys. No key at all
// is ErrNoKey. getenv is os.Getenv in production.
func Load(getenv func(string) string) (*Keyring, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	texts, from, err := keyTexts(getenv)
	if err != nil {
		return nil, err
	}
	keys, err := parseKeys(texts, from)
	if err != nil {
		return nil, err
	}
	older, err := parseKeys(strings.FieldsFunc(getenv(EnvPreviousKeys), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }), EnvPreviousKeys)
	if err != nil {
		return nil, err
	}
	keys = append(keys, older...)
	return NewKeyring(keys[0], keys[1:]...)
}

// keyTexts reads the current key's text (and the key file's older ones)
// and names where they came from.
func keyTexts(getenv func(string) string) ([]string, string, error) {
	inline, file := strings.TrimSpace(getenv(EnvKey)), strings.TrimSpace(getenv(EnvKeyFile))
	switch {
	case inline != "" && file != "":
		return nil, "", fmt.Errorf("set %s or %s, not both", EnvKey, EnvKeyFile)
	case inline != "":
		return []string{inline}, EnvKey, nil
	case file != "":
		texts, err := keyFileLines(file)
		return texts, EnvKeyFile + " " + file, err
	case strings.TrimSpace(getenv(EnvPreviousKeys)) != "":
		return nil, "", fmt.Errorf("%s is set but no current key: %w", EnvPreviousKeys, ErrNoKey)
	}
	return nil, "", ErrNoKey
}

// keyFileLines are the keys of a key file: its lines that are neither
// empty nor comments.
func keyFileLines(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvKeyFile, err)
	}
	var texts []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			texts = append(texts, line)
		}
	}
	if len(texts) == 0 {
		return nil, fmt.Errorf("%s: %s holds no key", EnvKeyFile, file)
	}
	return texts, nil
}

// parseKeys parses key texts from one setting (from, for errors).
func parseKeys(texts []string, from string) ([]Key, error) {
	keys := make([]Key, 0, len(texts))
	for i, t := range texts {
		k, err := ParseKey(t)
		if err != nil {
			return nil, fmt.Errorf("%s (key %d): %w", from, i+1, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

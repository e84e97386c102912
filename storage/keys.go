package storage

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
)

// MaxKeyLen bounds caller-given keys (session keys, seen keys, channels).
const MaxKeyLen = 1024

// maxIDLen bounds session ids accepted from callers.
const maxIDLen = 64

// idEncoding writes ids in lowercase base32 without padding: [a-z2-7].
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns a random 13-character session id for which taken is
// false.
func NewID(taken func(id string) bool) (string, error) {
	for range 10 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("new session id: %w", err)
		}
		id := idEncoding.EncodeToString(b[:])
		if !taken(id) {
			return id, nil
		}
	}
	return "", errors.New("new session id: no free id after 10 tries")
}

// CheckID accepts only session ids that are safe as one path element:
// lowercase letters and digits.
func CheckID(id string) error {
	if id == "" {
		return errors.New("empty session id")
	}
	if len(id) > maxIDLen {
		return fmt.Errorf("session id too long (%d bytes, max %d)", len(id), maxIDLen)
	}
	if strings.IndexFunc(id, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) >= 0 {
		return fmt.Errorf("invalid session id %q: only a-z and 0-9 allowed", id)
	}
	return nil
}

// CheckKey rejects an empty or oversized caller key; what names it in the
// error.
func CheckKey(what, key string) error {
	if key == "" {
		return fmt.Errorf("empty %s", what)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%s too long (%d bytes, max %d)", what, len(key), MaxKeyLen)
	}
	return nil
}

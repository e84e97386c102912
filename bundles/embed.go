// Package bundles holds the sample bundles that ship with agentbot, our own
// writing, embedded in the binary so that a binary alone can offer them.
package bundles

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FS holds the sample bundles, one folder each (product-team/).
//
//go:embed product-team
var FS embed.FS

// Extract writes the embedded bundles into a folder under dir named after
// their content, and returns it; a folder already written for the same
// content is reused. The bundles are written to a temporary sibling first
// and renamed into place, so a folder that exists is whole.
func Extract(dir string) (string, error) {
	sum, err := digest()
	if err != nil {
		return "", fmt.Errorf("sample bundles: %w", err)
	}
	final := filepath.Join(dir, "samples-"+sum[:16])
	if st, err := os.Stat(final); err == nil && st.IsDir() {
		return final, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("sample bundles: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".samples-*")
	if err != nil {
		return "", fmt.Errorf("sample bundles: %w", err)
	}
	defer os.RemoveAll(tmp)
	err = fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(tmp, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := FS.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("sample bundles: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if st, serr := os.Stat(final); serr == nil && st.IsDir() {
			return final, nil // another process wrote it first
		}
		return "", fmt.Errorf("sample bundles: %w", err)
	}
	return final, nil
}

// digest is the SHA-256 of every embedded file's path and content.
func digest() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := FS.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(data))
		h.Write(data)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

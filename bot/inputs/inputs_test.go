package inputs

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A shared file's name stays inside the inputs folder whatever it holds.
func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"prd.md":           "prd.md",
		"../../etc/passwd": "passwd",
		`..\..\boot.ini`:   "boot.ini",
		".env":             "F1-env",
		"..":               "F1-",
		"":                 "F1-",
		"a\x00b\nc.txt":    "abc.txt",
	} {
		if got := SafeName(in, "F1"); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// A file within the cap is saved whole; one over it fails and leaves
// nothing behind, not even the temporary file.
func TestSaveCapsTheSize(t *testing.T) {
	dir := t.TempDir()
	data, err := Save(filepath.Join(dir, "ok.txt"), 10, func(w io.Writer) error {
		_, err := io.WriteString(w, "0123456789")
		return err
	})
	if got, _ := os.ReadFile(filepath.Join(dir, "ok.txt")); err != nil || string(data) != "0123456789" || string(got) != "0123456789" {
		t.Fatalf("within the cap: %q, on disk %q, %v", data, got, err)
	}
	_, err = Save(filepath.Join(dir, "big.txt"), 10, func(w io.Writer) error {
		_, err := io.WriteString(w, strings.Repeat("x", 11))
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "larger than the limit") {
		t.Fatalf("over the cap: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

// Package inputs saves the files people share with the bot into a
// session's inputs folder: under a size cap, by a temporary file renamed
// into place, with a name that stays inside the folder.
package inputs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Save writes what fetch streams into dst through a temporary file in its
// folder, failing once more than limit bytes come, and returns the bytes
// (for the store: no read back from disk). dst is left untouched on
// failure.
func Save(dst string, limit int64, fetch func(w io.Writer) error) ([]byte, error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".download-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	var buf bytes.Buffer
	err = fetch(&capWriter{w: io.MultiWriter(tmp, &buf), left: limit})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), os.Rename(tmp.Name(), dst)
}

// capWriter fails once more than left bytes were written.
type capWriter struct {
	w    io.Writer
	left int64
}

// Write writes p, or fails when it would pass the cap.
func (c *capWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		return 0, fmt.Errorf("file is larger than the limit")
	}
	n, err := c.w.Write(p)
	c.left -= int64(n)
	return n, err
}

// SafeName is a file name that stays inside the inputs folder: its base
// name without control characters, prefixed with the file's id when it
// would be hidden or empty.
func SafeName(name, id string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if r < 32 || r == '/' || r == 0 {
			return -1
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." || strings.HasPrefix(name, ".") {
		name = id + "-" + strings.TrimLeft(name, ".")
	}
	return name
}

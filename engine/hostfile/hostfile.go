// Package hostfile reads the host files the catalog and the customization
// load (agent files, manifests, configs, SKILL.md, TOML layers): regular
// files only, checked before and after opening, opened so that a FIFO or a
// device can never block the process, and capped in size.
package hostfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular is returned for a folder, FIFO, socket or device.
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError is returned for a file over the cap.
type TooLargeError struct{ Size, Limit int64 }

// Error says the size and the cap.
func (e *TooLargeError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("file too large (%d bytes, limit %d)", e.Size, e.Limit)
	}
	return fmt.Sprintf("file too large (limit %d bytes)", e.Limit)
}

// Read returns the content of the regular file at path, at most limit
// bytes. It stats the path first and refuses anything but a regular file
// without opening it; the open itself does not block (O_NONBLOCK on unix),
// and the opened file is checked again, so a FIFO swapped in between
// cannot hang the caller.
func Read(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		if st.IsDir() {
			return nil, errors.New("is a directory, not a file")
		}
		return nil, ErrNotRegular
	}
	if st.Size() > limit {
		return nil, &TooLargeError{Size: st.Size(), Limit: limit}
	}
	f, err := openNoBlock(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err = f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// Error is a refused or failed sandbox operation. Its message is short, says
// what is allowed and never contains a host path: Path is a virtual path or
// the relative path as given, and the underlying error (which may name host
// paths) is kept in Err for errors.Is/As but not printed.
type Error struct {
	Op   string // "read", "write", "list", "resolve", "hostpath" or "open"
	Path string // virtual path or relative input; empty when neither is safe to show
	Msg  string // what went wrong and what is allowed
	Err  error  // underlying cause, not printed
}

// Error returns "op path: msg".
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Op + ": " + e.Msg
	}
	return e.Op + " " + e.Path + ": " + e.Msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Refusal messages shared by several operations.
const (
	msgOutside      = "absolute paths outside the allowed folders are not allowed; use /project, /core, /outputs or /inputs"
	msgOutsideWrite = "absolute paths outside the allowed folders are not allowed; save files under /outputs (a relative path lands there)"
	msgNUL          = "path contains a NUL byte"
	msgEmpty        = "empty path; name a file such as /project/... or /outputs/..."
	msgLink         = "refused: a link here leads outside the allowed folders"
	msgClosed       = "sandbox is closed"
)

// maxPathLen caps the length of a path, before and after variables expand.
const maxPathLen = 4096

// fsError turns an error from a root or fs.FS into a short message without
// host paths. Not-found errors are handled by the caller (they list nearby
// names); this covers the rest.
func fsError(op, virtual string, err error) *Error {
	msg := "cannot be accessed"
	switch {
	case isEscape(err):
		msg = msgLink
	case errors.Is(err, os.ErrClosed):
		msg = msgClosed
	case errors.Is(err, fs.ErrPermission):
		msg = "permission denied"
	case errors.Is(err, syscall.ELOOP):
		msg = "too many levels of links"
	case errors.Is(err, syscall.ENAMETOOLONG):
		msg = "file name is too long"
	case errors.Is(err, syscall.ENOSPC):
		msg = "no space left to save files"
	case errors.Is(err, fs.ErrNotExist):
		msg = "not found"
	}
	return &Error{Op: op, Path: virtual, Msg: msg, Err: err}
}

// isEscape reports whether err is os.Root refusing a name that leaves the
// root (through ".." in a link or an absolute link). The standard library
// does the refusing; the message is only used to pick our wording.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// SizeText renders a byte count for people ("1.5 MiB", "300 bytes").
func SizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

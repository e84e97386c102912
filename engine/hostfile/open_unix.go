//go:build unix

package hostfile

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading with O_NONBLOCK, so that opening a
// FIFO returns at once instead of waiting for a writer.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

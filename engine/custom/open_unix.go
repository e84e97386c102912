//go:build unix

package custom

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading with O_NONBLOCK, so that a FIFO
// swapped in after the Stat cannot block the open.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

//go:build !unix

package custom

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this platform") }

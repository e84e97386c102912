package chat

import (
	"bufio"
	"context"
	"io"
	"sync"
)

// lineReader reads the input's lines in a goroutine of its own, so a
// read waits for a line or for its context, whichever comes first: ^C
// (the command's context) ends a chat waiting at its prompt at once,
// whereas a read of the terminal itself cannot be interrupted.
type lineReader struct {
	sc    *bufio.Scanner
	start sync.Once
	lines chan string   // closed at the end of the input
	ended chan struct{} // closed at the end of the input, after err is set
	err   error         // the input's error
}

// newLineReader reads r, lines of up to 4 MiB.
func newLineReader(r io.Reader) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	return &lineReader{sc: sc, lines: make(chan string), ended: make(chan struct{})}
}

// Next returns the next line; false at the end of the input, or when ctx
// ends first (the goroutine keeps its read, which the process's end
// ends).
func (r *lineReader) Next(ctx context.Context) (string, bool) {
	if ctx.Err() != nil {
		return "", false
	}
	r.start.Do(func() { go r.read() })
	select {
	case line, ok := <-r.lines:
		return line, ok
	case <-ctx.Done():
		return "", false
	}
}

// Err is the input's error once it ended (nil at its plain end, or
// while it has not ended).
func (r *lineReader) Err() error {
	select {
	case <-r.ended:
		return r.err
	default:
		return nil
	}
}

// read hands each line over when it is asked for, until the input ends.
func (r *lineReader) read() {
	defer close(r.lines)
	for r.sc.Scan() {
		r.lines <- r.sc.Text()
	}
	r.err = r.sc.Err()
	close(r.ended)
}

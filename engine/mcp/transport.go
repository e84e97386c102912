package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxFrameBytes is the largest JSON-RPC message (a stdio line, an
// HTTP server-sent event) read from a server. The go-sdk's own limit is
// 16 MiB (DefaultMaxLineLength, DefaultMaxEventSize), and one over it kills
// the connection: a 9 MB file read through server-filesystem is about 18 MB
// on the wire, since it comes as text and again as structuredContent. A
// result under this limit is read whole and then capped to
// max_result_bytes with a note; one over it is an error result that says
// so, and the server is reconnected.
const DefaultMaxFrameBytes = 128 << 20

// stdioTransport runs a stdio server like the go-sdk's CommandTransport,
// with our frame limit, and shows every line the server writes to sniff.
type stdioTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration
	maxFrame  int
	sniff     func(line []byte)
}

// Connect starts the command and talks to it over stdin and stdout.
func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	io := &sdk.IOTransport{
		Reader:        io.NopCloser(&sniffer{r: stdout, note: t.sniff}),
		Writer:        &childStdin{WriteCloser: stdin, cmd: t.cmd, terminate: t.terminate},
		MaxLineLength: t.maxFrame,
	}
	return io.Connect(ctx)
}

// childStdin closes a stdio server as the MCP spec says: stdin closed,
// then SIGTERM after a while, then SIGKILL
// (https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#stdio).
type childStdin struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

func (c *childStdin) Close() error {
	_ = c.WriteCloser.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	wait := func() bool {
		select {
		case <-done:
			return true
		case <-time.After(c.terminate):
			return false
		}
	}
	if wait() {
		return nil
	}
	if c.cmd.Process.Signal(syscall.SIGTERM) == nil && wait() {
		return nil
	}
	_ = c.cmd.Process.Kill()
	if wait() {
		return nil
	}
	return fmt.Errorf("stdio server %d does not exit", c.cmd.Process.Pid)
}

// sniffMax is the longest line a sniffer keeps; tool lists are far
// smaller, and a longer line (a big result) is passed on unseen.
const sniffMax = 4 << 20

// sniffWord is what a line must hold to be shown: only tool lists that
// carry execution.taskSupport are of interest.
var sniffWord = []byte(`"taskSupport"`)

// sniffer passes a server's bytes on and shows each line that holds
// sniffWord to note, without the "data:" of a server-sent event.
type sniffer struct {
	r    io.Reader
	note func(line []byte)
	cur  []byte
	over bool
}

func (s *sniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if s.note != nil {
		s.scan(p[:n])
		if err != nil {
			s.line()
		}
	}
	return n, err
}

func (s *sniffer) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if !s.over && len(s.cur)+len(part) <= sniffMax {
			s.cur = append(s.cur, part...)
		} else {
			s.over, s.cur = true, s.cur[:0]
		}
		if i < 0 {
			return
		}
		s.line()
		b = b[i+1:]
	}
}

func (s *sniffer) line() {
	l := bytes.TrimPrefix(bytes.TrimSpace(s.cur), []byte("data:"))
	if !s.over && bytes.Contains(l, sniffWord) {
		s.note(bytes.TrimSpace(l))
	}
	s.cur, s.over = s.cur[:0], false
}

// noteTaskTools records, from a raw tools/list answer, which tools say
// they must be called as MCP tasks (execution.taskSupport "required",
// https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#tool-level-negotiation):
// the go-sdk's Tool type has no execution field, and its client cannot
// call a tool as a task.
func (c *conn) noteTaskTools(line []byte) {
	var msg struct {
		Result struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &msg) != nil {
		return
	}
	for _, t := range msg.Result.Tools {
		if t.Execution.TaskSupport == "required" {
			c.taskOnly.Store(t.Name, true)
		} else {
			c.taskOnly.Delete(t.Name)
		}
	}
}

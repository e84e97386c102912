package bolt

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// ControlSocket is the name of the unix socket a running agentbot serves in
// its data folder, so that other agentbot commands (backup, sessions) work
// while it holds the database.
const ControlSocket = "agentbot.sock"

// maxSocketPath is the longest unix socket path the platforms accept.
const maxSocketPath = 100

// socketPath is the control socket of data folder dir: in the folder, or,
// when that path is too long for a socket, in the temporary folder under a
// name derived from the folder.
func socketPath(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	p := filepath.Join(abs, ControlSocket)
	if len(p) <= maxSocketPath {
		return p
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(os.TempDir(), "agentbot-"+hex.EncodeToString(sum[:8])+".sock")
}

// request is one control request.
type request struct {
	Op  string `json:"op"` // "backup", "list", "session" or "credentials"
	Key string `json:"key,omitempty"`
}

// WriteTo writes a consistent copy of the database to w, in a read
// transaction, while other transactions go on.
func (s *Store) WriteTo(w io.Writer) (int64, error) {
	var n int64
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// ServeControl answers other agentbot commands on the control socket until
// ctx ends or stop is called: a backup streams the database; list and
// session answer as ListSessions and SessionByID/Session do, credentials
// as ListCredentials (descriptions only: never a sealed byte). Only the
// owner of the data folder can connect (the socket is 0600).
func (s *Store) ServeControl(ctx context.Context) (stop func(), err error) {
	path := socketPath(s.dir)
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("control socket %s is in use by another agentbot", path)
	}
	_ = os.Remove(path) // a stale socket of a process that died
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		defer wg.Done()
		var conns sync.WaitGroup
		for {
			c, err := ln.Accept()
			if err != nil {
				conns.Wait()
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				s.answer(ctx, c)
			}()
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		_ = os.Remove(path)
	}, nil
}

// answer handles one connection: a request line, then "ok\n" and the
// payload, or "error <reason>\n".
func (s *Store) answer(ctx context.Context, c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(io.LimitReader(c, 64<<10)).ReadBytes('\n')
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		fmt.Fprintf(c, "error bad request\n")
		return
	}
	var payload any
	switch req.Op {
	case "backup":
		io.WriteString(c, "ok\n")
		_, _ = s.WriteTo(c)
		return
	case "list":
		payload, err = s.ListSessions(ctx)
	case "session":
		payload, err = storage.Lookup(ctx, s, req.Key)
	case "credentials":
		payload, err = s.ListCredentials(ctx, storage.CredentialFilter{})
	default:
		err = fmt.Errorf("unknown request %q", req.Op)
	}
	if err != nil {
		fmt.Fprintf(c, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return
	}
	io.WriteString(c, "ok\n")
	_ = json.NewEncoder(c).Encode(payload)
}

// Remote is a running agentbot's store, reached through its control socket.
type Remote struct{ path string }

// Dial finds the control socket of data folder dir; it fails when no
// agentbot serves it.
func Dial(dir string) (*Remote, error) {
	p := socketPath(dir)
	c, err := net.DialTimeout("unix", p, 2*time.Second)
	if err != nil {
		return nil, fmt.Errorf("no running agentbot answers on %s: %w", p, err)
	}
	c.Close()
	return &Remote{path: p}, nil
}

// call sends one request and returns the connection positioned at the
// payload.
func (r *Remote) call(ctx context.Context, req request) (net.Conn, *bufio.Reader, error) {
	c, err := (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, "unix", r.path)
	if err != nil {
		return nil, nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		c.Close()
		return nil, nil, err
	}
	br := bufio.NewReader(c)
	head, err := br.ReadString('\n')
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("control socket: %w", err)
	}
	if msg, ok := strings.CutPrefix(head, "error "); ok {
		c.Close()
		if strings.Contains(msg, storage.ErrNotFound.Error()) {
			return nil, nil, fmt.Errorf("%s: %w", strings.TrimSpace(msg), storage.ErrNotFound)
		}
		return nil, nil, errors.New(strings.TrimSpace(msg))
	}
	return c, br, nil
}

// Backup streams the running store's database to w.
func (r *Remote) Backup(w io.Writer) (int64, error) {
	c, br, err := r.call(context.Background(), request{Op: "backup"})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return io.Copy(w, br)
}

// ListSessions lists the running store's sessions.
func (r *Remote) ListSessions(ctx context.Context) ([]storage.SessionInfo, error) {
	var out []storage.SessionInfo
	return out, r.decode(ctx, request{Op: "list"}, &out)
}

// Lookup returns a session of the running store by id or key.
func (r *Remote) Lookup(ctx context.Context, idOrKey string) (*transcript.Session, error) {
	var s transcript.Session
	if err := r.decode(ctx, request{Op: "session", Key: idOrKey}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ListCredentials lists the running store's credentials f selects,
// without their sealed bytes.
func (r *Remote) ListCredentials(ctx context.Context, f storage.CredentialFilter) ([]storage.CredentialInfo, error) {
	var all []storage.CredentialInfo
	if err := r.decode(ctx, request{Op: "credentials"}, &all); err != nil {
		return nil, err
	}
	out := all[:0]
	for _, c := range all {
		if f.Match(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (r *Remote) decode(ctx context.Context, req request, v any) error {
	c, br, err := r.call(ctx, req)
	if err != nil {
		return err
	}
	defer c.Close()
	return json.NewDecoder(br).Decode(v)
}

// Backup writes a consistent copy of the database to file, atomically
// (a temporary file, fsync, rename), and checks that the copy opens. src is
// the open store or a running one's Remote. An existing file is kept
// unless force.
func Backup(src interface {
	Backup(w io.Writer) (int64, error)
}, file string, force bool) (int64, error) {
	if _, err := os.Stat(file); err == nil && !force {
		return 0, fmt.Errorf("%s exists; choose another name or use --force", file)
	}
	dir := filepath.Dir(file)
	tmp, err := os.CreateTemp(dir, ".agentbot-backup-*")
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp.Name())
	n, err := src.Backup(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	if err := checkFile(tmp.Name()); err != nil {
		return 0, fmt.Errorf("backup: the copy does not check out: %w", err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	return n, nil
}

// Backup streams the database to w (see WriteTo).
func (s *Store) Backup(w io.Writer) (int64, error) { return s.WriteTo(w) }

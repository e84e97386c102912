package bot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"agentbot/engine"
	"agentbot/engine/sandbox"
)

// fetchFiles downloads the files shared with a message into the session's
// inputs folder, under the size cap, and returns a note for the agent naming
// them.
func (b *Bot) fetchFiles(ctx context.Context, s *engine.Session, it item) string {
	dir, err := b.cfg.Store.InputDir(s.ID)
	if err != nil {
		b.log.Error("inputs folder", "err", err)
		return ""
	}
	var got, skipped []string
	for _, f := range it.Files {
		name := safeName(f.Name, f.ID)
		if f.Size > 0 && int64(f.Size) > b.cfg.MaxUploadBytes {
			skipped = append(skipped, fmt.Sprintf("%s (%s, over the %s limit)", name, sandbox.SizeText(int64(f.Size)), sandbox.SizeText(b.cfg.MaxUploadBytes)))
			continue
		}
		data, err := b.download(ctx, f.URL, filepath.Join(dir, name))
		if err != nil {
			b.log.Warn("download shared file", "file", name, "err", err)
			skipped = append(skipped, fmt.Sprintf("%s (could not download)", name))
			continue
		}
		// Kept in the store too, so a replica taking the thread over has it.
		if err := b.cfg.Engine.KeepInput(s, name, data); err != nil {
			b.log.Error("store shared file", "file", name, "err", err)
		}
		got = append(got, fmt.Sprintf("%s/%s (%s)", sandbox.InputDir, name, sandbox.SizeText(int64(len(data)))))
	}
	var note strings.Builder
	if len(got) > 0 {
		fmt.Fprintf(&note, "[I shared %s. Read with read_file when you need it.]\n", strings.Join(got, ", "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&note, "[Not available to you: %s.]\n", strings.Join(skipped, ", "))
		b.post(ctx, it.Channel, it.ThreadTS, "⚠️ I couldn't take "+strings.Join(skipped, ", ")+".")
	}
	return note.String()
}

// download fetches a Slack file with the bot token into dst, stopping at
// the cap, and returns its bytes (for the store: no read back from disk).
func (b *Bot) download(ctx context.Context, url, dst string) ([]byte, error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".download-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	var buf bytes.Buffer
	w := &capWriter{w: io.MultiWriter(tmp, &buf), left: b.cfg.MaxUploadBytes}
	err = b.call(ctx, func() error { return b.cfg.API.GetFileContext(ctx, url, w) })
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

func (c *capWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		return 0, fmt.Errorf("file is larger than the limit")
	}
	n, err := c.w.Write(p)
	c.left -= int64(n)
	return n, err
}

// safeName is a file name that stays inside the inputs folder.
func safeName(name, id string) string {
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

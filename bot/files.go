package bot

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"agentbot/bot/inputs"
	"agentbot/engine"
	"agentbot/engine/sandbox"
)

// fetchFiles downloads the files shared with a message into the session's
// inputs folder, under the size cap, and returns a note for the agent naming
// them.
func (b *core) fetchFiles(ctx context.Context, s *engine.Session, it item) string {
	dir, err := b.cfg.Folders.Session("inputs", s.ID)
	if err != nil {
		b.log.Error("inputs folder", "err", err)
		return ""
	}
	var got, skipped []string
	for _, f := range it.Files {
		name := inputs.SafeName(f.Name, f.ID)
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
		// Kept in the store too, so a replica taking the thread over has
		// it; in a project, its version is by who shared it.
		if err := b.cfg.Engine.KeepInput(ctx, s, it.User, name, data); err != nil {
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
// the cap (inputs.Save), and returns its bytes.
func (b *core) download(ctx context.Context, url, dst string) ([]byte, error) {
	return inputs.Save(dst, b.cfg.MaxUploadBytes, func(w io.Writer) error {
		return b.call(ctx, func() error { return b.api(ctx).GetFileContext(ctx, url, w) })
	})
}

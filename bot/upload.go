package bot

import (
	"bytes"
	"context"
	"fmt"
	"path"

	"github.com/slack-go/slack"

	"agentbot/bot/view"
	"agentbot/engine"
	"agentbot/engine/sandbox"
)

// savedDoc is a saved document to upload, with its bytes as read at the
// end of the turn.
type savedDoc struct {
	ev   engine.Event
	data []byte
	err  error
}

// upload sends one saved output to the thread with UploadFile (the v2
// upload flow); a re-save is titled as a new version, numbered as the
// project numbers it (transcript.Output.Shown), not by this session's
// saves alone.
func (b *core) upload(ctx context.Context, it item, u savedDoc) {
	o := u.ev.Output
	name := path.Base(o.Path)
	title := name
	if v := o.Shown(); v > 1 {
		title = fmt.Sprintf("%s, v%d", name, v)
	}
	err := u.err
	if err == nil {
		err = b.call(ctx, func() error {
			_, err := b.api(ctx).UploadFileContext(ctx, slack.UploadFileParameters{
				Reader: bytes.NewReader(u.data), FileSize: len(u.data), Filename: name, Title: title,
				InitialComment: fmt.Sprintf("📄 Saved %s (v%d, %s)", view.SavedName(o.Path), o.Shown(), sandbox.SizeText(int64(len(u.data)))),
				Channel:        it.Channel, ThreadTimestamp: it.ThreadTS,
			})
			return err
		})
	}
	b.obs.Uploaded(err)
	if err != nil {
		b.log.Error("upload output", "file", name, "err", err)
		b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("⚠️ I saved %s but couldn't upload it to this thread (%v).", o.Path, err))
	}
}

package bot

import (
	"context"
	"encoding/json"
	"time"

	"agentbot/bot/keys"
	"agentbot/bot/threadwork"
	"agentbot/storage"
)

// admitGap admits, before the message of j is answered, the messages of
// its thread's unanswered gap this replica was not given (package
// threadgap: those posted after the last message a turn answered, which
// Slack gave a replica that stalled and will deliver again only later):
// each into the thread's queue at its ts, under the dedupe key its event
// has, so it is answered once, ahead of j, and its redelivery is a
// duplicate. j stays queued (threadwork.Again). It reports whether it
// admitted any; a message admitted before is a duplicate and changes
// nothing.
func (b *threadHandlers) admitGap(ctx context.Context, j *job) bool {
	it := j.it
	if it.Kind != kindMessage || it.TS == "" {
		return false // a click has no place among the thread's messages to check
	}
	msgs := b.gaps.Missing(ctx, it.Channel, it.ThreadTS, b.state(j.c.Live).Answered, it.TS)
	admitted := false
	for _, m := range msgs {
		if b.gapTooOld(m.Timestamp, it.TS) || b.denied(m.User, it.Team, it.Channel) != "" {
			continue // a denial is said when Slack delivers it
		}
		gap := item{Kind: kindMessage, Team: it.Team, Enterprise: it.Enterprise, Channel: it.Channel, ThreadTS: it.ThreadTS, TS: m.Timestamp,
			User: m.User, DM: it.DM, Text: stripMention(m.Text, b.self(ctx).BotUserID), Files: fileRefs(m.Files)}
		payload, err := json.Marshal(gap)
		if err != nil {
			continue
		}
		dup, err := b.work.AdmitNow(ctx, it.thread().String(), gap.order(), []string{keys.Message(it.Channel, m.Timestamp)}, payload)
		if err != nil {
			b.log.Warn("admit a message of the thread's gap; answering without it", "channel", it.Channel, "err", err)
			continue
		}
		if !dup {
			b.log.Info("admitted an earlier message Slack had not delivered here yet", "channel", it.Channel, "ts", m.Timestamp, "before", it.TS)
			admitted = true
		}
	}
	if admitted {
		threadwork.Again(ctx)
	}
	return admitted
}

// gapTooOld reports whether a message of a gap (ts) is too old to admit
// before the message it precedes (next): had it been admitted when it
// was sent, its dedupe mark may have expired by now (DedupeTTL), and
// admitting it again would answer it twice. Both times are Slack's.
func (b *core) gapTooOld(ts, next string) bool {
	at := storage.OrderOf(ts)
	return at == 0 || time.Duration(storage.OrderOf(next)-at)*time.Microsecond > b.cfg.DedupeTTL/2
}

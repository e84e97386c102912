// Package webapi holds the Slack Web API calls the bot makes beyond a
// reply's (bot/render) and access's (bot/access: membership, privacy,
// admin flags): a thread's messages, and the answer to a slash command
// through its response_url. Each Web API call is retried after a rate
// limit (render.Slack.Call).
package webapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/render"
)

// personSubtypes are the message subtypes that carry a person's words:
// a plain message has none; file_share is a message that shared files
// (https://docs.slack.dev/reference/events/message/file_share), which
// conversations.replies returns with that subtype and its files too;
// thread_broadcast is a reply also sent to the channel
// (https://docs.slack.dev/reference/events/message/thread_broadcast).
// Every other subtype is an event (a join, an edit, a deletion) or a
// bot's.
var personSubtypes = map[string]bool{"": true, "file_share": true, "thread_broadcast": true}

// PersonSubtype reports whether a message of this subtype carries a
// person's words, in an event or in conversations.replies.
func PersonSubtype(subtype string) bool { return personSubtypes[subtype] }

// Replies reads a thread's messages with conversations.replies, at most
// 10 pages of 200, waiting out rate limits.
func Replies(ctx context.Context, s render.Slack, channel, thread string) ([]slack.Message, error) {
	return replies(ctx, s, slack.GetConversationRepliesParameters{ChannelID: channel, Timestamp: thread}, true)
}

// RepliesBetween reads a thread's messages posted strictly between oldest
// and latest (Slack timestamps) with conversations.replies, at most 10
// pages of 200. It does not wait out a rate limit: a caller that can do
// without them gets it as its error. Slack returns the thread's parent
// on the first page whatever the bounds, so the caller filters by ts.
func RepliesBetween(ctx context.Context, s render.Slack, channel, thread, oldest, latest string) ([]slack.Message, error) {
	return replies(ctx, s, slack.GetConversationRepliesParameters{ChannelID: channel, Timestamp: thread, Oldest: oldest, Latest: latest}, false)
}

// replies reads the pages of a conversations.replies call p, waiting out
// rate limits when wait is set.
func replies(ctx context.Context, s render.Slack, p slack.GetConversationRepliesParameters, wait bool) ([]slack.Message, error) {
	var msgs []slack.Message
	p.Limit = 200
	for range 10 {
		var page []slack.Message
		read := func() (err error) {
			page, _, p.Cursor, err = s.Client(ctx).GetConversationRepliesContext(ctx, &p)
			return err
		}
		var err error
		if wait {
			err = s.Call(ctx, read)
		} else {
			err = read()
		}
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, page...)
		if p.Cursor == "" {
			break
		}
	}
	return msgs, nil
}

// RespondURL answers a slash command ephemerally through its
// response_url, within 10 seconds; text is mrkdwn, escaped by the caller.
func RespondURL(ctx context.Context, url, text string) error {
	body, _ := json.Marshal(map[string]string{"response_type": "ephemeral", "text": text})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

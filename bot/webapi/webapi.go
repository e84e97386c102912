// Package webapi holds the Slack Web API calls the bot makes beyond a
// reply's (bot/render): whether a channel is private, whether a user is
// its member, a thread's messages, and the answer to a slash command
// through its response_url. Each Web API call is retried after a rate
// limit (render.Slack.Call).
package webapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/render"
)

// IsPrivate reports whether a channel is private (or a DM), from
// conversations.info.
func IsPrivate(ctx context.Context, s render.Slack, channel string) (bool, error) {
	var ch *slack.Channel
	err := s.Call(ctx, func() (err error) {
		ch, err = s.API.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: channel})
		return err
	})
	if err != nil {
		return true, err
	}
	return ch.IsPrivate || ch.IsIM || ch.IsMpIM, nil
}

// IsMember reports whether user is a member of channel, reading
// conversations.members page by page.
func IsMember(ctx context.Context, s render.Slack, channel, user string) (bool, error) {
	cursor := ""
	for {
		var members []string
		err := s.Call(ctx, func() (err error) {
			members, cursor, err = s.API.GetUsersInConversationContext(ctx, &slack.GetUsersInConversationParameters{ChannelID: channel, Cursor: cursor, Limit: 1000})
			return err
		})
		if err != nil {
			return false, err
		}
		if slices.Contains(members, user) {
			return true, nil
		}
		if cursor == "" {
			return false, nil
		}
	}
}

// Replies reads a thread's messages with conversations.replies, at most
// 10 pages of 200.
func Replies(ctx context.Context, s render.Slack, channel, thread string) ([]slack.Message, error) {
	var msgs []slack.Message
	cursor := ""
	for range 10 {
		var page []slack.Message
		err := s.Call(ctx, func() (err error) {
			page, _, cursor, err = s.API.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: channel, Timestamp: thread, Cursor: cursor, Limit: 200})
			return err
		})
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, page...)
		if cursor == "" {
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

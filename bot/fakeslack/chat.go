package fakeslack

import (
	"encoding/json"
	"unicode/utf8"
)

// Limits the fake enforces like Slack does; the block rules are in the
// rules table (rules.go).
const (
	// MarkdownBlockLimit is the characters in one markdown block, or in the
	// markdown_text of one stream call
	// (https://docs.slack.dev/reference/block-kit/blocks/markdown-block).
	MarkdownBlockLimit = MaxMarkdownTotal
	// MaxTextChars is the characters of a message's text
	// (https://docs.slack.dev/reference/methods/chat.postMessage: "truncated
	// at 40,000 characters"; msg_too_long past it).
	MaxTextChars = 40_000
)

// validateMessage checks the text of a message (its blocks passed the
// rules table); it returns the Slack error code, or "".
func validateMessage(text, _ string) string {
	if utf8.RuneCountInString(text) > MaxTextChars {
		return "msg_too_long"
	}
	return ""
}

func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// messageJSON renders m as Slack returns messages.
func (s *Server) messageJSON(m Message) map[string]any {
	out := map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "user": m.User}
	if m.Kind != KindUser {
		out["bot_id"] = s.cfg.botID
	}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if m.SubType != "" {
		out["subtype"] = m.SubType
	}
	if m.Files != nil {
		out["files"] = m.Files
	}
	if m.Blocks != nil {
		out["blocks"] = m.Blocks
	}
	if m.As.Username != "" {
		out["username"] = m.As.Username
	}
	if m.As.IconEmoji != "" || m.As.IconURL != "" {
		out["icons"] = map[string]string{"emoji": m.As.IconEmoji, "image_48": m.As.IconURL}
	}
	return out
}

func (s *Server) chatPostMessage(r *apiRequest) (result, string) {
	ch, text, blocks := r.get("channel"), r.get("text"), r.get("blocks")
	if ch == "" {
		return nil, "channel_not_found"
	}
	if text == "" && blocks == "" && r.get("attachments") == "" {
		return nil, "no_text"
	}
	if e := validateMessage(text, blocks); e != "" {
		return nil, e
	}
	m := Message{Kind: KindPost, Channel: ch, TS: s.nextTSLocked(), ThreadTS: r.get("thread_ts"),
		Text: text, Blocks: rawOrNil(blocks), User: s.cfg.botUserID, Time: r.now,
		As: customAuthor(r.get, s.cfg.granted(ScopeCustomize))}
	s.messages = append(s.messages, m)
	s.storeLocked(m)
	return result{"channel": ch, "ts": m.TS, "message": s.messageJSON(m)}, ""
}

func (s *Server) chatPostEphemeral(r *apiRequest) (result, string) {
	ch, user, text, blocks := r.get("channel"), r.get("user"), r.get("text"), r.get("blocks")
	switch {
	case ch == "":
		return nil, "channel_not_found"
	case user == "":
		return nil, "user_not_in_channel"
	case text == "" && blocks == "" && r.get("attachments") == "":
		return nil, "no_text"
	}
	if e := validateMessage(text, blocks); e != "" {
		return nil, e
	}
	m := Message{Kind: KindEphemeral, Channel: ch, TS: s.nextTSLocked(), ThreadTS: r.get("thread_ts"),
		Text: text, Blocks: rawOrNil(blocks), User: user, Time: r.now}
	s.messages = append(s.messages, m)
	s.storeLocked(m)
	return result{"message_ts": m.TS}, ""
}

func (s *Server) chatUpdate(r *apiRequest) (result, string) {
	ch, ts, text, blocks := r.get("channel"), r.get("ts"), r.get("text"), r.get("blocks")
	cur, ok := s.current[msgKey(ch, ts)]
	switch {
	case ch == "":
		return nil, "channel_not_found"
	case !ok || cur.Deleted:
		return nil, "message_not_found"
	case cur.Kind == KindEphemeral || cur.Kind == KindUser:
		return nil, "cant_update_message"
	case text == "" && blocks == "" && r.get("attachments") == "":
		return nil, "no_text"
	}
	if e := validateMessage(text, blocks); e != "" {
		return nil, e
	}
	cur.Text, cur.Blocks, cur.Time = text, rawOrNil(blocks), r.now
	m := *cur
	m.Kind = KindUpdate
	s.messages = append(s.messages, m)
	return result{"channel": ch, "ts": ts, "text": text, "message": s.messageJSON(*cur)}, ""
}

func (s *Server) chatDelete(r *apiRequest) (result, string) {
	ch, ts := r.get("channel"), r.get("ts")
	cur, ok := s.current[msgKey(ch, ts)]
	if !ok || cur.Deleted {
		return nil, "message_not_found"
	}
	if cur.Kind == KindUser || cur.Kind == KindEphemeral {
		return nil, "cant_delete_message"
	}
	cur.Deleted = true
	s.messages = append(s.messages, Message{Kind: KindDelete, Channel: ch, TS: ts, ThreadTS: cur.ThreadTS,
		User: cur.User, Time: r.now})
	return result{"channel": ch, "ts": ts}, ""
}

// RefuseStartStream makes every chat.startStream fail with slackErr (for
// example "feature_not_enabled") until called again with "".
func (s *Server) RefuseStartStream(slackErr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = slackErr
}

// ExpireStreams ends every stream still open, as Slack does after a while:
// later chat.appendStream and chat.stopStream calls on them fail with
// "message_not_in_streaming_state".
func (s *Server) ExpireStreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.streams {
		if !st.Stopped {
			st.Expired = true
		}
	}
	s.notifyLocked()
}

func (s *Server) chatStartStream(r *apiRequest) (result, string) {
	ch := r.get("channel")
	switch {
	case s.refuse != "":
		return nil, s.refuse
	case ch == "":
		return nil, "channel_not_found"
	}
	st := &Stream{Channel: ch, TS: s.nextTSLocked(), ThreadTS: r.get("thread_ts"),
		RecipientUserID: r.get("recipient_user_id"), RecipientTeamID: r.get("recipient_team_id"),
		TaskDisplayMode: r.get("task_display_mode"), Started: r.now,
		As: customAuthor(r.get, s.cfg.granted(ScopeCustomize))}
	if e := applyStreamInput(st, r); e != "" {
		return nil, e
	}
	s.streams = append(s.streams, st)
	s.streamIdx[msgKey(ch, st.TS)] = st
	s.storeLocked(Message{Kind: KindStream, Channel: ch, TS: st.TS, ThreadTS: st.ThreadTS, Text: st.Text,
		User: s.cfg.botUserID, Time: r.now, As: st.As})
	return result{"channel": ch, "ts": st.TS}, ""
}

// openStreamLocked finds the stream named by the request and checks that it
// still accepts content.
func (s *Server) openStreamLocked(r *apiRequest) (*Stream, string) {
	st, ok := s.streamIdx[msgKey(r.get("channel"), r.get("ts"))]
	switch {
	case !ok:
		return nil, "message_not_found"
	case st.Stopped || st.Expired:
		return nil, "message_not_in_streaming_state"
	}
	return st, ""
}

func (s *Server) chatAppendStream(r *apiRequest) (result, string) {
	st, e := s.openStreamLocked(r)
	if e != "" {
		return nil, e
	}
	if e := applyStreamInput(st, r); e != "" {
		return nil, e
	}
	st.Appends++
	s.current[msgKey(st.Channel, st.TS)].Text = st.Text
	s.expireAfterAppendLocked(st) // ExpireStreamsAfterAppends (agents.go)
	return result{"channel": st.Channel, "ts": st.TS}, ""
}

func (s *Server) chatStopStream(r *apiRequest) (result, string) {
	st, e := s.openStreamLocked(r)
	if e != "" {
		return nil, e
	}
	blocks := r.get("blocks")
	if e := validateMessage("", blocks); e != "" {
		return nil, e
	}
	if e := applyStreamInput(st, r); e != "" {
		return nil, e
	}
	st.Stopped, st.StoppedAt, st.StopBlocks = true, r.now, rawOrNil(blocks)
	s.stops = append(s.stops, st)
	cur := s.current[msgKey(st.Channel, st.TS)]
	cur.Text = st.Text
	if blocks != "" {
		cur.Blocks = st.StopBlocks
	}
	return result{"channel": st.Channel, "ts": st.TS, "message": s.messageJSON(*cur)}, ""
}

// applyStreamInput adds the request's markdown_text and chunks to st.
func applyStreamInput(st *Stream, r *apiRequest) string {
	text := r.get("markdown_text")
	if utf8.RuneCountInString(text) > MarkdownBlockLimit {
		return "msg_too_long"
	}
	var chunks []json.RawMessage
	if raw := r.get("chunks"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &chunks); err != nil {
			return "invalid_chunks"
		}
	}
	parsed := make([]StreamChunk, 0, len(chunks))
	for _, c := range chunks {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(c, &head) != nil || head.Type == "" {
			return "invalid_chunks"
		}
		parsed = append(parsed, StreamChunk{Method: r.method, Type: head.Type, JSON: c})
	}
	st.Text += text
	for _, c := range parsed {
		st.Chunks = append(st.Chunks, c)
		if c.Type == "markdown_text" {
			var md struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(c.JSON, &md)
			st.Text += md.Text
		}
	}
	return ""
}

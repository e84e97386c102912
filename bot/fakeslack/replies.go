package fakeslack

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// conversations.replies as Slack documents it
// (https://docs.slack.dev/reference/methods/conversations.replies):
//   - "a cursor-paginated thread of messages": limit (Slack advises at
//     most 200; the fake caps it at 1000) and cursor, answered with
//     has_more and response_metadata.next_cursor, "" on the last page.
//     Slack's cursors are opaque; the fake's, like Slack's, are the base64
//     of "next_ts:<ts>". "It's possible to receive fewer results than
//     your specified limit, even when there are additional results"
//     (https://docs.slack.dev/apis/web-api/pagination): LimitReplies
//     makes the fake do so.
//   - "If no replies, just the single message referenced by ts will
//     return"; the parent comes first, on the first page only
//     (continuation pages omit it: simstudioai/sim#4934).
//   - oldest and latest bound the replies ("only messages after/before
//     this timestamp"), inclusive keeps the bounds themselves; "the
//     earliest messages in the time range are returned first".
//   - Messages are returned as they were posted: a user's message that
//     shared files keeps its subtype (file_share,
//     https://docs.slack.dev/reference/events/message/file_share) and its
//     files; a thread_broadcast keeps its subtype (Message.SubType,
//     Message.Files).

// LimitReplies caps the messages one conversations.replies page returns
// at n, whatever limit the caller asks (0: no cap but the caller's).
func (s *Server) LimitReplies(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repliesCap = max(n, 0)
}

func (s *Server) conversationsReplies(r *apiRequest) (result, string) {
	ch, ts := r.get("channel"), r.get("ts")
	if ch == "" {
		return nil, "channel_not_found"
	}
	msgs := s.threadLocked(ch, ts)
	if len(msgs) == 0 {
		return nil, "thread_not_found"
	}
	from, ok := cursorTS(r.get("cursor"))
	if !ok {
		return nil, "invalid_cursor"
	}
	var page []Message
	if from == "" && msgs[0].TS == ts {
		page = append(page, msgs[0]) // the parent, first page only
	}
	limit := s.repliesLimit(r.get("limit"))
	next := ""
	for _, m := range msgs {
		if m.TS == ts || !inRange(m.TS, r.get("oldest"), r.get("latest"), r.get("inclusive")) || (from != "" && tsLess(m.TS, from)) {
			continue
		}
		if len(page) == limit {
			next = base64.StdEncoding.EncodeToString([]byte("next_ts:" + m.TS))
			break
		}
		page = append(page, m)
	}
	return result{"messages": s.messagesJSON(page), "has_more": next != "",
		"response_metadata": map[string]any{"next_cursor": next}}, ""
}

// repliesLimit is the page size of a conversations.replies call asking
// for limit: at most 1000, and at most LimitReplies' cap.
func (s *Server) repliesLimit(limit string) int {
	n, err := strconv.Atoi(limit)
	if err != nil || n <= 0 || n > 1000 {
		n = 1000
	}
	if s.repliesCap > 0 {
		n = min(n, s.repliesCap)
	}
	return n
}

// cursorTS reads a conversations.replies cursor: the ts its page starts
// at ("" for the first page); ok is false for a cursor the fake did not
// hand out.
func cursorTS(cursor string) (string, bool) {
	if cursor == "" {
		return "", true
	}
	raw, err := base64.StdEncoding.DecodeString(cursor)
	ts, ok := strings.CutPrefix(string(raw), "next_ts:")
	return ts, err == nil && ok
}

// inRange reports whether ts is within the oldest and latest bounds of a
// conversations.replies call ("" for none), the bounds included when
// inclusive is true or 1.
func inRange(ts, oldest, latest, inclusive string) bool {
	incl := inclusive == "true" || inclusive == "1"
	if oldest != "" && (tsLess(ts, oldest) || ts == oldest && !incl) {
		return false
	}
	if latest != "" && (tsLess(latest, ts) || ts == latest && !incl) {
		return false
	}
	return true
}

// tsLess reports whether Slack timestamp a is before b, comparing the
// seconds and then the microseconds as numbers.
func tsLess(a, b string) bool {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	ai, _ := strconv.ParseInt(as, 10, 64)
	bi, _ := strconv.ParseInt(bs, 10, 64)
	if ai != bi {
		return ai < bi
	}
	af, bf = (af + "000000")[:6], (bf + "000000")[:6]
	return af < bf
}

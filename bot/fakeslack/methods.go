package fakeslack

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
)

func (s *Server) authTest(*apiRequest) (result, string) {
	return result{
		"url":     "https://fake.slack.com/",
		"team":    s.cfg.teamName,
		"user":    s.cfg.botNm,
		"team_id": s.cfg.teamID,
		"user_id": s.cfg.botUserID,
		"bot_id":  s.cfg.botID,
	}, ""
}

// appsConnectionsOpen hands out a single-use websocket URL on this server,
// unless RefuseSocketMode made it refuse.
func (s *Server) appsConnectionsOpen(*apiRequest) (result, string) {
	if s.socketRefusal != "" {
		return nil, s.socketRefusal
	}
	ticket := randomHex(8)
	s.tickets[ticket] = true
	q := url.Values{"ticket": {ticket}, "app_id": {s.cfg.appID}}
	return result{"url": "ws" + strings.TrimPrefix(s.base, "http") + linkPath + "?" + q.Encode()}, ""
}

func (s *Server) assistantSetStatus(r *apiRequest) (result, string) {
	ch, thread := r.get("channel_id"), r.get("thread_ts")
	switch {
	case ch == "":
		return nil, "channel_not_found"
	case thread == "":
		return nil, "invalid_arguments"
	}
	st := Status{Channel: ch, ThreadTS: thread, Status: r.get("status"), Time: r.now}
	if lm := r.get("loading_messages"); lm != "" {
		st.LoadingMessages = strings.Split(lm, ",")
	}
	s.statuses = append(s.statuses, st)
	return nil, ""
}

func (s *Server) reactionsAdd(r *apiRequest) (result, string) {
	ch, ts, name := r.get("channel"), r.get("timestamp"), r.get("name")
	switch {
	case ch == "":
		return nil, "channel_not_found"
	case ts == "":
		return nil, "no_item_specified"
	case name == "":
		return nil, "invalid_name"
	}
	for _, rx := range s.reactions {
		if rx.Channel == ch && rx.Timestamp == ts && rx.Name == name {
			return nil, "already_reacted"
		}
	}
	s.reactions = append(s.reactions, Reaction{Channel: ch, Timestamp: ts, Name: name, Time: r.now})
	return nil, ""
}

// AddUser makes users.info answer with u for u.ID. Unknown ids get a
// synthesized user named "user-<id>".
func (s *Server) AddUser(u slack.User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

func (s *Server) usersInfo(r *apiRequest) (result, string) {
	id := r.get("user")
	if id == "" {
		return nil, "user_not_found"
	}
	u, ok := s.users[id]
	if !ok {
		u = slack.User{ID: id, TeamID: s.cfg.teamID, Name: "user-" + strings.ToLower(id), RealName: "User " + id, TZ: "UTC"}
		if id == s.cfg.botUserID {
			u.Name, u.RealName, u.IsBot = s.cfg.botNm, s.cfg.botNm, true
		}
		u.Profile.DisplayName, u.Profile.RealName = u.Name, u.RealName
	}
	return result{"user": u}, ""
}

func (s *Server) conversationsInfo(r *apiRequest) (result, string) {
	id := r.get("channel")
	if id == "" {
		return nil, "channel_not_found"
	}
	if s.hiddenLocked(id) {
		return nil, "channel_not_found" // a private channel the bot is not in (members.go)
	}
	c := s.channelLocked(id)
	ch := map[string]any{"id": id, "name": strings.ToLower(id), "is_member": !c.BotOut}
	switch {
	case id[0] == 'D':
		ch["is_im"], ch["name"], ch["user"] = true, "", "U0FAKEUSER"
	case c.Private:
		ch["is_channel"], ch["is_private"] = true, true
	default:
		ch["is_channel"] = true
	}
	return result{"channel": ch}, ""
}

// conversationsHistory lists the channel's top-level messages, newest first.
func (s *Server) conversationsHistory(r *apiRequest) (result, string) {
	ch := r.get("channel")
	if ch == "" {
		return nil, "channel_not_found"
	}
	limit, err := strconv.Atoi(r.get("limit"))
	if err != nil || limit <= 0 {
		limit = 100
	}
	var msgs []Message
	for _, k := range s.order {
		m := s.current[k]
		if m.Channel == ch && !m.Deleted && m.Kind != KindEphemeral && (m.ThreadTS == "" || m.ThreadTS == m.TS) {
			msgs = append(msgs, *m)
		}
	}
	slices.SortStableFunc(msgs, func(a, b Message) int { return strings.Compare(b.TS, a.TS) })
	more := len(msgs) > limit
	if more {
		msgs = msgs[:limit]
	}
	return result{"messages": s.messagesJSON(msgs), "has_more": more,
		"response_metadata": map[string]any{"next_cursor": ""}}, ""
}

func (s *Server) messagesJSON(msgs []Message) []map[string]any {
	out := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		out[i] = s.messageJSON(m)
	}
	return out
}

// agentSessionSetStatus records an agent session's lifecycle status (the
// call itself is in Calls); the session is a thread. The first call on a
// thread creates its session, with the call's title; later calls leave
// the title as it is (agents.go).
func (s *Server) agentSessionSetStatus(r *apiRequest) (result, string) {
	ch, thread, st := r.get("channel_id"), r.get("thread_ts"), r.get("status")
	switch {
	case ch == "" || thread == "":
		return nil, "invalid_arguments"
	case st != slack.AgentSessionStatusActive && st != slack.AgentSessionStatusProcessing &&
		st != slack.AgentSessionStatusSuspended && st != slack.AgentSessionStatusClosed:
		return nil, "invalid_status"
	}
	title := s.createAgentSessionLocked(r, ch, thread)
	s.sessions = append(s.sessions, AgentSessionStatus{Channel: ch, ThreadTS: thread, Status: st,
		Title: r.get("title"), InitiatorUserID: r.get("initiator_user_id"), Time: r.now})
	res := result{"status": st, "agent_status": st}
	if title != "" {
		res["title"] = title
	}
	return res, ""
}

// RefuseSocketMode makes every apps.connections.open answer
// {"ok":false,"error":code} from now on ("": accept again), as Slack does
// for an app-level token it will not open a connection with. Slack's page
// of the method lists the errors it answers, not_allowed_token_type among
// them ("The token type used in this request is not allowed"), and says
// the method takes an app-level token with the connections:write scope
// (https://docs.slack.dev/reference/methods/apps.connections.open); a
// token of another type is refused so, never retried into a connection.
func (s *Server) RefuseSocketMode(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.socketRefusal = code
}

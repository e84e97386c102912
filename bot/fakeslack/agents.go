package fakeslack

import (
	"slices"
	"time"
)

// AgentSessionStatus is one agents.sessions.setStatus call that succeeded.
type AgentSessionStatus struct {
	Channel         string
	ThreadTS        string
	Status          string // active, processing, suspended or closed
	Title           string
	InitiatorUserID string
	Time            time.Time
}

// Agent sessions in threads, as Slack keeps them: the first
// agents.sessions.setStatus on a thread creates its session, and its
// title is "only used when creating a new session; ignored if the session
// already exists. To rename an existing session, use
// agents.sessions.rename" (the title argument of
// https://docs.slack.dev/reference/methods/agents.sessions.setStatus, as
// slackapi/node-slack-sdk packages/web-api/src/types/request/agents.ts
// documents it; slack-go's AgentSessionSetStatusParameters: "Title and
// InitiatorUserID only apply when the call creates the session").
// agents.sessions.rename renames a session that exists; before the
// session is created it fails with ErrSessionNotFound, the error the
// probe of issue 30 saw Slack answer for a rename that ran first
// (https://docs.slack.dev/reference/methods/agents.sessions.rename).

// ErrSessionNotFound is agents.sessions.rename's error for a thread with
// no agent session yet.
const ErrSessionNotFound = "session_not_found"

// createAgentSessionLocked creates the agent session of channel/thread
// for a setStatus call r, titled with r's title, unless it exists; it
// returns the session's title.
func (s *Server) createAgentSessionLocked(r *apiRequest, channel, thread string) string {
	k := msgKey(channel, thread)
	if title, ok := s.agentSess[k]; ok {
		return title
	}
	if s.agentSess == nil {
		s.agentSess = map[string]string{}
	}
	title := r.get("title")
	s.agentSess[k] = title
	if title != "" {
		s.titles = append(s.titles, Title{Method: r.method, Channel: channel, ThreadTS: thread, Title: title, Time: r.now})
	}
	return title
}

// AgentSessionTitle is the title Slack shows for the agent session of
// channel/thread; ok is false when the thread has no agent session.
func (s *Server) AgentSessionTitle(channel, thread string) (title string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	title, ok = s.agentSess[msgKey(channel, thread)]
	return title, ok
}

// AgentSessionStatuses returns every agents.sessions.setStatus call that
// succeeded, in order.
func (s *Server) AgentSessionStatuses() []AgentSessionStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sessions)
}

// SendAgentSessionStopped does what Slack does when user clicks the stop
// button of the agent session of channel/threadTS: it halts the thread's
// open streams (later appends and stops fail with
// "message_not_in_streaming_state") and pushes an agent_session_stopped
// event listing them in streaming_message_ts. It returns the envelope_id.
func (s *Server) SendAgentSessionStopped(channel, threadTS, user string) string {
	s.mu.Lock()
	halted := []string{}
	for _, st := range s.streams {
		if st.Channel == channel && st.ThreadTS == threadTS && !st.Stopped && !st.Expired {
			st.Stopped, st.Halted, st.StoppedAt = true, true, time.Now()
			halted = append(halted, st.TS)
		}
	}
	eventTS := s.nextTSLocked()
	s.notifyLocked()
	s.mu.Unlock()
	return s.SendEvent(map[string]any{"type": "agent_session_stopped", "channel": channel, "thread_ts": threadTS,
		"user": user, "streaming_message_ts": halted, "event_ts": eventTS})
}

// CloseStream ends the stream channel/ts as Slack does after about five
// minutes: later chat.appendStream and chat.stopStream calls on it fail with
// "message_not_in_streaming_state". It reports whether the stream was open.
func (s *Server) CloseStream(channel, ts string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.streamIdx[msgKey(channel, ts)]
	if !ok || st.Stopped || st.Expired {
		return false
	}
	st.Expired = true
	s.notifyLocked()
	return true
}

// ExpireStreamsAfterAppends makes the next times streams to reach appends
// successful chat.appendStream calls expire right after that call, as
// CloseStream does: a deterministic way to close a stream mid-turn, more
// than once. times <= 0 turns it off.
func (s *Server) ExpireStreamsAfterAppends(appends, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireAfter, s.expireTimes = max(appends, 1), max(times, 0)
}

// expireAfterAppendLocked applies ExpireStreamsAfterAppends to st after an
// append.
func (s *Server) expireAfterAppendLocked(st *Stream) {
	if s.expireTimes > 0 && st.Appends >= s.expireAfter {
		st.Expired = true
		s.expireTimes--
	}
}

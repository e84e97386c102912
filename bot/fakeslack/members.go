package fakeslack

import "slices"

// Channels as conversations.info and conversations.members answer for
// them. A channel nobody set has no members but the bot, and its privacy
// follows its id: "D…" a DM, "G…" private, anything else public.

// Channel is what SetChannel says of a channel.
type Channel struct {
	// Private makes it a private channel whatever its id.
	Private bool
	// BotOut: the bot is not a member. Slack then answers
	// conversations.info and conversations.members for a private channel
	// with channel_not_found, as for a channel that does not exist (a
	// private channel is invisible to a non-member:
	// https://docs.slack.dev/reference/methods/conversations.info,
	// errors: "channel_not_found: Value passed for channel was invalid";
	// BeepBoopHQ/in-or-out#19); a public one it still answers.
	BotOut bool
}

// SetChannel says what a channel is (see Channel).
func (s *Server) SetChannel(id string, c Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.channels == nil {
		s.channels = map[string]Channel{}
	}
	s.channels[id] = c
}

// SetMembers sets the members of a channel (the bot is always one, unless
// SetChannel says BotOut).
func (s *Server) SetMembers(channel string, users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.members == nil {
		s.members = map[string][]string{}
	}
	s.members[channel] = slices.Clone(users)
}

// joinLocked makes the author of a message a member of its channel: only
// members post in a channel (chat.postMessage answers a user token
// not_in_channel otherwise: "Cannot post user messages to a channel they
// are not in", https://docs.slack.dev/reference/methods/chat.postMessage).
func (s *Server) joinLocked(channel, user string) {
	if user == "" || slices.Contains(s.members[channel], user) {
		return
	}
	if s.members == nil {
		s.members = map[string][]string{}
	}
	s.members[channel] = append(s.members[channel], user)
}

// RemoveMember takes a person out of a channel's members (as when they
// leave or are removed; the fake sends no event: send
// member_left_channel with SendEvent).
func (s *Server) RemoveMember(channel, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members[channel] = slices.DeleteFunc(slices.Clone(s.members[channel]), func(u string) bool { return u == user })
}

// channelLocked is what is known of a channel: set, or by its id.
func (s *Server) channelLocked(id string) Channel {
	c, ok := s.channels[id]
	if !ok && id != "" && id[0] == 'G' {
		c.Private = true
	}
	return c
}

// hiddenLocked reports whether Slack hides a channel from the bot: a
// private channel it is not a member of.
func (s *Server) hiddenLocked(id string) bool {
	c := s.channelLocked(id)
	return c.BotOut && c.Private
}

// conversationsMembers lists a channel's members, in one page.
// https://docs.slack.dev/reference/methods/conversations.members: "members"
// (user ids) and response_metadata.next_cursor ("" on the last page).
func (s *Server) conversationsMembers(r *apiRequest) (result, string) {
	ch := r.get("channel")
	if ch == "" || s.hiddenLocked(ch) {
		return nil, "channel_not_found"
	}
	var members []string
	if !s.channelLocked(ch).BotOut {
		members = append(members, s.cfg.botUserID)
	}
	members = append(members, s.members[ch]...)
	return result{"members": members, "response_metadata": map[string]any{"next_cursor": ""}}, ""
}

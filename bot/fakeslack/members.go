package fakeslack

import "slices"

// Channel membership, for conversations.members. A channel nobody set has
// no members but the bot.

// SetMembers sets the members of a channel (the bot is always one).
func (s *Server) SetMembers(channel string, users ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.members == nil {
		s.members = map[string][]string{}
	}
	s.members[channel] = slices.Clone(users)
}

// conversationsMembers lists a channel's members, in one page.
// https://docs.slack.dev/reference/methods/conversations.members: "members"
// (user ids) and response_metadata.next_cursor ("" on the last page).
func (s *Server) conversationsMembers(r *apiRequest) (result, string) {
	ch := r.get("channel")
	if ch == "" {
		return nil, "channel_not_found"
	}
	members := append([]string{s.cfg.botUserID}, s.members[ch]...)
	return result{"members": members, "response_metadata": map[string]any{"next_cursor": ""}}, ""
}

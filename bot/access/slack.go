package access

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/render"
	"agentbot/bot/workspace"
)

// Slack answers what the rules ask of Slack, with the answers cached
// briefly (TTL): a channel's members (conversations.members, every page),
// its privacy (conversations.info) and a person's admin flags and name
// (users.info). Forget drops what is known of a channel, as Slack's
// member_left_channel and channel_left events ask. It is safe for
// concurrent use.
type Slack struct {
	web render.Slack
	ttl time.Duration
	now func() time.Time

	// The caches, by channel id (unique across an organization) and by
	// person; epoch counts a channel's Forgets, so an answer read across
	// one is not kept.
	mu      sync.Mutex
	members map[string]cached[[]string]
	private map[string]cached[bool]
	users   map[string]cached[*slack.User]
	epoch   map[string]uint64
}

// cached is one answer and when it goes stale.
type cached[T any] struct {
	v     T
	until time.Time
}

// DefaultTTL is how long an answer of Slack is kept when NewSlack is
// given none: short, so a change of membership shows within a minute even
// when its event is lost.
const DefaultTTL = time.Minute

// NewSlack reads Slack through web, keeping answers for ttl (DefaultTTL
// when 0; negative: never kept).
func NewSlack(web render.Slack, ttl time.Duration) *Slack {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	return &Slack{web: web, ttl: ttl, now: time.Now,
		members: map[string]cached[[]string]{}, private: map[string]cached[bool]{},
		users: map[string]cached[*slack.User]{}, epoch: map[string]uint64{}}
}

// Forget drops what is known of a channel's members and privacy (a member
// left, the bot left, the channel changed).
func (s *Slack) Forget(c Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.members, c.ID)
	delete(s.private, c.ID)
	s.epoch[c.ID]++
}

// Member reports whether person is a member of channel now. A cached
// list that holds them answers (a leave drops it: Forget); one that does
// not is read again, so someone who just joined is never refused.
func (s *Slack) Member(ctx context.Context, c Channel, person string) (bool, error) {
	s.mu.Lock()
	m, ok := s.members[c.ID]
	s.mu.Unlock()
	if ok && s.now().Before(m.until) && slices.Contains(m.v, person) {
		return true, nil
	}
	members, err := s.channelMembers(ctx, c)
	if err != nil {
		return false, err
	}
	return slices.Contains(members, person), nil
}

// channelMembers reads a channel's members from Slack, every page, and
// keeps them.
func (s *Slack) channelMembers(ctx context.Context, c Channel) ([]string, error) {
	ctx = workspace.In(ctx, c.Team) // asked with the channel's workspace's token
	s.mu.Lock()
	began := s.epoch[c.ID]
	s.mu.Unlock()
	var all []string
	cursor := ""
	for page := 0; page < maxMemberPages; page++ {
		var members []string
		err := s.web.Call(ctx, func() (err error) {
			members, cursor, err = s.web.Client(ctx).GetUsersInConversationContext(ctx,
				&slack.GetUsersInConversationParameters{ChannelID: c.ID, Cursor: cursor, Limit: 1000})
			return err
		})
		if err != nil {
			s.web.Log.Warn("conversations.members", "channel", c.ID, "err", err)
			return nil, err
		}
		all = append(all, members...)
		if cursor == "" {
			break
		}
	}
	s.mu.Lock()
	if s.epoch[c.ID] == began && s.ttl > 0 { // no Forget since the read began
		s.members[c.ID] = cached[[]string]{all, s.now().Add(s.ttl)}
	}
	s.mu.Unlock()
	return all, nil
}

// maxMemberPages bounds the pages of conversations.members read for one
// channel (of 1,000 members each).
const maxMemberPages = 100

// Private reports whether a channel is private (a private channel, a DM
// or a group DM), from conversations.info.
func (s *Slack) Private(ctx context.Context, c Channel) (bool, error) {
	s.mu.Lock()
	if p, ok := s.private[c.ID]; ok && s.now().Before(p.until) {
		s.mu.Unlock()
		return p.v, nil
	}
	began := s.epoch[c.ID]
	s.mu.Unlock()
	ctx = workspace.In(ctx, c.Team)
	var ch *slack.Channel
	err := s.web.Call(ctx, func() (err error) {
		ch, err = s.web.Client(ctx).GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: c.ID})
		return err
	})
	if err != nil {
		s.web.Log.Warn("conversations.info", "channel", c.ID, "err", err)
		return true, err
	}
	p := ch.IsPrivate || ch.IsIM || ch.IsMpIM
	s.mu.Lock()
	if s.epoch[c.ID] == began && s.ttl > 0 {
		s.private[c.ID] = cached[bool]{p, s.now().Add(s.ttl)}
	}
	s.mu.Unlock()
	return p, nil
}

// Admin reports whether person is an admin or owner of team (users.info):
// a workspace admin of that team, or an admin or owner of the enterprise
// organization of an org-wide install. A person of another workspace is
// not an admin of this one.
func (s *Slack) Admin(ctx context.Context, person, team string) (bool, error) {
	u, err := s.user(workspace.In(ctx, team), person)
	if err != nil {
		return false, err
	}
	if u.Enterprise.IsAdmin || u.Enterprise.IsOwner {
		return true, nil
	}
	if team != "" && u.TeamID != "" && u.TeamID != team && !slices.Contains(u.Enterprise.Teams, team) {
		return false, nil
	}
	return u.IsAdmin || u.IsOwner || u.IsPrimaryOwner, nil
}

// Name is how Slack calls person (users.info, cached as Admin's
// answers are): their display name, or else their first, real or user
// name; "" when Slack does not say.
func (s *Slack) Name(ctx context.Context, person string) string {
	if person == "" {
		return ""
	}
	u, err := s.user(ctx, person)
	if err != nil {
		return ""
	}
	for _, n := range []string{u.Profile.DisplayName, u.Profile.FirstName, u.RealName, u.Name} {
		if n = strings.TrimSpace(n); n != "" {
			return n
		}
	}
	return ""
}

// user reads users.info, from the cache or Slack.
func (s *Slack) user(ctx context.Context, person string) (*slack.User, error) {
	s.mu.Lock()
	if u, ok := s.users[person]; ok && s.now().Before(u.until) {
		s.mu.Unlock()
		return u.v, nil
	}
	s.mu.Unlock()
	var u *slack.User
	err := s.web.Call(ctx, func() (err error) {
		u, err = s.web.Client(ctx).GetUserInfoContext(ctx, person)
		return err
	})
	if err != nil {
		s.web.Log.Warn("users.info", "err", err)
		return nil, err
	}
	if s.ttl > 0 {
		s.mu.Lock()
		s.users[person] = cached[*slack.User]{u, s.now().Add(s.ttl)}
		s.mu.Unlock()
	}
	return u, nil
}

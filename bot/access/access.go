// Package access decides who may see or do what in agentbot: one
// function, May, that every Slack entry point asks (messages, slash
// commands, each button kind, the Home tab, the DM pane, messages into a
// thread whose tool calls wait for approval). Its rules are one table
// (rules), each rule a named check of what Slack says now: the
// allowlists, channel membership (conversations.members), channel
// privacy (conversations.info), admin flags (users.info) and the team of
// an org-wide install. A rule that cannot get an answer says no.
package access

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Action is what a person asks to do.
type Action string

// The actions May decides.
const (
	// Use is talking to the bot in a channel or DM: a message, a menu or
	// picker button, a feedback button, the Stop button.
	Use Action = "use"
	// Home is opening the Home tab or the DM pane, and starting a DM
	// session from the Home tab.
	Home Action = "home"
	// Decide is approving or denying a thread's tool call, or superseding
	// it with a new message (the owner moving on).
	Decide Action = "decide"
	// Administer is an admin command: /agent reload, /agent tools,
	// /agent project use|new.
	Administer Action = "administer"
	// Bind is approving that a channel shares a project: its documents
	// come from Thing.Sources.
	Bind Action = "bind"
	// See is seeing a channel's documents and threads (the Home tab,
	// /agent project, document lists).
	See Action = "see"
)

// Channel is a Slack channel of a team. ID UnknownChannel is a channel
// that cannot be known (a document written before sources were
// recorded): treated as private, and no one is its member.
type Channel struct {
	Team, ID string
}

// UnknownChannel is the id of a channel that cannot be known.
const UnknownChannel = "?"

// String is "team/channel".
func (c Channel) String() string { return c.Team + "/" + c.ID }

// ParseChannel reads "team/channel"; ok is false for another shape.
// "?" (a source that cannot be known) reads as the unknown channel.
func ParseChannel(s string) (Channel, bool) {
	if s == UnknownChannel {
		return Channel{ID: UnknownChannel}, true
	}
	team, id, ok := strings.Cut(s, "/")
	if !ok || team == "" || id == "" || strings.Contains(id, "/") {
		return Channel{}, false
	}
	return Channel{Team: team, ID: id}, true
}

// IsDM reports whether a channel id is a direct message with the bot.
func IsDM(channel string) bool { return strings.HasPrefix(channel, "D") }

// Thing is what an action is done to.
type Thing struct {
	// Channel is where the action happens ("" for the Home tab).
	Channel Channel
	// Owner is the person who started the thread (Decide), or whose DM
	// the channel is (See of a DM).
	Owner string
	// Sources are the channels a binding joins (Bind): the channel
	// being bound, the channels bound to the project now, and every
	// channel that ever wrote one of its documents.
	Sources []Channel
}

// Answer is May's answer: OK, or the rule that said no and why, in words
// for the person.
type Answer struct {
	OK   bool
	Rule string
	Why  string
}

// yes is an answer that lets the action go on.
var yes = Answer{OK: true}

// Config is what the rules read besides Slack.
type Config struct {
	// AllowedUsers and AllowedChannels, when set, limit who may use the
	// bot and where (AGENTBOT_ALLOWED_USERS, AGENTBOT_ALLOWED_CHANNELS).
	AllowedUsers, AllowedChannels []string
	// Admins are the configured admins (AGENTBOT_ADMINS): they may run
	// admin commands and decide any thread's tool calls.
	Admins []string
}

// May decides whether person may do action to thing, asking Slack (through
// s) what the rules need. Every rule of the action must agree; the first
// that says no answers.
func May(ctx context.Context, s *Slack, cfg Config, person string, action Action, thing Thing) Answer {
	if person == "" {
		return Answer{Rule: "person", Why: "I can't tell who you are, so I can't let you do that."}
	}
	req := request{ctx: ctx, slack: s, cfg: cfg, person: person, thing: thing}
	ran := false
	for _, r := range rules {
		if !slices.Contains(r.actions, action) {
			continue
		}
		ran = true
		if ok, why := r.check(&req); !ok {
			return Answer{Rule: r.name, Why: why}
		}
	}
	if !ran {
		return Answer{Rule: "action", Why: fmt.Sprintf("I don't know the action %q, so I can't let you do it.", action)}
	}
	return yes
}

// request is one question to May, as its rules read it.
type request struct {
	ctx    context.Context
	slack  *Slack
	cfg    Config
	person string
	thing  Thing
}

// rule is one named rule of the table: the actions it applies to, and its
// check, which says why not when it refuses.
type rule struct {
	name    string
	actions []Action
	check   func(r *request) (bool, string)
}

// rules is who may do what, one rule a row; every action's rules must
// all agree.
var rules = []rule{
	{"allowed user", []Action{Use, Home, Decide, Administer, Bind, See}, allowedUser},
	{"allowed channel", []Action{Use, Decide, Administer, Bind}, allowedChannel},
	{"thread owner or admin", []Action{Decide}, ownerOrAdmin},
	{"member of the channel", []Action{Decide, See}, memberOfChannel},
	{"workspace admin", []Action{Administer}, workspaceAdmin},
	{"member of every private channel", []Action{Bind}, memberOfSources},
}

// allowedUser: AGENTBOT_ALLOWED_USERS, when set, lists who may use the bot
// at all.
func allowedUser(r *request) (bool, string) {
	if len(r.cfg.AllowedUsers) > 0 && !Listed(r.cfg.AllowedUsers, r.thing.Channel.Team, r.person) {
		return false, "Sorry, agentbot is limited to certain people in this workspace, and you're not on the list (AGENTBOT_ALLOWED_USERS). Ask the person who runs agentbot to add you."
	}
	return true, ""
}

// allowedChannel: AGENTBOT_ALLOWED_CHANNELS, when set, lists the channels
// the bot works in; direct messages are not limited by it.
func allowedChannel(r *request) (bool, string) {
	ch := r.thing.Channel.ID
	if ch == "" || IsDM(ch) || len(r.cfg.AllowedChannels) == 0 || Listed(r.cfg.AllowedChannels, r.thing.Channel.Team, ch) {
		return true, ""
	}
	return false, "Sorry, agentbot isn't enabled in this channel (AGENTBOT_ALLOWED_CHANNELS). Try a channel where it is, or a direct message."
}

// ownerOrAdmin: a thread's tool calls are decided by the person who
// started the thread, or a configured admin.
func ownerOrAdmin(r *request) (bool, string) {
	if (r.thing.Owner != "" && r.person == r.thing.Owner) || Listed(r.cfg.Admins, r.thing.Channel.Team, r.person) {
		return true, ""
	}
	return false, "Only " + Deciders(r.thing.Owner, r.thing.Channel.Team, r.cfg.Admins) + " may approve or deny this thread's tool calls."
}

// memberOfChannel: what happens in a channel is for its current members
// (a DM is its person's alone).
func memberOfChannel(r *request) (bool, string) {
	ch := r.thing.Channel
	switch {
	case ch.ID == "":
		return false, "I can't tell which channel this is about, so I can't show it."
	case IsDM(ch.ID):
		if r.thing.Owner != "" && r.thing.Owner == r.person {
			return true, ""
		}
		return false, "That is someone else's direct message with agentbot."
	}
	ok, err := r.slack.Member(r.ctx, ch, r.person)
	if err != nil {
		return false, "I couldn't check with Slack that you're a member of <#" + ch.ID + ">, so I can't let you. Please try again."
	}
	if !ok {
		return false, "You're not a member of <#" + ch.ID + ">."
	}
	return true, ""
}

// workspaceAdmin: admin commands are for configured admins and the admins
// and owners of the workspace the command runs in (in an org-wide
// install, an org admin or owner counts too).
func workspaceAdmin(r *request) (bool, string) {
	const why = "Only workspace admins or the people in AGENTBOT_ADMINS can do that."
	if Listed(r.cfg.Admins, r.thing.Channel.Team, r.person) {
		return true, ""
	}
	ok, err := r.slack.Admin(r.ctx, r.person, r.thing.Channel.Team)
	if err != nil {
		return false, "I couldn't check with Slack whether you're an admin, so I can't let you. Please try again."
	}
	if !ok {
		return false, why
	}
	return true, ""
}

// memberOfSources: a binding joins the documents of every source; it
// needs someone who is a member of each one that is private (or whose
// privacy Slack does not tell), of each one in another workspace than
// the binding's, and no source may be unknown.
func memberOfSources(r *request) (bool, string) {
	sources := distinct(r.thing.Sources)
	if len(sources) < 2 {
		return true, "" // the channel alone: nothing is shared
	}
	var need []Channel
	for _, c := range sources {
		if c.ID == UnknownChannel {
			return false, "This project holds documents written where I can't tell any more (before agentbot recorded where documents come from), so I can't open them to another channel. Ask an admin to copy what is needed into a new project."
		}
		private, err := r.slack.Private(r.ctx, c)
		if err != nil || private || (c.Team != "" && c.Team != r.thing.Channel.Team) {
			need = append(need, c)
		}
	}
	for _, c := range need {
		if ok, err := r.slack.Member(r.ctx, c, r.person); err != nil || !ok {
			return false, "A private channel's documents are shared only with the approval of someone who is a member of every one of " + ChannelList(need) + ", and you are not."
		}
	}
	return true, ""
}

// distinct is channels without repeats, in their first order.
func distinct(channels []Channel) []Channel {
	var out []Channel
	for _, c := range channels {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Listed reports whether list (AGENTBOT_ADMINS, AGENTBOT_ALLOWED_USERS or
// AGENTBOT_ALLOWED_CHANNELS) names id in team: a plain id counts in every
// workspace (an id names one person or channel across an Enterprise Grid
// organisation), "TEAM:ID" only in that team; an unknown team matches no
// scoped entry.
func Listed(list []string, team, id string) bool {
	for _, e := range list {
		if e == id || team != "" && e == team+":"+id {
			return true
		}
	}
	return false
}

// inTeam are the ids of list that count in team (see Listed), without
// their team.
func inTeam(list []string, team string) []string {
	var out []string
	for _, e := range list {
		t, id, scoped := strings.Cut(e, ":")
		switch {
		case !scoped:
			out = append(out, e)
		case t == team && team != "":
			out = append(out, id)
		}
	}
	return out
}

// Deciders names who may decide a thread's tool calls in team: its owner
// and the configured admins who count there (at most ten named).
func Deciders(owner, team string, admins []string) string {
	var who []string
	if owner != "" {
		who = append(who, "<@"+owner+">")
	}
	for _, a := range inTeam(admins, team) {
		if !slices.Contains(who, "<@"+a+">") {
			who = append(who, "<@"+a+">")
		}
	}
	if len(who) == 0 {
		return "nobody (this session has no owner and AGENTBOT_ADMINS is empty)"
	}
	if len(who) > 10 {
		who = append(who[:10], "…")
	}
	return strings.Join(who, ", ")
}

// ChannelList names channels as Slack links ("<#C1>, <#C2>").
func ChannelList(channels []Channel) string {
	names := make([]string, len(channels))
	for i, c := range channels {
		names[i] = "<#" + c.ID + ">"
		if c.ID == UnknownChannel {
			names[i] = "a channel I can't tell"
		}
	}
	return strings.Join(names, ", ")
}

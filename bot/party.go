package bot

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/slack-go/slack"

	"agentbot/storage"

	"agentbot/bot/render"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/party"
)

// cast is a party's reply: the answer split into its personas' turns
// (party.Splitter), each posted as its own message, streamed, under that
// persona's name and icon; the orchestrator's staging before the first
// turn goes in a context block. It starts when party mode loads
// (engine.EventParty) or when the session is in party mode already.
type cast struct {
	mu    sync.Mutex
	split *party.Splitter
	// next makes the reply of a persona's turn.
	next func(as render.Author, speaker string) *render.Reply
	// staging is the orchestrator's text before the first turn.
	staging string
	// turn is the text of the persona turn under way; spoke is set once a
	// persona spoke.
	turn  string
	spoke bool
	log   *slog.Logger
}

// partyActive reports whether a session runs party mode.
func partyActive(s *engine.Session) bool {
	return s != nil && activeSkill(&s.Session) == party.SkillName
}

// emit routes an event of a party's turn. It reports false for events the
// reply handles as usual: all of them until party mode starts, and
// everything but answer text after.
func (rep *reply) emitParty(ev engine.Event) bool {
	c := rep.cast
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case ev.Kind == engine.EventParty:
		var roster []party.Member
		if ev.Party != nil {
			roster = append(append(roster, ev.Party.Members...), ev.Party.Pool...)
		}
		if c.split == nil {
			c.split = &party.Splitter{}
		}
		c.split.Roster = roster
		return true
	case ev.Kind == engine.EventText && c.split != nil:
		if rep.rt != nil && rep.rt.StoppedBy() != "" {
			return true // stopped: nothing more is shown
		}
		for _, p := range c.split.Write(ev.Text) {
			rep.piece(p)
		}
		return true
	}
	return false
}

// piece shows one piece of the answer: a new turn finishes the one before
// and opens its persona's message.
func (rep *reply) piece(p party.Piece) {
	c := rep.cast
	if p.Start {
		rep.closeTurn()
		rep.r = c.next(personaAuthor(p.Speaker), p.Speaker.Label())
		c.turn, c.spoke = "", true
	}
	if !p.Speaker.Persona() {
		c.staging += p.Text
		return
	}
	c.turn += p.Text
	rep.r.Emit(engine.Event{Kind: engine.EventText, Text: p.Text})
}

// closeTurn finishes the message of the turn under way: the first time,
// the orchestrator's (its tool progress) and its staging.
func (rep *reply) closeTurn() {
	c := rep.cast
	if !c.spoke {
		if err := rep.r.PostStaging(c.staging); err != nil {
			c.log.Warn("post a party's staging", "err", err)
		}
		c.staging = ""
		rep.r.Finish(render.Outcome{})
		return
	}
	rep.r.Finish(render.Outcome{Text: c.turn})
}

// finishParty prepares the last turn for Finish: held-back text is shown,
// the outcome's text is the last turn's, and the feedback buttons go
// under it. It reports false when the turn was not a party's.
func (rep *reply) finishParty(o *render.Outcome) bool {
	c := rep.cast
	if c == nil || c.split == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if o.StoppedBy != "" {
		return true // stopped: what was said stays, nothing more is shown
	}
	for _, p := range c.split.Flush() {
		rep.piece(p)
	}
	if !c.spoke {
		// No persona spoke: the orchestrator's text is the answer.
		rep.r.Emit(engine.Event{Kind: engine.EventText, Text: c.staging})
		o.Text = c.staging
		return true
	}
	rep.r.SetFeedback(feedbackBlock())
	o.Text = c.turn
	return true
}

// personaAuthor is the name and icon a persona's turn posts under.
func personaAuthor(sp party.Speaker) render.Author {
	return agentAuthor(&catalog.Agent{ID: sp.Name, Name: sp.Name, Title: sp.Title, Icon: sp.Icon})
}

// slashParty lists the saved party rooms of the channel's default agent
// (/agent party).
func (b *slash) slashParty(cmd slack.SlashCommand, team string) {
	def, _ := storage.ChannelDefault(b.turnCtx, b.cfg.Store, team, cmd.ChannelID)
	a, ok := b.findAgent(def)
	if !ok {
		b.respond(cmd, "This channel has no default agent: `/agent use <agent>` one whose project has BMAD party mode, then `/agent party`.")
		return
	}
	r, err := b.cfg.Engine.Party(a, party.Request{ListGroups: true})
	switch {
	case err != nil:
		b.log.Warn("party rooms", "agent", a.ID, "err", err)
		b.respond(cmd, "⚠️ I couldn't read the party rooms of "+a.Name+"'s project: its party mode customization cannot be used.")
	case r == nil:
		b.respond(cmd, a.Name+"'s project has no BMAD party mode (bmad-party-mode).")
	default:
		b.respond(cmd, partyMenu(r))
	}
}

// partyMenu is /agent party's answer: the default room, the saved rooms
// and how to start one.
func partyMenu(r *party.Roster) string {
	var b strings.Builder
	def := "the installed agents"
	if r.DefaultParty != "" {
		def = "`" + r.DefaultParty + "`"
	}
	fmt.Fprintf(&b, "*Party mode* (runs in %s mode). The default room is %s.\n", r.Mode, def)
	if len(r.Groups) == 0 {
		b.WriteString("No saved rooms.\n")
	}
	for _, g := range r.Groups {
		size := fmt.Sprintf("%d members", g.MemberCount)
		if g.OpenCast {
			size = "open cast"
		}
		fmt.Fprintf(&b, "• `%s` — %s (%s)\n", g.ID, g.Name, size)
	}
	b.WriteString("Start one: `@agentbot party` · `@agentbot party --party <room> about X` · `@agentbot party with Winston and Mary about X` (add `--mode subagent` for each persona to think on its own).")
	return b.String()
}

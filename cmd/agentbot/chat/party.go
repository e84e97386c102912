package chat

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"

	"agentbot/engine"
	"agentbot/engine/party"
)

// Flags are agentbot chat's own flags.
type Flags struct {
	Agent, Session, Project string
	// Party starts the session with a party of the loaded agents; With
	// names its cast ("Winston,Mary").
	Party bool
	With  string
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Agent, "agent", "", "agent id (see agentbot agents)")
	fs.StringVar(&f.Session, "session", "", "session name to start or resume")
	fs.StringVar(&f.Project, "project", "", "the project whose documents the session shares (default: this data folder's terminal project)")
	fs.BoolVar(&f.Party, "party", false, "start a party (BMAD party mode) with the agent's installed agents")
	fs.StringVar(&f.With, "with", "", "with --party: the cast, by name, comma-separated (e.g. Winston,Mary)")
}

// Opening is the first message a new session sends: the party command
// --party asks for, "" without it.
func (f *Flags) Opening() string {
	if !f.Party {
		return ""
	}
	if w := strings.TrimSpace(f.With); w != "" {
		return "party --with " + strings.ReplaceAll(w, " ", "")
	}
	return "party"
}

// screen prints a turn's events on a terminal. Tool events come from the
// parallel tool calls of one response, so writes are serialized. In a
// party, each persona's turn is printed under the persona's name.
type screen struct {
	w     io.Writer
	mu    sync.Mutex
	split *party.Splitter // nil outside a party
	pool  []party.Member
}

// newScreen returns the screen of a turn of session c; pool is party
// mode's personas, for a session already in a party.
func newScreen(w io.Writer, s *engine.Session, pool []party.Member) *screen {
	sc := &screen{w: w, pool: pool}
	if s != nil && s.Skill != nil && s.Skill.Name == party.SkillName {
		sc.split = &party.Splitter{Roster: pool}
	}
	return sc
}

// emit prints one event.
func (sc *screen) emit(ev engine.Event) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	switch {
	case ev.Kind == engine.EventParty:
		roster := append([]party.Member{}, sc.pool...)
		if ev.Party != nil {
			roster = append(append([]party.Member{}, ev.Party.Members...), ev.Party.Pool...)
		}
		sc.split = &party.Splitter{Roster: roster}
	case ev.Kind == engine.EventText && sc.split != nil:
		sc.pieces(sc.split.Write(ev.Text))
	default:
		printEvent(sc.w, ev)
	}
}

// flush prints what a party's splitter held back, at the end of a turn.
func (sc *screen) flush() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.split != nil {
		sc.pieces(sc.split.Flush())
	}
}

// pieces prints a party's answer: a header line for each persona's turn.
func (sc *screen) pieces(ps []party.Piece) {
	for _, p := range ps {
		if p.Start {
			fmt.Fprintf(sc.w, "\n── %s ──\n", p.Speaker.Label())
		}
		fmt.Fprint(sc.w, p.Text)
	}
}

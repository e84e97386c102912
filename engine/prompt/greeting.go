package prompt

import (
	"fmt"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/vars"
)

// Greeting is what a session shows first; it costs no model call.
type Greeting struct {
	// Intro is the greeting without the menu.
	Intro string
	// Text is the intro followed by the numbered menu.
	Text string
	// Menu is the menu shown: all of it, or the first greetItems items of
	// a menu as long as a collection of skills, with More the others.
	Menu []catalog.MenuItem
	More int
}

// Greeting limits: an agent's own menu is shown whole up to maxGreetItems
// items (the Slack front end splits a long one over messages and gives the
// first 100 items buttons); a longer one, such as a collection of skills,
// shows its first greetItems items and a count, so its greeting stays far
// within a message's limits.
const (
	maxGreetItems = 200
	greetItems    = 20
)

// greetMenu returns the items a greeting shows and how many it leaves out.
func greetMenu(menu []catalog.MenuItem) ([]catalog.MenuItem, int) {
	if len(menu) <= maxGreetItems {
		return menu, 0
	}
	return menu[:greetItems], len(menu) - greetItems
}

// MoreLine is the line that tells people how to reach the menu items the
// Greet leaves out, "" when it shows them all.
func (g *Greeting) MoreLine() string {
	if g == nil || g.More == 0 {
		return ""
	}
	return moreText(g.More)
}

// moreText tells people how to reach the menu items a greeting leaves out.
func moreText(more int) string {
	return fmt.Sprintf("…and %d more. Type a number, a name, or just say what you need and I'll find the right one.", more)
}

// SessionFacts is the first user-role message: facts fixed for the session,
// and files the activation names that this install lacks.
func SessionFacts(v vars.Vars, missing []string) string {
	var b strings.Builder
	b.WriteString("[session start] Today's date for this session is ")
	b.WriteString(v["date"])
	b.WriteString(". The agent's configuration is already loaded (see the variables in the system prompt); greet me and show the menu.")
	for _, m := range missing {
		fmt.Fprintf(&b, " Note: %s, named in your activation, does not exist here; carry on without it and tell me if that matters.", m)
	}
	return b.String()
}

// Greet builds the agent's greeting and numbered menu.
func Greet(a *catalog.Agent, v vars.Vars) *Greeting {
	intro := strings.TrimSpace(a.Greeting)
	if intro != "" {
		intro, _ = vars.ExpandPartial(intro, v)
	} else {
		name := v["user_name"]
		hello := "Hello"
		if name != "" {
			hello += " " + name
		}
		who := a.Name
		if a.Icon != "" {
			who = a.Icon + " " + who
		}
		intro = fmt.Sprintf("%s! I'm %s", hello, who)
		if a.Title != "" && a.Title != a.Name {
			intro += ", your " + a.Title
		}
		intro += ". Here is what I can do:"
	}
	var b strings.Builder
	b.WriteString(intro)
	b.WriteString("\n")
	shown, more := greetMenu(a.Menu)
	for i, it := range shown {
		fmt.Fprintf(&b, "\n%d. %s", i+1, MenuLabel(it))
	}
	if more > 0 {
		fmt.Fprintf(&b, "\n\n%s", moreText(more))
	}
	if len(a.Menu) > 0 {
		b.WriteString("\n\nPick a number, type a command, or just tell me what you need.")
	}
	return &Greeting{Intro: intro, Text: b.String(), Menu: shown, More: more}
}

// MenuLabel renders a menu item as "*cmd — description", "[CP] *cmd —
// description", or "PRD — description" for a skill-format item.
func MenuLabel(it catalog.MenuItem) string {
	cmd := "*" + it.Trigger
	if it.Trigger == "" {
		cmd = it.Cmd
	}
	if it.Code != "" && it.Code != cmd {
		cmd = "[" + it.Code + "] " + cmd
	}
	if it.Description == "" {
		return cmd
	}
	return cmd + " — " + it.Description
}

// FileContent is one file handed to the model: virtual path and content.
type FileContent struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

package main

import (
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// The agents table of the sample bundle, whose icons are wide emoji
// (one with VS16), lines up.
func TestAgentsTableAlignsWideEmoji(t *testing.T) {
	r := runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t)}, "", "agents")
	r.wantCode(t, 0)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := uniseg.StringWidth(lines[0][:strings.Index(lines[0], "TITLE")])
	for _, l := range lines[1:] {
		i := strings.Index(l, "  ") // the end of the id
		rest := strings.TrimLeft(l[i:], " ")
		name := rest[:strings.Index(rest, "  ")]
		title := l[strings.Index(l, name)+len(name):]
		title = strings.TrimLeft(title, " ")
		if got := uniseg.StringWidth(l[:len(l)-len(title)]); got != want {
			t.Errorf("TITLE starts at cell %d, want %d: %q\n%s", got, want, l, r.stdout)
		}
	}
}

package catalog

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzParseAgent feeds arbitrary names and content to ParseAgent: no input
// may panic or hang, and a parsed agent must be usable.
func FuzzParseAgent(f *testing.F) {
	f.Add("pm.md", []byte(sampleXML))
	f.Add("a.md", []byte("---\nname: a\n---\n```xml\n<agent name=\"A\"><activation><step n=\"1\">x</step><rules>- r</rules></activation><menu><item cmd=\"CP or fuzzy match on create-prd\" workflow=\"w\">[CP] Go</item></menu></agent>\n```"))
	f.Add("x.agent.yaml", []byte("agent:\n  metadata: {name: X}\n  persona: {principles: [a, b]}\n  menu:\n    - {trigger: go, exec: e, description: \"[GO] Go\"}\n"))
	f.Add("v4.md", []byte("```yaml\nagent: {name: K}\ncommands:\n  - help: Show\n  - go {x}: Go\ndependencies: {tasks: [a.md]}\n```\n"))
	f.Add("s.md", []byte("<agent name=\"S\"><persona><role>a < b & c &bogus; <![CDATA[x]]></role></persona><cmds><c cmd=\"*x\">y</c></cmds></agent>"))
	f.Add("t.md", []byte("<agent><menu><item cmd='*a'>unclosed <b> and </nope> tags"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		start := time.Now()
		a, err := ParseAgent(name, data)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("ParseAgent took %v on %d bytes", d, len(data))
		}
		if err != nil {
			if a != nil {
				t.Fatalf("agent and error: %v", err)
			}
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if a == nil {
			t.Fatal("nil agent without error")
		}
		if errors.Is(checkAgent(a), ErrEmptyAgent) {
			t.Fatalf("empty agent returned: %+v", a)
		}
		for _, it := range a.Menu {
			if strings.ContainsAny(it.Trigger, " \t\n") {
				t.Fatalf("trigger with space: %q", it.Trigger)
			}
		}
		_ = a.Summary()
	})
}

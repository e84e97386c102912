package vars

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// fuzzVars reads "name=value" lines.
func fuzzVars(defs string) Vars {
	v := Vars{}
	for line := range strings.SplitSeq(defs, "\n") {
		if k, val, ok := strings.Cut(line, "="); ok {
			v[k] = val
		}
	}
	return v
}

// FuzzExpand checks that Expand and ExpandPartial never panic or hang, stay
// within MaxOutput and agree with each other. Seeds are in
// testdata/fuzz/FuzzExpand.
func FuzzExpand(f *testing.F) {
	f.Add("{project-root}/x/{installed_path}/i.md", "project-root=/p\ninstalled_path={project-root}/w")
	f.Fuzz(func(t *testing.T, s, defs string) {
		v := fuzzVars(defs)
		out, err := Expand(s, v)
		pout, unk := ExpandPartial(s, v)
		if len(pout) > len(s)+MaxOutput {
			t.Fatalf("ExpandPartial output %d bytes from %d", len(pout), len(s))
		}
		if !strings.Contains(s, "{") && (out != s || err != nil || pout != s || unk != nil) {
			t.Fatalf("text without braces changed: %q, %v / %q, %v", out, err, pout, unk)
		}
		var ue *UnknownError
		switch {
		case err == nil:
			if len(out) > len(s)+MaxOutput {
				t.Fatalf("Expand output %d bytes from %d", len(out), len(s))
			}
			if pout != out || unk != nil {
				t.Fatalf("Expand = %q but ExpandPartial = %q, %v", out, pout, unk)
			}
		case errors.As(err, &ue):
			if len(unk) == 0 || unk[0] != ue.Name {
				t.Fatalf("Expand: unknown %q; ExpandPartial lists %v", ue.Name, unk)
			}
		default:
			var ce *CycleError
			if !errors.As(err, &ce) && !errors.Is(err, ErrTooDeep) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			// ExpandPartial treats the cycle or limit as an unknown name:
			// it may list it, or fall back past it in an "A || B" chain.
		}
		seen := map[string]bool{}
		for _, n := range unk {
			if seen[n] || n == "" {
				t.Fatalf("bad unresolved list %v", unk)
			}
			seen[n] = true
		}
	})
}

// FuzzResolveWorkflow checks that ResolveWorkflow and ParseConfig never
// panic or hang, and that a resolved document is YAML again. Seeds are in
// testdata/fuzz/FuzzResolveWorkflow.
func FuzzResolveWorkflow(f *testing.F) {
	f.Add([]byte("config_source: \"{project-root}/c.yaml\"\nuser_name: \"{config_source}:user_name\"\n"), []byte("user_name: A\n"))
	f.Fuzz(func(t *testing.T, data, cfg []byte) {
		_, _ = ParseConfig(data)
		calls := 0
		read := func(string) (Vars, error) {
			calls++
			return ParseConfig(cfg)
		}
		w, err := ResolveWorkflow(data, Vars{"project-root": "/p", "output_folder": "/o", "date": "2026-01-02"}, read)
		if calls > 1 {
			t.Fatalf("readConfig called %d times", calls)
		}
		if err != nil {
			return
		}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(w.Resolved), &doc); err != nil {
			t.Fatalf("Resolved is not YAML: %v\n%s", err, w.Resolved)
		}
		seen := map[string]bool{}
		for _, n := range w.Unresolved {
			if seen[n] {
				t.Fatalf("duplicate in Unresolved %v", w.Unresolved)
			}
			seen[n] = true
		}
	})
}

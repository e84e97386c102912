package custom

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"agentbot/engine/fixtures"
)

// pyScript runs the fixture's config_utils.py: argv is scriptsDir, mode
// ("skill", "central" or "load"), then the root (or file) and skill folder.
// It prints the merged table as sorted JSON, or exits 3 with ConfigError.
const pyScript = `
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import config_utils as cu
mode, root, skill = sys.argv[2], sys.argv[3], sys.argv[4]
try:
    if mode == "skill":
        result = cu.load_customization(Path(root) if root else None, Path(skill))
    elif mode == "central":
        result = cu.load_central_config(Path(root))
    else:
        result = cu.load_toml(Path(root), required=True)
except cu.ConfigError as error:
    print("ConfigError:", error, file=sys.stderr)
    sys.exit(3)
print(json.dumps(result, sort_keys=True, default=str))
`

// python returns a python3 of at least 3.11 (tomllib), or skips.
func python(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		fixtures.Unavailable(t, fixtures.NeedPython, "python3 is not on PATH")
	}
	out, err := exec.Command(py, "-c", "import sys; print(sys.version_info >= (3, 11))").Output()
	if err != nil || strings.TrimSpace(string(out)) != "True" {
		fixtures.Unavailable(t, fixtures.NeedPython, fmt.Sprintf("python3 is older than 3.11 (or broken: %v)", err))
	}
	return py
}

// runPython returns config_utils.py's JSON, or ok=false and its stderr when
// it raised ConfigError.
func runPython(t *testing.T, py, mode, root, skill string) (out any, ok bool, stderr string) {
	t.Helper()
	scripts := filepath.Join(fixtures.Dir(t, fixtures.V612), "_bmad", "scripts")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-B", "-c", pyScript, scripts, mode, root, skill)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		return nil, false, se.String()
	}
	if err != nil {
		t.Fatalf("python: %v\n%s", err, se.String())
	}
	if err := json.Unmarshal(so.Bytes(), &out); err != nil {
		t.Fatalf("python output: %v\n%s", err, so.String())
	}
	return out, true, ""
}

// viaJSON is the Go table as JSON re-decoded, so numbers compare as float64
// on both sides.
func viaJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCrossCheckPython(t *testing.T) {
	py := python(t)
	for _, c := range mergeCases {
		if c.noPython {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := c.prepare(t)
			got, err := skillWithin(t, p)
			pyOut, pyOK, pyErr := runPython(t, py, "skill", p.root, p.skillDir)
			compare(t, got, err, pyOut, pyOK, pyErr)
		})
	}
	t.Run("no project root", func(t *testing.T) {
		p := newProject(t)
		writeFile(t, p.team(), teamFile)
		got, err := Skill("", p.skillDir)
		pyOut, pyOK, pyErr := runPython(t, py, "skill", "", p.skillDir)
		compare(t, got, err, pyOut, pyOK, pyErr)
	})
	t.Run("central", func(t *testing.T) {
		p := newProject(t)
		got, err := Central(p.root)
		pyOut, pyOK, pyErr := runPython(t, py, "central", p.root, "")
		compare(t, got, err, pyOut, pyOK, pyErr)
	})
	t.Run("central with overrides", func(t *testing.T) {
		p := newProject(t)
		writeFile(t, filepath.Join(p.root, "_bmad", "custom", "config.toml"), "[agents.bmad-agent-pm]\ndescription = \"Short PRDs.\"\n\n[agents.new-agent]\nname = \"Nia\"\n")
		writeFile(t, filepath.Join(p.root, "_bmad", "custom", "config.user.toml"), "[core]\nuser_name = \"Ana\"\n")
		got, err := Central(p.root)
		pyOut, pyOK, pyErr := runPython(t, py, "central", p.root, "")
		compare(t, got, err, pyOut, pyOK, pyErr)
	})
	for _, c := range syntaxCases {
		if c.name == "invalid UTF-8" {
			continue // tomllib raises UnicodeDecodeError, not ConfigError
		}
		t.Run("syntax/"+c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "layer.toml")
			writeFile(t, path, c.text)
			got, err := LoadFile(path, true)
			_, pyOK, pyErr := runPython(t, py, "load", path, "")
			compare(t, got, err, nil, pyOK, pyErr)
			if want := fmt.Sprintf("(at line %d,", c.line); !strings.Contains(pyErr, want) {
				t.Errorf("tomllib's error %q does not say %q", pyErr, want)
			}
		})
	}
	for _, c := range depthCases {
		if c.line != 0 {
			continue // refused here, accepted by tomllib
		}
		t.Run("depth/"+c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "layer.toml")
			writeFile(t, path, c.text)
			got, err := LoadFile(path, true)
			pyOut, pyOK, pyErr := runPython(t, py, "load", path, "")
			compare(t, got, err, pyOut, pyOK, pyErr)
		})
	}
}

// compare checks the Go result against config_utils.py's.
func compare(t *testing.T, got Table, err error, pyOut any, pyOK bool, pyErr string) {
	t.Helper()
	switch {
	case err != nil && pyOK:
		t.Fatalf("Go failed (%v), Python did not", err)
	case err == nil && !pyOK:
		t.Fatalf("Python failed (%s), Go did not", strings.TrimSpace(pyErr))
	case err != nil:
		// Both refuse the layers; outside syntax errors, for the same reason.
		var e *Error
		if errors.As(err, &e) && !strings.HasPrefix(e.Msg, "invalid TOML") && !strings.Contains(pyErr, e.Msg) {
			t.Errorf("Go says %q, Python %q", e.Msg, strings.TrimSpace(pyErr))
		}
		return
	}
	if g := viaJSON(t, got); !reflect.DeepEqual(g, pyOut) {
		gj, _ := json.MarshalIndent(g, "", " ")
		pj, _ := json.MarshalIndent(pyOut, "", " ")
		t.Errorf("Go and config_utils.py differ:\nGo:     %s\nPython: %s", gj, pj)
	}
}

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestSymlinkEscapesRefused(t *testing.T) {
	e := newEnv(t, nil)
	outside := filepath.Join(e.base, "outside")
	writeHost(t, filepath.Join(outside, "secret.txt"), "top secret")
	links := map[string]string{
		filepath.Join(e.project, "passwd"):         "/etc/passwd",
		filepath.Join(e.project, "abs-secret"):     filepath.Join(outside, "secret.txt"),
		filepath.Join(e.project, "rel-secret"):     "../outside/secret.txt",
		filepath.Join(e.project, "agents", "deep"): "../../outside/secret.txt",
		filepath.Join(e.project, "outdir"):         "../outside",
		filepath.Join(e.outputs, "outdir"):         "../../../outside",
		filepath.Join(e.outputs, "secret.md"):      "../../../outside/secret.txt",
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Skipf("symlink: %v", err)
		}
	}
	for _, p := range []string{"passwd", "abs-secret", "rel-secret", "agents/deep", "outdir/secret.txt", "/outputs/outdir/secret.txt", "/outputs/secret.md"} {
		data, _, err := e.sb.ReadFile(p)
		if err == nil {
			t.Errorf("ReadFile(%q) through an escaping link = %q", p, data)
			continue
		}
		refused(t, e, err, "a link here leads outside the allowed folders")
	}
	if e.sb.Exists("rel-secret") {
		t.Error("Exists follows an escaping link")
	}
	_, err := e.sb.List("outdir")
	refused(t, e, err, "a link here leads outside")

	// Writes through links out of /outputs are refused and change nothing.
	for _, p := range []string{"outdir/new.md", "outdir/secret.txt", "secret.md"} {
		_, err := e.sb.WriteFile(p, []byte("overwritten"))
		refused(t, e, err, "a link here leads outside")
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(data) != "top secret" {
		t.Errorf("outside file changed to %q", data)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.md")); !os.IsNotExist(err) {
		t.Errorf("a file was created outside: %v", err)
	}
	_, err = e.sb.HostPath("/outputs/outdir/secret.txt")
	refused(t, e, err, "a link here leads outside")
}

func TestSymlinkInsideRootAllowed(t *testing.T) {
	e := newEnv(t, nil)
	if err := os.Symlink("agents/pm.md", filepath.Join(e.project, "alias.md")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if err := os.Symlink("../workflows", filepath.Join(e.project, "agents", "wf")); err != nil {
		t.Fatal(err)
	}
	data, v, err := e.sb.ReadFile("alias.md")
	if err != nil || v != "/project/alias.md" || string(data) != projectFiles["agents/pm.md"] {
		t.Errorf("ReadFile(alias.md) = %q, %q, %v", data, v, err)
	}
	data, _, err = e.sb.ReadFile("/project/agents/wf/prd/template.md")
	if err != nil || string(data) != projectFiles["workflows/prd/template.md"] {
		t.Errorf("ReadFile through a folder link = %q, %v", data, err)
	}
}

func TestSessionsCannotReadEachOther(t *testing.T) {
	a := newEnv(t, nil)
	bOut := filepath.Join(filepath.Dir(a.outputs), "..", "B", "outputs")
	b, err := Open(Config{ProjectRoot: a.project, CoreFS: coreFS, OutputRoot: bOut, Vars: testVars})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.sb.WriteFile("secret.md", []byte("A's notes")); err != nil {
		t.Fatal(err)
	}
	aHost, err := a.sb.HostPath("/outputs/secret.md")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = b.ReadFile("/outputs/secret.md")
	refused(t, a, err, "read /outputs/secret.md: not found")
	_, _, err = b.ReadFile("secret.md")
	refused(t, a, err, "not found")
	_, _, err = b.ReadFile(aHost)
	refused(t, a, err, "absolute paths outside the allowed folders are not allowed")
	_, _, err = b.ReadFile("../../sessions/A/outputs/secret.md")
	refused(t, a, err, "path escapes /project")
	_, err = b.WriteFile(aHost, []byte("B was here"))
	refused(t, a, err, "save files under /outputs")
	_, err = b.WriteFile("../../A/outputs/secret.md", []byte("B was here"))
	refused(t, a, err, "path escapes /outputs")
	if data, _, err := a.sb.ReadFile("/outputs/secret.md"); err != nil || string(data) != "A's notes" {
		t.Errorf("A's output = %q, %v", data, err)
	}
}

func TestConcurrentReadsAndWrites(t *testing.T) {
	e := newEnv(t, nil)
	const workers, rounds = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*4)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				own := fmt.Sprintf("w%d/r%d.md", w, r)
				want := fmt.Sprintf("worker %d round %d", w, r)
				if _, err := e.sb.WriteFile(own, []byte(want)); err != nil {
					errs <- err
					continue
				}
				if data, _, err := e.sb.ReadFile("/outputs/" + own); err != nil || string(data) != want {
					errs <- fmt.Errorf("read back %s = %q, %v", own, data, err)
				}
				// Everyone rewrites one shared file; each write is whole.
				if _, err := e.sb.WriteFile("shared.md", []byte(want)); err != nil {
					errs <- err
				}
				if data, _, err := e.sb.ReadFile("/outputs/shared.md"); err != nil || len(data) < len("worker 0 round 0") {
					errs <- fmt.Errorf("shared.md = %q, %v", data, err)
				}
				if _, _, err := e.sb.ReadFile("agents/pm.md"); err != nil {
					errs <- err
				}
				if _, _, err := e.sb.ReadFile("/inputs/x"); err == nil {
					errs <- fmt.Errorf("read a missing input")
				}
				if _, err := e.sb.List("/outputs"); err != nil {
					errs <- err
				}
			}
		}()
	}
	// The bot creates /inputs while the tools run.
	writeHost(t, filepath.Join(e.inputs, "y.txt"), "y")
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range workers {
		names, err := e.sb.List(fmt.Sprintf("/outputs/w%d", w))
		if err != nil || len(names) != rounds {
			t.Errorf("worker %d saved %d files, %v; want %d", w, len(names), err, rounds)
		}
	}
}

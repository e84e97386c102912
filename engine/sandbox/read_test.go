package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"agentbot/engine/fixtures"
)

func TestReadProjectFile(t *testing.T) {
	e := newEnv(t, nil)
	for _, p := range []string{"workflows/prd/instructions.md", "/project/workflows/prd/instructions.md", filepath.Join(e.project, "workflows/prd/instructions.md")} {
		data, v, err := e.sb.ReadFile(p)
		if err != nil {
			t.Fatalf("ReadFile(%q): %v", p, err)
		}
		if v != "/project/workflows/prd/instructions.md" || string(data) != projectFiles["workflows/prd/instructions.md"] {
			t.Errorf("ReadFile(%q) = %q, %q", p, data, v)
		}
	}
}

func TestReadCoreFromFS(t *testing.T) {
	e := newEnv(t, nil)
	data, v, err := e.sb.ReadFile("/core/tasks/workflow.md")
	if err != nil || v != "/core/tasks/workflow.md" || !bytes.Equal(data, coreFS["tasks/workflow.md"].Data) {
		t.Fatalf("ReadFile core = %q, %q, %v", data, v, err)
	}
	_, _, err = e.sb.ReadFile("/core/tasks/workflw.md")
	refused(t, e, err, "nearby: /core/tasks/workflow.md")
	_, _, err = e.sb.ReadFile("/core/tasks")
	refused(t, e, err, "is a folder, not a file; it holds: adv-elicit.md, workflow.md")
	names, err := e.sb.List("/core")
	if err != nil || !slices.Equal(names, []string{"tasks/"}) {
		t.Errorf("List(/core) = %v, %v", names, err)
	}
}

func TestReadCoreFromFSSizeCap(t *testing.T) {
	fsys := fstest.MapFS{"big.md": {Data: bytes.Repeat([]byte("a"), 300)}}
	e := newEnv(t, func(c *Config) { c.CoreFS = fsys; c.MaxRead = 100 })
	_, _, err := e.sb.ReadFile("/core/big.md")
	refused(t, e, err, "file is too large to read (300 bytes; the limit is 100 bytes)")
}

func TestReadCoreFromHostRoot(t *testing.T) {
	var core string
	e := newEnv(t, func(c *Config) {
		core = filepath.Join(filepath.Dir(c.ProjectRoot), "bmad-core")
		writeHost(t, filepath.Join(core, "tasks", "workflow.xml"), "<task/>")
		c.CoreRoot = core
	})
	data, v, err := e.sb.ReadFile("/core/tasks/workflow.xml")
	if err != nil || v != "/core/tasks/workflow.xml" || string(data) != "<task/>" {
		t.Fatalf("ReadFile = %q, %q, %v", data, v, err)
	}
	// CoreRoot wins over CoreFS.
	_, _, err = e.sb.ReadFile("/core/tasks/workflow.md")
	refused(t, e, err, "nearby: /core/tasks/workflow.xml")
	if v, err := e.sb.Resolve(filepath.Join(core, "tasks", "workflow.xml"), false); err != nil || v != "/core/tasks/workflow.xml" {
		t.Errorf("host core path = %q, %v", v, err)
	}
}

func TestReadSizeCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxRead = 1024 })
	writeHost(t, filepath.Join(e.project, "exact.md"), strings.Repeat("x", 1024))
	writeHost(t, filepath.Join(e.project, "big.md"), strings.Repeat("x", 3000))
	if data, _, err := e.sb.ReadFile("exact.md"); err != nil || len(data) != 1024 {
		t.Errorf("ReadFile at the cap = %d bytes, %v", len(data), err)
	}
	_, _, err := e.sb.ReadFile("big.md")
	refused(t, e, err, "read /project/big.md: file is too large to read (2.9 KiB; the limit is 1.0 KiB)")
}

func TestReadDefaultSizeCap(t *testing.T) {
	e := newEnv(t, nil)
	writeHost(t, filepath.Join(e.project, "big.md"), strings.Repeat("x", DefaultMax+1))
	_, _, err := e.sb.ReadFile("big.md")
	refused(t, e, err, "the limit is 1.0 MiB")
}

func TestReadBinary(t *testing.T) {
	e := newEnv(t, nil)
	writeHost(t, filepath.Join(e.project, "image.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	latin := bytes.Repeat([]byte{0xe9, 'a', 0xff, 'b', 0xfe}, 100) // not UTF-8 at all
	writeHost(t, filepath.Join(e.project, "blob.bin"), string(latin))
	for _, p := range []string{"image.png", "blob.bin"} {
		_, _, err := e.sb.ReadFile(p)
		refused(t, e, err, "binary file, not shown")
	}
}

func TestIsBinary(t *testing.T) {
	// A multi-byte rune cut by the sniff window is not an invalid byte.
	text := []byte(strings.Repeat("a", binarySniff-1) + "✓ more text")
	if isBinary(text) {
		t.Error("UTF-8 text with a rune across the sniff window is called binary")
	}
	if isBinary([]byte("café — naïve ✓\n")) {
		t.Error("UTF-8 text is called binary")
	}
	if isBinary(nil) {
		t.Error("empty file is called binary")
	}
	// A few stray Latin-1 bytes in text are tolerated; many are not.
	if isBinary([]byte("caf\xe9 " + strings.Repeat("plain ascii ", 10))) {
		t.Error("one invalid byte in text is called binary")
	}
	if !isBinary([]byte("a\x00b")) {
		t.Error("NUL byte not called binary")
	}
	if !isBinary(bytes.Repeat([]byte{0xc3, 0x28}, 50)) {
		t.Error("invalid UTF-8 not called binary")
	}
	// A NUL after the sniff window is not looked at.
	late := append(bytes.Repeat([]byte("a"), binarySniff), 0)
	if isBinary(late) {
		t.Error("NUL after the sniff window changed the verdict")
	}
}

func TestReadFolder(t *testing.T) {
	e := newEnv(t, nil)
	_, _, err := e.sb.ReadFile("workflows/prd")
	refused(t, e, err, "read /project/workflows/prd: is a folder, not a file; it holds: instructions.md, template.md, workflow.yaml")
	_, _, err = e.sb.ReadFile("/project")
	refused(t, e, err, "it holds: agents/, bundle.yaml, config.yaml, workflows/")
	for i := range 15 {
		writeHost(t, filepath.Join(e.project, "many", fmt.Sprintf("f%02d.md", i)), "x")
	}
	_, _, err = e.sb.ReadFile("many")
	refused(t, e, err, "f09.md (and 5 more)")
}

func TestReadMissingListsNearby(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		p    string
		want string
	}{
		{"workflows/prd/instructon.md", "read /project/workflows/prd/instructon.md: not found; nearby: /project/workflows/prd/instructions.md, "},
		{"workflows/prd/Template.MD", "nearby: /project/workflows/prd/template.md"},
		{"workflows/prdd/instructions.md", "not found; folder /project/workflows/prdd does not exist; nearby: /project/workflows/prd/, /project/workflows/product-brief/"},
		{"/project/agent/pm.md", "folder /project/agent does not exist; nearby: /project/agents/"},
		{"bundle.yaml/x", "not found; /project/bundle.yaml is a file, not a folder"},
		{"/outputs/nothing.md", "read /outputs/nothing.md: not found; /outputs is empty"},
		{"/inputs/upload.pdf", "not found; /inputs has no files yet"},
	}
	for _, tt := range tests {
		_, _, err := e.sb.ReadFile(tt.p)
		refused(t, e, err, tt.want)
	}
}

func TestReadMissingInLargeFolder(t *testing.T) {
	e := newEnv(t, nil)
	for i := range 30 {
		writeHost(t, filepath.Join(e.project, "docs", fmt.Sprintf("zz-unrelated-%02d.txt", i)), "x")
	}
	for _, n := range []string{"architecture.md", "architecture-v2.md", "arch.md"} {
		writeHost(t, filepath.Join(e.project, "docs", n), "x")
	}
	_, _, err := e.sb.ReadFile("docs/architecure.md")
	refused(t, e, err, "nearby: /project/docs/architecture.md")
	msg := err.Error()
	if strings.Contains(msg, "unrelated") {
		t.Errorf("dissimilar names suggested: %q", msg)
	}
	for _, n := range []string{"architecture-v2.md", "arch.md"} {
		if !strings.Contains(msg, n) {
			t.Errorf("similar name %s not suggested: %q", n, msg)
		}
	}
	// Nothing similar: the first names are shown, at most maxNearby.
	_, _, err = e.sb.ReadFile("docs/qqqq")
	refused(t, e, err, "nearby: /project/docs/arch.md")
	if got := strings.Count(err.Error(), "/project/docs/"); got != maxNearby+1 {
		t.Errorf("%d paths in %q, want the missing one and %d suggestions", got, err, maxNearby)
	}
}

func TestReadEmptyFile(t *testing.T) {
	e := newEnv(t, nil)
	writeHost(t, filepath.Join(e.project, "empty.md"), "")
	data, v, err := e.sb.ReadFile("empty.md")
	if err != nil || len(data) != 0 || v != "/project/empty.md" {
		t.Errorf("ReadFile(empty) = %q, %q, %v", data, v, err)
	}
}

func TestReadFIFORefusedWithoutHang(t *testing.T) {
	e := newEnv(t, nil)
	if err := syscall.Mkfifo(filepath.Join(e.project, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := e.sb.ReadFile("pipe"); done <- err }()
	select {
	case err := <-done:
		refused(t, e, err, "not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile of a FIFO hangs")
	}
}

func TestRelativeReadFallsBack(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.sb.WriteFile("notes.md", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	data, v, err := e.sb.ReadFile("notes.md")
	if err != nil || v != "/outputs/notes.md" || string(data) != "mine" {
		t.Errorf("relative read of a saved file = %q, %q, %v", data, v, err)
	}
	// The project wins when both have the name.
	if _, err := e.sb.WriteFile("bundle.yaml", []byte("shadow")); err != nil {
		t.Fatal(err)
	}
	if _, v, _ := e.sb.ReadFile("bundle.yaml"); v != "/project/bundle.yaml" {
		t.Errorf("relative read of bundle.yaml came from %s, want /project", v)
	}
	// Inputs come after outputs.
	writeHost(t, filepath.Join(e.inputs, "brief.txt"), "shared")
	if data, v, err := e.sb.ReadFile("brief.txt"); err != nil || v != "/inputs/brief.txt" || string(data) != "shared" {
		t.Errorf("relative read of an input = %q, %q, %v", data, v, err)
	}
	// Absolute paths never fall back.
	_, _, err = e.sb.ReadFile("/project/notes.md")
	refused(t, e, err, "read /project/notes.md: not found")
	// A miss everywhere reports the /project path.
	_, _, err = e.sb.ReadFile("nowhere.md")
	refused(t, e, err, "read /project/nowhere.md: not found")
}

func TestInputsOpenLazily(t *testing.T) {
	e := newEnv(t, nil)
	if names, err := e.sb.List("/inputs"); err != nil || len(names) != 0 {
		t.Fatalf("List(/inputs) before it exists = %v, %v", names, err)
	}
	if e.sb.Exists("/inputs/spec.txt") {
		t.Fatal("Exists before the file is there")
	}
	// The bot downloads a file mid-session.
	writeHost(t, filepath.Join(e.inputs, "spec.txt"), "spec")
	data, v, err := e.sb.ReadFile("/inputs/spec.txt")
	if err != nil || v != "/inputs/spec.txt" || string(data) != "spec" {
		t.Fatalf("ReadFile(/inputs/spec.txt) = %q, %q, %v", data, v, err)
	}
	if names, err := e.sb.List("/inputs"); err != nil || !slices.Equal(names, []string{"spec.txt"}) {
		t.Errorf("List(/inputs) = %v, %v", names, err)
	}
}

func TestListAndExists(t *testing.T) {
	e := newEnv(t, nil)
	if names, err := e.sb.List("/"); err != nil || !slices.Equal(names, []string{"project/", "core/", "outputs/", "inputs/"}) {
		t.Errorf("List(/) = %v, %v", names, err)
	}
	if names, err := e.sb.List("workflows"); err != nil || !slices.Equal(names, []string{"prd/", "product-brief/"}) {
		t.Errorf("List(workflows) = %v, %v", names, err)
	}
	if names, err := e.sb.List("/outputs"); err != nil || len(names) != 0 {
		t.Errorf("List(/outputs) = %v, %v", names, err)
	}
	_, err := e.sb.List("bundle.yaml")
	refused(t, e, err, "list /project/bundle.yaml: is a file, not a folder")
	_, err = e.sb.List("../..")
	refused(t, e, err, "path escapes /project")
	_, err = e.sb.List("/etc")
	refused(t, e, err, "absolute paths outside")
	_, err = e.sb.List("/project/agnts")
	refused(t, e, err, "nearby: /project/agents/")

	for p, want := range map[string]bool{
		"agents/pm.md":            true,
		"/project/agents":         true,
		"/core/tasks/workflow.md": true,
		"agents/nope.md":          false,
		"../../etc/passwd":        false,
		"/etc/passwd":             false,
		"a\x00b":                  false,
	} {
		if got := e.sb.Exists(p); got != want {
			t.Errorf("Exists(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestClosedSandbox(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.sb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.sb.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, _, err := e.sb.ReadFile("agents/pm.md")
	refused(t, e, err, "sandbox is closed")
	_, err = e.sb.WriteFile("x.md", []byte("x"))
	refused(t, e, err, "sandbox is closed")
	_, _, err = e.sb.ReadFile("/inputs/x")
	refused(t, e, err, "sandbox is closed")
}

func TestReadFixtures(t *testing.T) {
	dir := filepath.Join(fixtures.Dir(t, fixtures.V6), "src")
	sb, err := Open(Config{ProjectRoot: dir, CoreRoot: filepath.Join(dir, "core")})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	want, err := os.ReadFile(filepath.Join(dir, "core", "tasks", "workflow.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/core/tasks/workflow.xml", "/project/core/tasks/workflow.xml", "core/tasks/workflow.xml"} {
		data, _, err := sb.ReadFile(p)
		if err != nil || !bytes.Equal(data, want) {
			t.Errorf("ReadFile(%q) = %d bytes, %v; want %d bytes", p, len(data), err, len(want))
		}
	}
	names, err := sb.List("/project")
	if err != nil || !slices.Contains(names, "bmm/") {
		t.Errorf("List(/project) = %v, %v", names, err)
	}
	_, err = sb.WriteFile("x.md", []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "/outputs is not available") {
		t.Errorf("write without outputs: %v", err)
	}
}

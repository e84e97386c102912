package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/transcript"
)

// bundlesDir is the repository's sample bundles folder.
func bundlesDir(t testing.TB) string { t.Helper(); return fixtures.Bundles(t) }

// result is what one in-process command run produced.
type result struct {
	code           int
	stdout, stderr string
}

// runCmd runs an agentbot command in-process with vars as its whole
// environment and stdin as its input.
func runCmd(t testing.TB, vars map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := run(ctx, &env{
		args:   args,
		stdin:  strings.NewReader(stdin),
		stdout: &out,
		stderr: &errb,
		getenv: func(k string) string { return vars[k] },
	})
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// wantCode fails the test when a run ended with another exit code.
func (r result) wantCode(t testing.TB, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// contains fails the test when s lacks sub.
func contains(t testing.TB, what, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%s lacks %q:\n%s", what, sub, s)
	}
}

// lacks fails the test when s holds sub.
func lacks(t testing.TB, what, s, sub string) {
	t.Helper()
	if strings.Contains(s, sub) {
		t.Fatalf("%s holds %q:\n%s", what, sub, s)
	}
}

// waitUntil polls cond every few milliseconds until it holds or timeout
// passes.
func waitUntil(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for a child process's output copier
// and the test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// sentMessages decodes the messages of a request the fake model received
// as agentbot's own transcript messages.
func sentMessages(t *testing.T, r fakemodel.Request) []transcript.Message {
	t.Helper()
	var body struct {
		Messages []transcript.Message `json:"messages"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatalf("decode request %d: %v", r.N, err)
	}
	return body.Messages
}

package storage_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/storage"
)

// LegacySource: the thread's channel, else the session's, "" for the
// terminal's, else UnknownSource.
func TestLegacySource(t *testing.T) {
	for _, c := range []struct{ thread, sessionKey, want string }{
		{"T1/C1/1.1", "", "T1/C1"},
		{"T1/C1/1.1", "T2/C2/2.2", "T1/C1"},
		{"chat/demo", "T2/C2/2.2", ""},
		{"", "T2/C2/2.2", "T2/C2"},
		{"agentbot projects import", "T2/C2/2.2", "T2/C2"},
		{"", "chat/pm/x", ""},
		{"", "", storage.UnknownSource},
		{"agentbot projects import", "", storage.UnknownSource},
		{"T1//1.1", "odd", storage.UnknownSource},
	} {
		if got := storage.LegacySource(c.thread, c.sessionKey); got != c.want {
			t.Errorf("LegacySource(%q, %q) = %q, want %q", c.thread, c.sessionKey, got, c.want)
		}
	}
}

// CheckDocVersion takes a source that is a channel, unknown or none, and
// refuses one that is not a channel or is not its Slack thread's.
func TestCheckDocVersionSource(t *testing.T) {
	for _, v := range []storage.DocVersion{
		{Path: "a.md"},
		{Path: "a.md", Thread: "chat/demo"},
		{Path: "a.md", Thread: "T1/C1/1.1", Source: "T1/C1"},
		{Path: "a.md", Source: "T1/C1"},
		{Path: "a.md", Source: storage.UnknownSource},
	} {
		if err := storage.CheckDocVersion("p", v); err != nil {
			t.Errorf("CheckDocVersion(%+v) = %v", v, err)
		}
	}
	for _, v := range []storage.DocVersion{
		{Path: "a.md", Thread: "T1/C1/1.1"},
		{Path: "a.md", Thread: "T1/C1/1.1", Source: "T1/C2"},
		{Path: "a.md", Thread: "T1/C1/1.1", Source: storage.UnknownSource},
		{Path: "a.md", Source: "T1"},
		{Path: "a.md", Source: "T1/"},
		{Path: "a.md", Source: "/C1"},
		{Path: "a.md", Source: "T1/C1/1.1"},
		{Path: "a.md", Source: "T1/C\n1"},
		{Path: "a.md", Source: "T1/" + strings.Repeat("C", storage.MaxKeyLen)},
	} {
		if err := storage.CheckDocVersion("p", v); err == nil {
			t.Errorf("CheckDocVersion(%+v) accepted it", v)
		}
	}
	if err := storage.CheckProjectSources(""); err == nil {
		t.Error("CheckProjectSources accepted an empty name")
	}
}

// projectList is a store's list of projects.
type projectList []storage.Project

func (l projectList) ListProjects(context.Context) ([]storage.Project, error) { return l, nil }

// A project is found by its name, and by the name of its folder, which
// the path of a saved document shows ("terminal-4e686af7bdcc"); a name
// that is neither is not found.
func TestFindProjectByFolderName(t *testing.T) {
	list := projectList{{Name: "terminal"}, {Name: "channel/T1/C1"}}
	folder := filepath.Base(storage.Folders{Dir: "/data"}.ProjectFolder("channel/T1/C1"))
	for _, name := range []string{"channel/T1/C1", folder} {
		if p, err := storage.FindProject(context.Background(), list, name); err != nil || p.Name != "channel/T1/C1" {
			t.Errorf("FindProject(%q) = %+v, %v", name, p, err)
		}
	}
	if !strings.HasPrefix(folder, "channel_T1_C1-") || folder != storage.ProjectFolderName("channel/T1/C1") {
		t.Errorf("folder name %q", folder)
	}
	if _, err := storage.FindProject(context.Background(), list, "terminal-000000000000"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a folder name of no project: %v", err)
	}
}

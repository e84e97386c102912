package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"agentbot/engine/transcript"
)

// A project is a shared, versioned set of documents: every thread of the
// channels bound to it reads and writes the same documents, each version
// recorded with the thread, agent and person that wrote it. By default a
// channel is its own project (ChannelProject), so a person's DM channel
// with the bot is theirs alone; an admin may bind several channels to one
// named project.

// Project is one project's record.
type Project struct {
	// Name is the project's key: a name an admin chose ("checkout"), or
	// a channel's default project ("channel/T1/C1", see ChannelProject).
	Name string `json:"name"`
	// Owner is the person whose DMs the project holds; "" for others.
	Owner   string    `json:"owner,omitempty"`
	Created time.Time `json:"created"`
}

// DocVersion is one version of a project's document, without its bytes
// (the engine's type, which the stores keep).
type DocVersion = transcript.DocVersion

// StaleError refuses a save based on a version that is not the latest.
type StaleError = transcript.StaleError

// ErrStale is matched by a save refused as stale.
var ErrStale = transcript.ErrStale

// AnyVersion as a save's base accepts whatever the latest version is.
const AnyVersion = transcript.AnyVersion

// Projects keeps projects, the channels bound to them, and their
// versioned documents.
type Projects interface {
	// CreateProject creates a project; an existing name is an error
	// matching ErrExists.
	CreateProject(ctx context.Context, p Project) error
	// ListProjects lists every project, by name (storage.FindProject finds
	// one). A project exists once created or written to.
	ListProjects(ctx context.Context) ([]Project, error)
	// BindChannel binds a channel ("team/channel") to a project, which
	// must exist; "" unbinds it, so it is its own project again.
	BindChannel(ctx context.Context, channel, project string) error
	// ChannelBinding is the project a channel is bound to, "" for none.
	ChannelBinding(ctx context.Context, channel string) (string, error)
	// BoundChannels lists the channels bound to a project, sorted.
	BoundChannels(ctx context.Context, project string) ([]string, error)
	// SaveDocument stores data as the next version of v.Path, recorded
	// with v's session, thread, agent and person, and returns the version.
	// base is the version the writer has seen (0: none, AnyVersion: do not
	// check); any other latest version refuses it with a *StaleError. The
	// project is created when missing.
	SaveDocument(ctx context.Context, project string, v DocVersion, base int, data []byte) (DocVersion, error)
	// EditDocument stores edit(latest bytes) as the next version,
	// atomically: no other version lands between the read and the write
	// (a missing document reads as nil). An error from edit is returned
	// as it is, and nothing is stored.
	EditDocument(ctx context.Context, project string, v DocVersion, edit func(old []byte) ([]byte, error)) (DocVersion, error)
	// Documents lists the latest version of each of a project's
	// documents, most recently changed first.
	Documents(ctx context.Context, project string) ([]DocVersion, error)
	// DocumentHistory lists every version of one document, newest first.
	DocumentHistory(ctx context.Context, project, path string) ([]DocVersion, error)
	// DocumentData returns the bytes of a version (0: the latest).
	DocumentData(ctx context.Context, project, path string, version int) ([]byte, error)
	// ProjectSources lists, sorted and distinct, the Source of every
	// version of every document of a project (shared inputs included):
	// every channel ("team/channel") that ever wrote to it, whatever it is
	// bound to now. UnknownSource is among them when a version's channel
	// cannot be known; versions written from no channel (the terminal's)
	// add nothing. A project without documents has none.
	ProjectSources(ctx context.Context, project string) ([]string, error)
}

// FindProject returns a project's record by its name, or by the name of
// its folder (ProjectFolderName, which a saved document's path shows), or
// an error matching ErrNotFound.
func FindProject(ctx context.Context, st interface {
	ListProjects(ctx context.Context) ([]Project, error)
}, name string) (Project, error) {
	list, err := st.ListProjects(ctx)
	if err != nil {
		return Project{}, err
	}
	for _, p := range list {
		if p.Name == name {
			return p, nil
		}
	}
	for _, p := range list { // the name of its folder, as a saved document's path shows it
		if ProjectFolderName(p.Name) == name {
			return p, nil
		}
	}
	return Project{}, fmt.Errorf("project %q: %w", name, ErrNotFound)
}

// UnknownSource is the source of a version written before sources were
// recorded whose channel cannot be known (LegacySource): its project must
// be taken as written from a channel no one may read.
const UnknownSource = "?"

// LegacySource is the Source of a version recorded without one, by an
// agentbot that did not record sources: the channel of thread, the key of
// the session that wrote it; "" when that is the terminal's ("chat/…");
// else the channel of sessionKey, the key of the session (by the version's
// session id) that wrote it ("" when there is no such session), or ""
// when that is the terminal's; else UnknownSource. Both stores migrate
// their old versions with it.
func LegacySource(thread, sessionKey string) string {
	for _, key := range []string{thread, sessionKey} {
		if source := transcript.SourceOf(key); source != "" {
			return source
		}
		if terminalKey(key) {
			return ""
		}
	}
	return UnknownSource
}

// terminalKey reports whether a session key is the terminal's ("chat/…").
func terminalKey(key string) bool {
	return strings.HasPrefix(key, "chat/")
}

// Default project names: a channel's own project, and the terminal's.
const (
	channelProjectPrefix = "channel/"
	// TerminalProject is `agentbot chat`'s project when none is named.
	TerminalProject = "terminal"
)

// ChannelProject is the name of a channel's own project: the project a
// channel is until it is bound to another. A DM channel's is its person's.
func ChannelProject(team, channel string) string {
	return channelProjectPrefix + team + "/" + channel
}

// SlackChannel splits a Slack thread's session key ("team/channel/thread")
// into its team and channel; ok is false for a key of another shape (the
// terminal's "chat/…"). It is transcript.SlackChannel, the one parser.
func SlackChannel(key string) (team, channel string, ok bool) {
	return transcript.SlackChannel(key)
}

// ProjectOfKey is the default project of a session key: a Slack thread's
// is its channel's; the terminal's ("chat/…") and any other is
// TerminalProject.
func ProjectOfKey(key string) string {
	team, channel, ok := SlackChannel(key)
	if !ok {
		return TerminalProject
	}
	return ChannelProject(team, channel)
}

// ThreadProject is the project a session key's thread shares: a Slack
// thread's channel's (BoundProject); any other key's (the terminal's) is
// terminal.
func ThreadProject(ctx context.Context, st interface {
	ChannelBinding(ctx context.Context, channel string) (string, error)
}, key, terminal string) (string, error) {
	team, channel, ok := SlackChannel(key)
	if !ok {
		return terminal, nil
	}
	return BoundProject(ctx, st, team, channel)
}

// BoundProject is the project a channel's threads share: the one the
// channel is bound to, else its own. With an error reading the binding it
// is the channel's own project, never another channel's.
func BoundProject(ctx context.Context, st interface {
	ChannelBinding(ctx context.Context, channel string) (string, error)
}, team, channel string) (string, error) {
	bound, err := st.ChannelBinding(ctx, team+"/"+channel)
	if err != nil || bound == "" {
		return ChannelProject(team, channel), err
	}
	return bound, nil
}

// maxProjectName bounds a project's name.
const maxProjectName = 200

// CheckProjectName refuses a project name a store cannot key: empty,
// oversized or holding a control character. Every store checks names with
// it; CheckUserProjectName is stricter, for names people choose.
func CheckProjectName(name string) error {
	if name == "" {
		return errors.New("empty project name")
	}
	if len(name) > maxProjectName {
		return fmt.Errorf("project name too long (%d bytes, max %d)", len(name), maxProjectName)
	}
	if strings.IndexFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return fmt.Errorf("project name %q holds a control character", name)
	}
	return nil
}

// CheckUserProjectName is CheckProjectName for a name a person chooses:
// letters, digits, '-', '_' and '.', at most 80 bytes, so it never names a
// channel's own project.
func CheckUserProjectName(name string) error {
	if name == "" {
		return errors.New("empty project name")
	}
	if len(name) > 80 {
		return fmt.Errorf("project name too long (%d bytes, max 80)", len(name))
	}
	if strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) >= 0 || name[0] == '.' {
		return fmt.Errorf("project name %q: use letters, digits, '-', '_' and '.' (not first)", name)
	}
	return nil
}

// CheckDocVersion checks a project name, a document path and a source for
// a save: the source is "", UnknownSource or a channel ("team/channel"),
// and a version written in a Slack thread carries that thread's channel
// (SourceOf its Thread), so that no channel's writes go unrecorded.
func CheckDocVersion(project string, v DocVersion) error {
	if err := CheckProjectName(project); err != nil {
		return err
	}
	if err := CheckOutputPath(v.Path); err != nil {
		return err
	}
	return checkSource(v)
}

// checkSource checks v.Source (see CheckDocVersion).
func checkSource(v DocVersion) error {
	if want := transcript.SourceOf(v.Thread); want != "" && v.Source != want {
		return fmt.Errorf("document %s: source %q is not %q, the channel of its thread %q", v.Path, v.Source, want, v.Thread)
	}
	if v.Source == "" || v.Source == UnknownSource {
		return nil
	}
	team, channel, ok := strings.Cut(v.Source, "/")
	if !ok || team == "" || channel == "" || strings.Contains(channel, "/") || len(v.Source) > MaxKeyLen ||
		strings.IndexFunc(v.Source, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return fmt.Errorf("document %s: source %q is not a channel (team/channel)", v.Path, v.Source)
	}
	return nil
}

// CheckProjectSources checks ProjectSources' project name; both stores
// check it with this.
func CheckProjectSources(project string) error {
	if err := CheckProjectName(project); err != nil {
		return fmt.Errorf("sources of project: %w", err)
	}
	return nil
}

// NextVersion checks base against the latest version (0: none) and
// returns the version to write, or a *StaleError; both stores' saves
// decide with it.
func NextVersion(latest DocVersion, base int) (int, error) {
	if base != AnyVersion && base != latest.Version {
		return 0, &StaleError{Seen: base, Latest: latest}
	}
	return latest.Version + 1, nil
}

// SortDocuments orders document versions most recently changed first,
// then by path; both stores' Documents end with it.
func SortDocuments(docs []DocVersion) {
	slices.SortFunc(docs, func(a, b DocVersion) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
}

// ProjectFolder is where a process keeps its working copy of a project's
// documents under a data folder: Dir/projects/ProjectFolderName(name).
func (f Folders) ProjectFolder(name string) string {
	return filepath.Join(f.Dir, "projects", ProjectFolderName(name))
}

// ProjectFolderName is the name of a project's folder: <name,
// escaped>-<hash>, one path element whatever the name holds, distinct for
// distinct names. FindProject finds a project by it too.
func ProjectFolderName(name string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	if len(safe) > 60 {
		safe = safe[:60]
	}
	sum := sha256.Sum256([]byte(name))
	return safe + "-" + hex.EncodeToString(sum[:6])
}

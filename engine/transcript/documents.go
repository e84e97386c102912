package transcript

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// DocVersion is one version of a project's document, without its bytes.
// Stores keep it (storage.Projects); the engine writes documents with it.
type DocVersion struct {
	// Path is relative to the project's documents ("prd.md").
	Path    string `json:"path"`
	Version int    `json:"version"`
	Size    int64  `json:"size"`
	// Session and Thread say where it was written (a session id and its
	// key); Agent and Person who wrote it. A zero Time is set by the store.
	Session string    `json:"session,omitempty"`
	Thread  string    `json:"thread,omitempty"`
	Agent   string    `json:"agent,omitempty"`
	Person  string    `json:"person,omitempty"`
	Time    time.Time `json:"time"`
	// Source is the Slack channel ("team/channel") the version was
	// written from, SourceOf its thread; "" when written from no channel
	// (the terminal). A project's privacy comes from every channel that
	// ever wrote to it, so stores keep it for good.
	Source string `json:"source,omitempty"`
}

// SlackChannel splits a Slack thread's session key ("team/channel/thread")
// into its team and channel; ok is false for a key of another shape (the
// terminal's "chat/…"). It is the one parser of the channel a session key
// belongs to (storage.SlackChannel is it too).
func SlackChannel(key string) (team, channel string, ok bool) {
	parts := strings.Split(key, "/")
	if len(parts) != 3 || parts[0] == "chat" || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// SourceOf is the DocVersion.Source of a version written in the session
// of key: a Slack thread's channel ("team/channel"), "" for any other key
// (the terminal's "chat/…").
func SourceOf(key string) string {
	team, channel, ok := SlackChannel(key)
	if !ok {
		return ""
	}
	return team + "/" + channel
}

// Author names who wrote a version: the person, the agent, or both.
func (v DocVersion) Author() string { return v.AuthorAs("") }

// AuthorAs is Author with the person called name, as people know them (a
// display name); "" names them by Person, their id.
func (v DocVersion) AuthorAs(name string) string {
	person := v.Person
	if name != "" && person != "" {
		person = name
	}
	switch {
	case person != "" && v.Agent != "":
		return person + " with " + v.Agent
	case person != "":
		return person
	case v.Agent != "":
		return v.Agent
	}
	return "unknown"
}

// ErrStale is matched by a save refused because the document changed
// since the version the writer has seen.
var ErrStale = errors.New("document changed since it was read")

// StaleError refuses a save based on a version that is not the latest: it
// names who changed the document, where and when.
type StaleError struct {
	// Seen is the version the writer based its save on (0: none).
	Seen int
	// Latest is the document's newest version.
	Latest DocVersion
	// By is how the person who saved Latest is called (a display name),
	// set by whoever knows it; "" names them by their id.
	By string
}

func (e *StaleError) Error() string {
	l := e.Latest
	where := l.Thread
	if where == "" {
		where = "another session"
	}
	seen := "no version"
	if e.Seen > 0 {
		seen = fmt.Sprintf("version %d", e.Seen)
	}
	return fmt.Sprintf("%s changed since you read it: version %d was saved by %s in %s at %s, and you had %s; read it first, then save your changes on top",
		l.Path, l.Version, l.AuthorAs(e.By), where, l.Time.UTC().Format("2006-01-02 15:04 UTC"), seen)
}

// Is makes a StaleError match ErrStale.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// AnyVersion as a save's base accepts whatever the latest version is.
const AnyVersion = -1

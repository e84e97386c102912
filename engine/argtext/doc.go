// Package argtext renders a tool call's arguments for a person asked to
// approve it (Render): pretty JSON, where-and-what keys first, long values
// cut with their size, secrets masked. Slack's approval message and the
// terminal's prompt both show it.
package argtext

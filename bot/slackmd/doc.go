// Package slackmd renders markdown for Slack: it splits a long answer into
// pieces that each fit one markdown block, at paragraph, list or code-fence
// boundaries (re-opening a fence it has to cut), and makes the short
// plain-text fallback Slack shows in notifications.
package slackmd

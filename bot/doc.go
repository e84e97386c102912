// Package bot is agentbot's Slack adapter over Socket Mode: events, /agent, buttons, rendering and uploads.
package bot

// Package view builds what the bot shows in Slack from our own data, as
// pure functions to slack-go blocks and mrkdwn text: the greeting and its
// menu buttons, the agent picker, the Home tab, the DM agent pane's
// prompts, session titles, the /agent listings and project texts, agent
// labels, the approval request of a tool call (its buttons, masked
// arguments and decision line), and Slack's limits on blocks (Messages
// splits a long text over messages within them). Package bot posts what
// it builds.
package view

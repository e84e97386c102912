package view

import (
	"fmt"
	"strings"

	"agentbot/bot/slackmd"
	"agentbot/engine/transcript"
)

// SavedName shows a file name in mrkdwn: escaped (R&D <draft>.md), and in
// bold unless the name holds a formatting character that would break it.
func SavedName(name string) string {
	if strings.ContainsAny(name, "*_~`") {
		return slackmd.EscapeText(name)
	}
	return "*" + slackmd.EscapeText(name) + "*"
}

// DocumentCount says how many documents: "1 document", "3 documents".
func DocumentCount(n int) string {
	if n == 1 {
		return "1 document"
	}
	return fmt.Sprintf("%d documents", n)
}

// DocAuthor names a version's author for Slack: the person mentioned,
// with the agent.
func DocAuthor(d transcript.DocVersion) string {
	switch {
	case d.Person != "" && d.Agent != "":
		return "<@" + d.Person + "> with " + d.Agent
	case d.Person != "":
		return "<@" + d.Person + ">"
	case d.Agent != "":
		return d.Agent
	}
	return "someone"
}

package view

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/keys"
	"agentbot/bot/slackmd"
	"agentbot/engine"
	"agentbot/engine/transcript"
)

const (
	// ActionApprove and ActionDeny are the action ids (before ":") of the
	// approval buttons; their value is an ApprovalValue.
	ActionApprove = "approve"
	ActionDeny    = "deny"
	// maxArgsShown bounds the arguments shown in an approval message.
	maxArgsShown = 2500
	// maxButtonValue is Slack's limit on a button's value.
	maxButtonValue = 2000
)

// SupersededLine ends the message of a call left undecided when the user
// wrote a new message instead (the engine denies it).
const SupersededLine = "⛔ Not run: a new message came instead of a decision"

// ApprovalValue is what an approval button carries: the session key and
// the call id (or, for an id too long for a button, keys.CallDigest of it).
type ApprovalValue struct {
	Key  string `json:"k"`
	Call string `json:"c"`
}

// MaskArgs renders a call's arguments for its approval message:
// engine.DisplayArgs in about maxArgsShown bytes (the keys that say where
// first, long values cut, secrets masked), with no fence that could close
// the code block.
func MaskArgs(args string) string {
	return strings.ReplaceAll(engine.DisplayArgs(args, maxArgsShown), "```", "``\u200b`")
}

// buttonValue is the value of an approval button of a call in session key.
func buttonValue(key, callID string) string {
	v, _ := json.Marshal(ApprovalValue{Key: key, Call: callID})
	if len(v) > maxButtonValue {
		v, _ = json.Marshal(ApprovalValue{Key: key, Call: keys.CallDigest(callID)})
	}
	return string(v)
}

// DecisionLine is how a decided call's message ends.
func DecisionLine(a *transcript.Approval) string {
	if a.Kind == transcript.GateConnect {
		return connectDecisionLine(a)
	}
	switch a.Decision {
	case transcript.DecisionApproved:
		return "✅ Approved by <@" + a.By + ">"
	case transcript.DecisionDenied:
		return "⛔ Denied by <@" + a.By + ">"
	case transcript.DecisionExpired:
		return "⌛ No answer in time; denied"
	}
	return ""
}

// toolLabel names a call's tool for people: "tool on server".
func toolLabel(a *transcript.Approval) string {
	if a.Server != "" {
		return fmt.Sprintf("`%s` on the `%s` server", serverTool(a.Server, a.Tool), a.Server)
	}
	return "`" + a.Tool + "`"
}

// serverTool is the name of an MCP server's tool without the
// "server__" prefix the model calls it by.
func serverTool(server, tool string) string {
	return strings.TrimPrefix(tool, server+"__")
}

// ApprovalMessage is the message of call a of session key: the tool, its
// arguments (secrets masked) and who may approve (approvers), with the
// buttons while line is "", or line saying how it was decided.
func ApprovalMessage(key string, a *transcript.Approval, approvers, line string) []slack.MsgOption {
	md := fmt.Sprintf("🔐 The agent wants to run %s with:\n```\n%s\n```", toolLabel(a), MaskArgs(a.Args))
	blocks := []slack.Block{slackmd.Block(md)}
	fallback := "Approval needed: " + slackmd.Shorten(a.Tool, 100)
	if line != "" {
		fallback = line
		blocks = append(blocks, slack.NewContextBlock("decision", slack.NewTextBlockObject(slack.MarkdownType, line, false, false)))
	} else {
		value := buttonValue(key, a.CallID)
		id := keys.CallDigest(key + "\n" + a.CallID)[7:19]
		approve := slack.NewButtonBlockElement(ActionApprove+":"+id, value, slack.NewTextBlockObject(slack.PlainTextType, "Approve", true, false))
		approve.Style = slack.StylePrimary
		deny := slack.NewButtonBlockElement(ActionDeny+":"+id, value, slack.NewTextBlockObject(slack.PlainTextType, "Deny", true, false))
		deny.Style = slack.StyleDanger
		blocks = append(blocks,
			slack.NewActionBlock("approval", approve, deny),
			slack.NewContextBlock("approvers", slack.NewTextBlockObject(slack.MarkdownType,
				"⏸ Waiting for approval. Who may approve: "+approvers+".", false, false)))
	}
	return []slack.MsgOption{slack.MsgOptionText(fallback, false), slack.MsgOptionBlocks(blocks...)}
}

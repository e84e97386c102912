package view

import (
	"fmt"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine/catalog"
)

// MaxSuggestedPrompts is how many prompts Slack shows in the agent pane.
const MaxSuggestedPrompts = 4

// AgentPrompts are the DM agent pane's greeting and suggested prompts
// for the DM's default agent: its menu, without help and exit.
func AgentPrompts(a *catalog.Agent) (string, []slack.AssistantThreadsPrompt) {
	var prompts []slack.AssistantThreadsPrompt
	for _, it := range a.Menu {
		if len(prompts) == MaxSuggestedPrompts {
			break
		}
		if isHelpItem(it.Trigger) {
			continue
		}
		label := it.Description
		if label == "" {
			label = Command(it)
		}
		prompts = append(prompts, slack.AssistantThreadsPrompt{Title: slackmd.Shorten(label, 60), Message: Command(it)})
	}
	return fmt.Sprintf("Hi! %s %s is here. Pick a suggestion below or just say what you need.", a.Icon, a.Name), prompts
}

// PickPrompts are the DM agent pane's greeting and suggested prompts
// when the DM has no default agent: the agents to pick from.
func PickPrompts(agents []*catalog.Agent) (string, []slack.AssistantThreadsPrompt) {
	var prompts []slack.AssistantThreadsPrompt
	for _, a := range agents {
		if len(prompts) == MaxSuggestedPrompts {
			break
		}
		label := "Talk to " + a.Name
		if a.Title != "" && a.Title != a.Name {
			label += " — " + a.Title
		}
		prompts = append(prompts, slack.AssistantThreadsPrompt{Title: slackmd.Shorten(label, 60), Message: "use " + a.ID})
	}
	return "Hi! Pick an agent below to start, or just say what you need.", prompts
}

// isHelpItem reports whether a menu trigger is the plain help or exit item,
// which are no useful suggestion.
func isHelpItem(trigger string) bool { return trigger == "help" || trigger == "exit" }

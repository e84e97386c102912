package bot

import (
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/workspace"
)

// An event is answered in the workspace its team_id and enterprise_id
// name, completed from the authorization it was delivered for.
func TestEventWorkspace(t *testing.T) {
	cb := func(auths ...slack.EventAuthorization) *slackevents.EventsAPICallbackEvent {
		return &slackevents.EventsAPICallbackEvent{Authorizations: auths}
	}
	for _, c := range []struct {
		name string
		ev   slackevents.EventsAPIEvent
		want workspace.ID
	}{
		{"team and enterprise given", slackevents.EventsAPIEvent{TeamID: "T1", EnterpriseID: "E1", Data: cb(slack.EventAuthorization{TeamID: "T9", EnterpriseID: "E9"})}, workspace.ID{Team: "T1", Enterprise: "E1"}},
		{"no authorizations", slackevents.EventsAPIEvent{TeamID: "T1", Data: cb()}, workspace.ID{Team: "T1"}},
		{"org-wide, no enterprise_id outside", slackevents.EventsAPIEvent{TeamID: "T1", Data: cb(slack.EventAuthorization{EnterpriseID: "E1", IsEnterpriseInstall: true})}, workspace.ID{Team: "T1", Enterprise: "E1"}},
		{"no team_id outside", slackevents.EventsAPIEvent{Data: cb(slack.EventAuthorization{TeamID: "T2"})}, workspace.ID{Team: "T2"}},
		{"no team_id, org-wide", slackevents.EventsAPIEvent{Data: cb(slack.EventAuthorization{TeamID: "T2", EnterpriseID: "E1", IsEnterpriseInstall: true})}, workspace.ID{Enterprise: "E1"}},
	} {
		if got := eventWorkspace(c.ev); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

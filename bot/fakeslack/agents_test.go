package fakeslack

import (
	"slices"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

func TestAgentSessionStatuses(t *testing.T) {
	fake := New(t)
	api := fake.Client()
	for _, st := range []string{slack.AgentSessionStatusProcessing, slack.AgentSessionStatusActive} {
		if _, err := api.SetAgentSessionStatus(slack.AgentSessionSetStatusParameters{Status: st, ChannelID: "C1",
			ThreadTS: "1.000001", Title: "Maren", InitiatorUserID: "U1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := api.SetAgentSessionStatus(slack.AgentSessionSetStatusParameters{Status: "busy", ChannelID: "C1", ThreadTS: "1.000001"}); slackErr(err) != "invalid_status" {
		t.Errorf("unknown status: %v", err)
	}
	got := fake.AgentSessionStatuses()
	if len(got) != 2 || got[0].Status != "processing" || got[1].Status != "active" || got[0].Channel != "C1" ||
		got[0].ThreadTS != "1.000001" || got[0].Title != "Maren" || got[0].InitiatorUserID != "U1" {
		t.Errorf("agent session statuses = %+v", got)
	}
}

// An agent session's title: the setStatus that creates the session sets
// it, later ones leave it; a rename before the session exists is
// session_not_found, after it renames.
func TestAgentSessionTitleCreatedBySetStatus(t *testing.T) {
	fake := New(t)
	api := fake.Client()
	rename := func(title string) error {
		_, err := api.RenameAgentSession(slack.AgentSessionRenameParameters{ChannelID: "C1", ThreadTS: "1.000001", Title: title})
		return err
	}
	if err := rename("Too early"); slackErr(err) != ErrSessionNotFound {
		t.Fatalf("rename before the session exists: %v", err)
	}
	if _, ok := fake.AgentSessionTitle("C1", "1.000001"); ok {
		t.Fatal("a refused rename created a session")
	}
	set := func(status, title string) {
		t.Helper()
		if _, err := api.SetAgentSessionStatus(slack.AgentSessionSetStatusParameters{Status: status, ChannelID: "C1", ThreadTS: "1.000001", Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	set(slack.AgentSessionStatusActive, "Maren")
	set(slack.AgentSessionStatusProcessing, "Ignored")
	if title, ok := fake.AgentSessionTitle("C1", "1.000001"); !ok || title != "Maren" {
		t.Fatalf("title after two setStatus = %q, %v; want the creating call's", title, ok)
	}
	if err := rename("Maren · brief"); err != nil {
		t.Fatal(err)
	}
	if title, _ := fake.AgentSessionTitle("C1", "1.000001"); title != "Maren · brief" {
		t.Fatalf("title after rename = %q", title)
	}
	got := fake.Titles()
	if len(got) != 2 || got[0].Method != "agents.sessions.setStatus" || got[0].Title != "Maren" ||
		got[1].Method != "agents.sessions.rename" || got[1].Title != "Maren · brief" {
		t.Fatalf("titles = %+v", got)
	}
}

func TestCloseStreamAndExpireAfterAppends(t *testing.T) {
	fake := New(t)
	api := fake.Client()
	start := func() string {
		_, ts, err := api.StartStream("D1", slack.MsgOptionTS("1.000001"))
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	appendText := func(ts, text string) string {
		_, _, err := api.AppendStream("D1", ts, slack.MsgOptionMarkdownText(text))
		return slackErr(err)
	}
	ts := start()
	if !fake.CloseStream("D1", ts) || fake.CloseStream("D1", ts) {
		t.Error("CloseStream: want true once, then false")
	}
	if e := appendText(ts, "x"); e != "message_not_in_streaming_state" {
		t.Errorf("append to a closed stream: %q", e)
	}

	// Two streams expire after two appends each; the third stays open.
	fake.ExpireStreamsAfterAppends(2, 2)
	for i := range 3 {
		ts := start()
		for n := range 2 {
			if e := appendText(ts, "a"); e != "" {
				t.Fatalf("stream %d append %d: %s", i, n, e)
			}
		}
		e := appendText(ts, "b")
		if want := map[bool]string{true: "message_not_in_streaming_state", false: ""}[i < 2]; e != want {
			t.Errorf("stream %d third append: %q, want %q", i, e, want)
		}
	}
	var expired []bool
	for _, st := range fake.Streams() {
		expired = append(expired, st.Expired)
	}
	if !slices.Equal(expired, []bool{true, true, true, false}) {
		t.Errorf("expired = %v", expired)
	}
}

func TestSendAgentSessionStopped(t *testing.T) {
	fake := New(t)
	events := startSocketMode(t, fake)
	api := fake.Client()
	_, ts, err := api.StartStream("D1", slack.MsgOptionTS("1.000001"), slack.MsgOptionMarkdownText("Thinking"))
	if err != nil {
		t.Fatal(err)
	}
	_, other, err := api.StartStream("D1", slack.MsgOptionTS("1.000009"))
	if err != nil {
		t.Fatal(err)
	}
	env := fake.SendAgentSessionStopped("D1", "1.000001", "U1")
	ev := nextOf(t, events, socketmode.EventTypeEventsAPI)
	api2, ok := ev.Data.(slackevents.EventsAPIEvent)
	if !ok {
		t.Fatalf("data = %#v", ev.Data)
	}
	stop, ok := api2.InnerEvent.Data.(*slackevents.AgentSessionStoppedEvent)
	if !ok || stop.Channel != "D1" || stop.ThreadTimestamp != "1.000001" || stop.User != "U1" ||
		!slices.Equal(stop.StreamingMessageTimestamps, []string{ts}) || api2.TeamID != fake.TeamID() {
		t.Fatalf("event = %#v", api2.InnerEvent.Data)
	}
	if _, err := fake.WaitAck(env, wait); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.AppendStream("D1", ts, slack.MsgOptionMarkdownText("late")); slackErr(err) != "message_not_in_streaming_state" {
		t.Errorf("append to a halted stream: %v", err)
	}
	ss := fake.Streams()
	if !ss[0].Stopped || !ss[0].Halted || ss[1].Stopped || ss[1].TS != other {
		t.Errorf("streams = %+v", ss)
	}
}

func TestBlockActionType(t *testing.T) {
	fake := New(t)
	events := startSocketMode(t, fake)
	fake.SendBlockAction(BlockAction{UserID: "U1", ChannelID: "C1", MessageTS: "1.000002", ThreadTS: "1.000001",
		ActionID: "feedback", Value: "positive", Type: "feedback_buttons"})
	cb, ok := nextOf(t, events, socketmode.EventTypeInteractive).Data.(slack.InteractionCallback)
	if !ok || len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("callback = %#v", cb)
	}
	if a := cb.ActionCallback.BlockActions[0]; a.Type != "feedback_buttons" || a.ActionID != "feedback" || a.Value != "positive" {
		t.Errorf("action = %+v", a)
	}
}

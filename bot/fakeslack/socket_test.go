package fakeslack

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

const wait = 5 * time.Second

// startSocketMode runs the real socketmode client against fake, acking every
// envelope at once, and returns the events it saw. It stops in t.Cleanup,
// before the fake closes.
func startSocketMode(t *testing.T, fake *Server) <-chan socketmode.Event {
	t.Helper()
	sm := socketmode.New(fake.Client())
	before := fake.Connected()
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		_ = sm.RunContext(ctx)
	}()
	out := make(chan socketmode.Event, 100)
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-sm.Events:
				if ev.Request != nil && ev.Request.EnvelopeID != "" {
					_ = sm.Ack(*ev.Request)
				}
				select {
				case out <- ev:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-runDone
		<-loopDone
	})
	if err := fake.WaitFor(func() bool { return fake.Connected() == before+1 }, wait); err != nil {
		t.Fatalf("socketmode did not connect: %v", err)
	}
	return out
}

// nextOf returns the next event of the given type.
func nextOf(t *testing.T, events <-chan socketmode.Event, typ socketmode.EventType) socketmode.Event {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case ev := <-events:
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event within %s", typ, wait)
		}
	}
}

func TestSocketModeHelloEventAndAck(t *testing.T) {
	fake := New(t)
	events := startSocketMode(t, fake)

	hello := nextOf(t, events, socketmode.EventTypeHello)
	if hello.Request.ConnectionInfo.AppID != fake.AppID() || hello.Request.NumConnections != 1 {
		t.Errorf("hello = %+v, want app %s and 1 connection", hello.Request, fake.AppID())
	}
	open := fake.CallsTo("apps.connections.open")
	if len(open) != 1 || open[0].Token != fake.AppToken() || open[0].Error != "" {
		t.Fatalf("apps.connections.open calls = %+v, want one with the app token", open)
	}

	ts := fake.NextTS()
	env := fake.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: "U1", Channel: "C1",
		Text: "<@" + fake.BotUserID() + "> hello", TimeStamp: ts})
	latency, err := fake.WaitAck(env, wait)
	if err != nil {
		t.Fatal(err)
	}
	if latency <= 0 || latency > wait {
		t.Errorf("ack latency = %s, want in (0, %s]", latency, wait)
	}

	ev := nextOf(t, events, socketmode.EventTypeEventsAPI)
	api, ok := ev.Data.(slackevents.EventsAPIEvent)
	if !ok {
		t.Fatalf("event data is %T", ev.Data)
	}
	mention, ok := api.InnerEvent.Data.(*slackevents.AppMentionEvent)
	if !ok || mention.Text != "<@"+fake.BotUserID()+"> hello" || mention.TimeStamp != ts || mention.Channel != "C1" {
		t.Fatalf("inner event = %#v", api.InnerEvent.Data)
	}
	if api.TeamID != fake.TeamID() || api.APIAppID != fake.AppID() {
		t.Errorf("outer event team/app = %s/%s", api.TeamID, api.APIAppID)
	}
	cb, _ := api.Data.(*slackevents.EventsAPICallbackEvent)
	if cb == nil || !strings.HasPrefix(cb.EventID, "Ev") || cb.EventTime == 0 {
		t.Errorf("callback event = %#v, want an event_id and event_time", api.Data)
	}

	acks := fake.Acks()
	if len(acks) != 1 || acks[0].EnvelopeID != env || !acks[0].Known || acks[0].Latency != latency {
		t.Errorf("acks = %+v", acks)
	}
	envs := fake.Envelopes()
	if len(envs) != 1 || envs[0].Sent.IsZero() || envs[0].Type != "events_api" {
		t.Errorf("envelopes = %+v", envs)
	}
	// The mention is now part of the thread the fake knows.
	if th := fake.ThreadMessages("C1", ts); len(th) != 1 || th[0].Kind != KindUser || th[0].User != "U1" {
		t.Errorf("thread = %+v", th)
	}
}

func TestRedeliverKeepsEventIDAndCountsRetries(t *testing.T) {
	fake := New(t)
	events := startSocketMode(t, fake)

	first := fake.SendEvent(json.RawMessage(`{"type":"message","channel":"C1","user":"U1","text":"hi","ts":"1.000001"}`))
	again, err := fake.Redeliver(first, "timeout")
	if err != nil {
		t.Fatal(err)
	}
	if again == first {
		t.Fatal("redelivery reused the envelope id")
	}
	var seen []*socketmode.Request
	for len(seen) < 2 {
		ev := nextOf(t, events, socketmode.EventTypeEventsAPI)
		seen = append(seen, ev.Request)
	}
	if seen[1].RetryAttempt != 1 || seen[1].RetryReason != "timeout" || seen[0].RetryAttempt != 0 {
		t.Errorf("retry fields = %d/%q then %d/%q", seen[0].RetryAttempt, seen[0].RetryReason,
			seen[1].RetryAttempt, seen[1].RetryReason)
	}
	envs := fake.Envelopes()
	if envs[0].EventID == "" || envs[0].EventID != envs[1].EventID {
		t.Errorf("event ids %q and %q, want the same", envs[0].EventID, envs[1].EventID)
	}
	if _, err := fake.Redeliver("no-such-envelope", "timeout"); err == nil {
		t.Error("Redeliver of an unknown envelope succeeded")
	}
}

func TestSlashCommandAndBlockAction(t *testing.T) {
	fake := New(t)
	events := startSocketMode(t, fake)
	api := fake.Client()

	env := fake.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "list", UserID: "U1", ChannelID: "C1"})
	ev := nextOf(t, events, socketmode.EventTypeSlashCommand)
	cmd, ok := ev.Data.(slack.SlashCommand)
	if !ok || cmd.Command != "/agent" || cmd.Text != "list" || cmd.UserID != "U1" || cmd.ChannelID != "C1" ||
		cmd.TeamID != fake.TeamID() || cmd.TriggerID == "" || !strings.HasPrefix(cmd.ResponseURL, fake.URL()) {
		t.Fatalf("slash command = %+v", ev.Data)
	}
	if _, err := fake.WaitAck(env, wait); err != nil {
		t.Fatal(err)
	}
	// The response_url answers and is recorded as a message.
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("agents: pm", false),
		slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral)); err != nil {
		t.Fatalf("post to response_url: %v", err)
	}
	msgs := fake.Messages()
	if len(msgs) != 1 || msgs[0].Kind != KindResponseURL || msgs[0].Text != "agents: pm" ||
		msgs[0].Channel != "C1" || msgs[0].User != "U1" {
		t.Errorf("messages = %+v", msgs)
	}

	_, parent, err := api.PostMessage("C1", slack.MsgOptionText("pick one", false), slack.MsgOptionTS("1.000001"))
	if err != nil {
		t.Fatal(err)
	}
	fake.SendBlockAction(BlockAction{UserID: "U2", ChannelID: "C1", MessageTS: parent, ThreadTS: "1.000001",
		ActionID: "menu", BlockID: "agent_menu", Value: "*brief"})
	ev = nextOf(t, events, socketmode.EventTypeInteractive)
	cb, ok := ev.Data.(slack.InteractionCallback)
	if !ok || cb.Type != slack.InteractionTypeBlockActions {
		t.Fatalf("interactive data = %#v", ev.Data)
	}
	if cb.User.ID != "U2" || cb.Channel.ID != "C1" || cb.Container.MessageTs != parent ||
		cb.Container.ThreadTs != "1.000001" || cb.Message.Text != "pick one" {
		t.Errorf("callback = user %s channel %s container %+v message %q", cb.User.ID, cb.Channel.ID,
			cb.Container, cb.Message.Text)
	}
	if acts := cb.ActionCallback.BlockActions; len(acts) != 1 || acts[0].ActionID != "menu" ||
		acts[0].BlockID != "agent_menu" || acts[0].Value != "*brief" {
		t.Errorf("block actions = %+v", acts)
	}
}

func TestDropConnectionsReconnectsAndDeliversQueued(t *testing.T) {
	fake := New(t)
	events := startSocketMode(t, fake)
	nextOf(t, events, socketmode.EventTypeHello)

	// The first reconnect attempt is rate limited, so the client stays away
	// for a second: long enough to see the fake with no connection.
	fake.RateLimitNext("apps.connections.open", 1, time.Second)
	fake.DropConnections()
	if n := fake.Connected(); n != 0 {
		t.Fatalf("Connected() after drop = %d", n)
	}
	// Sent while nobody is connected: held until the client is back.
	env := fake.SendEvent(map[string]any{"type": "app_mention", "channel": "C1", "user": "U1", "text": "x", "ts": "2.000001"})
	if fake.Pending() != 1 {
		t.Errorf("pending = %d while disconnected, want 1", fake.Pending())
	}
	if err := fake.WaitFor(func() bool { return fake.Connected() == 1 }, wait); err != nil {
		t.Fatalf("no reconnect: %v", err)
	}
	if got := fake.TotalConnections(); got != 2 {
		t.Errorf("TotalConnections = %d, want 2", got)
	}
	if _, err := fake.WaitAck(env, wait); err != nil {
		t.Fatal(err)
	}
	if fake.Pending() != 0 {
		t.Errorf("pending = %d after reconnect", fake.Pending())
	}
	if n := len(fake.CallsTo("apps.connections.open")); n != 3 {
		t.Errorf("apps.connections.open calls = %d, want 3 (connect, rate limited, reconnect)", n)
	}
}

func TestDisconnectMessageMakesClientReconnect(t *testing.T) {
	fake := New(t)
	startSocketMode(t, fake)
	fake.Disconnect("refresh_requested")
	err := fake.WaitFor(func() bool { return fake.TotalConnections() == 2 && fake.Connected() == 1 }, wait)
	if err != nil {
		t.Fatalf("total %d, live %d: %v", fake.TotalConnections(), fake.Connected(), err)
	}
}

func TestRateLimitedConnectionsOpenIsRetried(t *testing.T) {
	fake := New(t)
	fake.RateLimitNext("apps.connections.open", 1, time.Second)
	startSocketMode(t, fake)
	calls := fake.CallsTo("apps.connections.open")
	if len(calls) != 2 || calls[0].Status != 429 || calls[1].Error != "" {
		t.Fatalf("calls = %+v", calls)
	}
	if gap := calls[1].Time.Sub(calls[0].Time); gap < time.Second {
		t.Errorf("client retried after %s, before Retry-After", gap)
	}
}

func TestWaitAckErrors(t *testing.T) {
	fake := New(t)
	if _, err := fake.WaitAck("nope", time.Millisecond); err == nil {
		t.Error("WaitAck of an unknown envelope succeeded")
	}
	env := fake.SendEvent(map[string]any{"type": "app_mention"}) // nobody connected: never acked
	_, err := fake.WaitAck(env, 20*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
	if fake.Pending() != 1 {
		t.Errorf("pending = %d, want 1", fake.Pending())
	}
}

// errRecorder captures Errorf calls so bad input to the fake can be checked.
type errRecorder struct {
	testing.TB
	errs []string
}

func (r *errRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, format)
}

func TestSendEventRejectsNonObjects(t *testing.T) {
	rec := &errRecorder{TB: t}
	fake := New(rec)
	for _, bad := range []any{"not json", json.RawMessage(`[1,2]`), 42, make(chan int)} {
		rec.errs = nil
		if id := fake.SendEvent(bad); id != "" {
			t.Errorf("SendEvent(%v) = %q, want \"\"", bad, id)
		}
		if len(rec.errs) != 1 {
			t.Errorf("SendEvent(%v) reported %d errors, want 1", bad, len(rec.errs))
		}
	}
	if n := len(fake.Envelopes()); n != 0 {
		t.Errorf("%d envelopes queued for bad input", n)
	}
}

func TestSendRawIsDeliveredVerbatim(t *testing.T) {
	fake := New(t)
	events := startSocketMode(t, fake)
	fake.SendRaw([]byte(`{"type":"mystery"}`))
	ev := nextOf(t, events, socketmode.EventTypeErrorBadMessage)
	bad, ok := ev.Data.(*socketmode.ErrorBadMessage)
	if !ok || string(bad.Message) != `{"type":"mystery"}` {
		t.Errorf("bad message event = %#v", ev.Data)
	}
}

func TestCloseIsIdempotentAndStopsServing(t *testing.T) {
	fake := New(nil)
	api := fake.Client()
	if _, err := api.AuthTest(); err != nil {
		t.Fatal(err)
	}
	fake.Close()
	fake.Close()
	if _, err := api.AuthTest(); err == nil {
		t.Error("auth.test succeeded after Close")
	}
}

// A malformed envelope of any type reaches the socketmode client as a bad
// message that still carries its envelope_id and type, so it can be acked.
func TestSendMalformedIsABadMessageWithItsEnvelopeID(t *testing.T) {
	fake := New(t)
	events := startSocketMode(t, fake)
	for _, typ := range []string{"events_api", "slash_commands", "interactive", "mystery"} {
		id := fake.SendMalformed(typ)
		ev := nextOf(t, events, socketmode.EventTypeErrorBadMessage)
		bad, ok := ev.Data.(*socketmode.ErrorBadMessage)
		if !ok {
			t.Fatalf("%s: bad message event = %#v", typ, ev.Data)
		}
		var head struct {
			EnvelopeID string `json:"envelope_id"`
			Type       string `json:"type"`
		}
		if err := json.Unmarshal(bad.Message, &head); err != nil || head.EnvelopeID != id || head.Type != typ {
			t.Errorf("%s: raw envelope %s (%v), want envelope_id %s", typ, bad.Message, err, id)
		}
	}
}

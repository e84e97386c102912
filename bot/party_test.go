package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/storage"
)

// A round of three personas.
const partyRound = "_Chairs scrape; Winston is already at the whiteboard._\n" +
	"📊 **Mary:** The interviews say people want exports, not dashboards.\n" +
	"🏗️ **Winston:** Exports are a batch job. Boring tech, ship it Friday.\n" +
	"📋 **John:** Why Friday? Who asked for it?\n"

// "@agentbot party about X" starts party mode in one
// model call, and a round of three personas gives three messages, each
// under its persona's name and icon, with the staging line in a context
// block under the app's name; the feedback buttons are under the last.
// Streamed or posted alike.
func TestPartyRoundInSlack(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		name := map[bool]string{true: "streamed", false: "posted"}[streaming]
		t.Run(name, func(t *testing.T) {
			root := fixtures.Copy(t, fixtures.V612)
			r := newRig(t, rigOpts{bmad: []string{root}, mutate: func(c *bot.Config) { c.NoStreaming = !streaming }})
			storage.SetChannelDefault(context.Background(), r.st, r.slack.TeamID(), channel, "pm")
			r.model.Enqueue(fakemodel.Reply{Text: partyRound})
			thread, _ := r.mention("party about exports", "")
			want := map[string]string{
				"📊 Mary, Business Analyst":     "The interviews say people want exports",
				"🏗️ Winston, System Architect": "Boring tech, ship it Friday.",
				"📋 John, Product Manager":      "Why Friday? Who asked for it?",
			}
			defer func() {
				if t.Failed() {
					for _, m := range r.botMessages(thread) {
						t.Logf("%s %+v %q %s", m.Kind, m.As, text(m), m.Blocks)
					}
				}
			}()
			r.waitFor("three persona messages", func() bool {
				n := 0
				for _, m := range r.botMessages(thread) {
					if w, ok := want[m.As.Username]; ok && strings.Contains(text(m), w) && strings.Contains(string(m.Blocks), "speaker") {
						n++
					}
				}
				return n == 3
			})
			if r.model.Calls() != 1 {
				t.Fatalf("%d model calls", r.model.Calls())
			}
			var order []string
			staged := false
			for _, m := range r.botMessages(thread) {
				if _, ok := want[m.As.Username]; ok && strings.Contains(string(m.Blocks), `"block_id":"speaker"`) {
					order = append(order, m.As.Username)
					if strings.Contains(text(m), "**Mary:**") || strings.Contains(text(m), "Winston:") {
						t.Errorf("a turn's header stays in its message: %q", text(m))
					}
				}
				if strings.Contains(string(m.Blocks), `"block_id":"staging"`) {
					staged = true
					if m.As.Username != "" || !strings.Contains(string(m.Blocks), "Chairs scrape") {
						t.Errorf("staging message: %+v %s", m.As, m.Blocks)
					}
				}
			}
			if strings.Join(order, "|") != "📊 Mary, Business Analyst|🏗️ Winston, System Architect|📋 John, Product Manager" {
				t.Fatalf("persona messages in order %v", order)
			}
			if !staged {
				t.Fatal("no staging context block")
			}
			// A reply in the thread goes to the room: the next round splits too.
			r.model.Enqueue(fakemodel.Reply{Text: "📊 **Mary:** CSV first, then we talk.\n🏗️ **Winston:** Fine by me.\n"})
			r.reply("what about CSV?", thread)
			r.waitFor("the second round", func() bool {
				for _, m := range r.botMessages(thread) {
					if m.As.Username == "🏗️ Winston, System Architect" && strings.Contains(text(m), "Fine by me.") && strings.Contains(string(m.Blocks), `"block_id":"speaker"`) {
						return true
					}
				}
				return false
			})
			last := r.model.Requests()[1].Messages
			if !strings.Contains(last[len(last)-1].Content, "what about CSV?") {
				t.Errorf("the reply did not reach the model: %q", last[len(last)-1].Content)
			}
			msgs := r.botMessages(thread)
			for _, m := range msgs[:len(msgs)-2] {
				hasFeedback := strings.Contains(string(m.Blocks), `"block_id":"feedback"`)
				last := m.As.Username == "📋 John, Product Manager" && strings.Contains(text(m), "Why Friday")
				if hasFeedback != last {
					t.Errorf("feedback buttons on %q: %v", m.As.Username, hasFeedback)
				}
			}
		})
	}
}

// partyOf returns the party_roster a request's load_skill result carries,
// or nil.
func partyOf(t *testing.T, req fakemodel.Request) map[string]any {
	for _, r := range toolResults(t, req) {
		if p, ok := r["party_roster"].(map[string]any); ok {
			return p
		}
	}
	return nil
}

// The party's memory log is a project document: a second party in the
// same channel starts with it. The wrap-up's keepsake is uploaded to the
// thread.
func TestPartyMemoryAndKeepsake(t *testing.T) {
	r := projectRig(t)
	storage.SetChannelDefault(context.Background(), r.st, r.slack.TeamID(), channel, "pm")
	r.model.Enqueue(fakemodel.Reply{Text: "📊 **Mary:** Exports!\n🏗️ **Winston:** Batch job.\n"})
	thread1, _ := r.mention("party about exports", "")
	r.waitCalls(1)
	roster := partyOf(t, r.model.Requests()[0])
	ws, _ := roster["memlog_workspace"].(string)
	keepsake, _ := roster["keepsake_path"].(string)
	if ws == "" || roster["memlog_exists"] == true || !strings.HasSuffix(keepsake, "-installed-keepsake.html") {
		t.Fatalf("first party's roster: %v", roster)
	}
	r.waitFor("the first round", func() bool { return strings.Contains(threadText(r, thread1), "Batch job.") })

	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("memlog", map[string]string{"command": "init", "workspace": ws})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("memlog", map[string]string{"command": "append", "workspace": ws, "type": "dynamic", "text": "Mary and Winston fell out over exports"})}},
		saveCall(keepsake, "<!doctype html><title>Party</title><h1>📊 Mary vs 🏗️ Winston</h1>"),
		fakemodel.Reply{Text: "📊 **Mary:** Until next time.\n"},
	)
	r.reply("we're done, thanks", thread1)
	name := keepsake[strings.LastIndex(keepsake, "/")+1:]
	r.waitUpload(thread1, name)

	r.model.Enqueue(fakemodel.Reply{Text: "🏗️ **Winston:** Mary. Again."})
	r.mention("party", "")
	r.waitCalls(6)
	roster = partyOf(t, r.model.Requests()[5])
	if roster["memlog_exists"] != true || !strings.Contains(roster["memory_log"].(string), "Mary and Winston fell out over exports") {
		t.Fatalf("second party's roster: %v", roster)
	}
}

// threadText is the text of the bot's messages in a thread.
func threadText(r *rig, thread string) string {
	var b strings.Builder
	for _, m := range r.botMessages(thread) {
		b.WriteString(text(m) + "\n")
	}
	return b.String()
}

// Anyone in the thread can talk to the party: a person joining mid-party
// reaches the model by name.
func TestPartyPersonJoinsNamed(t *testing.T) {
	r := projectRig(t)
	storage.SetChannelDefault(context.Background(), r.st, r.slack.TeamID(), channel, "pm")
	anna, bruno := slack.User{ID: "U0ANNA", Name: "anna.k"}, slack.User{ID: "U0BRUNO", Name: "bruno.m"}
	anna.Profile.DisplayName, bruno.Profile.DisplayName = "Anna", "Bruno"
	r.slack.AddUser(anna)
	r.slack.AddUser(bruno)
	say := func(who, text, thread string) string {
		ts := r.slack.NextTS()
		r.slack.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: who, Channel: channel,
			Text: "<@" + r.slack.BotUserID() + "> " + text, TimeStamp: ts, ThreadTimeStamp: thread})
		return ts
	}
	r.model.Enqueue(fakemodel.Reply{Text: "📊 **Mary:** Anna, exports?\n"}, fakemodel.Reply{Text: "🏗️ **Winston:** Bruno has a point.\n"})
	thread := say(anna.ID, "party with Winston and Mary about exports", "")
	r.waitCalls(1)
	r.waitFor("the first round", func() bool { return strings.Contains(threadText(r, thread), "Anna, exports?") })
	say(bruno.ID, "dashboards matter more", thread)
	r.waitCalls(2)
	first, second := r.model.Requests()[0].Messages, r.model.Requests()[1].Messages
	if got := first[len(first)-1].Content; !strings.HasPrefix(got, "[Anna] party with Winston and Mary") {
		t.Errorf("Anna's message reads %q", got)
	}
	if got := second[len(second)-1].Content; got != "[Bruno] dashboards matter more" {
		t.Fatalf("Bruno's message reads %q", got)
	}
}

// /agent party lists the saved rooms of the channel's agent's project, a
// team override's room included; without a default agent it says what to
// do.
func TestSlashPartyListsRooms(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	writeFile(t, root+"/_bmad/custom/bmad-party-mode.toml", "[[workflow.party_groups]]\nid = \"writers-room\"\nname = \"The Writers' Room\"\nmembers = [\"analyst\", \"pm\"]\n")
	r := newRig(t, rigOpts{bmad: []string{root}})
	got := r.slash(user, channel, "party")
	has(t, got, "/agent use", "/agent party without a default agent")
	r.slash(user, channel, "use pm")
	got = r.slash(user, channel, "party")
	for _, want := range []string{"`code-review-crew` — Code Review Crew (5 members)", "`anti-consensus-club`", "`writers-room` — The Writers' Room (2 members)", "session mode", "@agentbot party with"} {
		has(t, got, want, "/agent party")
	}
}

// A stop mid-party keeps what was said, says once who stopped it, and
// opens no more persona messages.
func TestPartyStopped(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	r := newRig(t, rigOpts{bmad: []string{root}})
	storage.SetChannelDefault(context.Background(), r.st, r.slack.TeamID(), channel, "pm")
	r.model.Enqueue(fakemodel.Reply{Text: partyRound, Chunks: 40, ChunkDelay: 150 * time.Millisecond})
	thread, _ := r.mention("party about exports", "")
	r.waitFor("Mary's turn", func() bool { return strings.Contains(threadText(r, thread), "interviews") })
	r.mention("stop", thread)
	r.waitFor("the stop note", func() bool { return strings.Contains(threadText(r, thread), "Stopped by") })
	time.Sleep(2 * time.Second) // the rest of the answer would have streamed by now
	out := threadText(r, thread)
	if n := strings.Count(out, "Stopped by"); n != 1 {
		t.Fatalf("%d stop notes:\n%s", n, out)
	}
	if strings.Contains(out, "Why Friday?") {
		t.Fatalf("the answer went on after the stop:\n%s", out)
	}
}

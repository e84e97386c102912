package bot_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
)

// toOldKeys rewrites the stored thread state of thread's session in the
// form sessions were stored in before it was one value: one Meta key per
// field, approvals as JSON inside a string.
func (r *rig) toOldKeys(thread string) {
	ctx := context.Background()
	r.t.Helper()
	s := r.session(thread)
	var st struct {
		Owner     string            `json:"owner"`
		Seq       uint64            `json:"seq"`
		Posted    uint64            `json:"posted"`
		Approvals map[string]string `json:"approvals"`
	}
	if err := json.Unmarshal([]byte(s.Meta["bot.thread"]), &st); err != nil || st.Owner == "" || len(st.Approvals) == 0 {
		r.t.Fatalf("stored thread state %q: %+v, %v", s.Meta["bot.thread"], st, err)
	}
	approvals, _ := json.Marshal(st.Approvals)
	delete(s.Meta, "bot.thread")
	s.Meta["bot.owner"] = st.Owner
	s.Meta["bot.seq"] = strconv.FormatUint(st.Seq, 10)
	s.Meta["bot.posted"] = strconv.FormatUint(st.Posted, 10)
	s.Meta["bot.approvals"] = string(approvals)
	if err := r.st.SaveSession(ctx, s); err != nil {
		r.t.Fatal(err)
	}
}

// A session stored with the old Meta keys keeps working: the approval
// click of someone else is refused naming the owner (read on the ack
// path), a new message closes the waiting call's message (found through
// the old approvals key), and the state is then stored as one value.
func TestSessionStoredWithOldKeys(t *testing.T) {
	r, _ := approvalRig(t, nil)
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{writeNote("call_old1")}})
	thread, _ := r.mention("write a note", "")
	m := r.waitApprovals(thread, 1)[0]
	r.waitFor("the turn to pause", func() bool { return len(r.session(thread).Pending) == 1 })
	r.restart()
	r.toOldKeys(thread)

	r.click(other, m, "approve")
	r.waitFor("the refusal", func() bool { return len(r.ephemerals(other)) == 1 })
	has(t, r.ephemerals(other)[0].Text, "Only <@"+user+">", "refusal from the old owner key")

	r.model.Enqueue(fakemodel.Reply{Text: "Something else, then."})
	r.reply("never mind, do something else", thread)
	r.waitText(thread, "Something else, then.")
	r.waitFor("the waiting call's message to be closed", func() bool {
		cur, _ := r.slack.Message(channel, m.TS)
		return strings.Contains(shown(cur), "Not run: a new message came instead of a decision") && len(buttons(t, cur)) == 0
	})
	s := r.session(thread)
	for k := range s.Meta {
		if strings.HasPrefix(k, "bot.") && k != "bot.thread" {
			t.Errorf("old key %s still stored after a turn", k)
		}
	}
	if !strings.Contains(s.Meta["bot.thread"], `"owner":"`+user+`"`) {
		t.Fatalf("stored thread state = %q, want the owner kept", s.Meta["bot.thread"])
	}
}

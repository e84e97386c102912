package fakeslack

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// blocksJSON marshals blocks as slack-go sends them.
func blocksJSON(t testing.TB, blocks ...slack.Block) string {
	t.Helper()
	b, err := json.Marshal(blocks)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

func button(text, actionID, value string) *slack.ButtonBlockElement {
	return slack.NewButtonBlockElement(actionID, value, plain(text))
}

func section(text string) slack.Block { return slack.NewSectionBlock(mrkdwn(text), nil, nil) }

func repeatBlocks(n int, b slack.Block) []slack.Block {
	out := make([]slack.Block, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func buttons(n int) []slack.BlockElement {
	out := make([]slack.BlockElement, n)
	for i := range out {
		out[i] = button("b", "a"+strings.Repeat("x", i%3)+string(rune('a'+i%26)), "v")
	}
	return out
}

// Each rule of the table refuses its violation with Slack's error and the
// JSON pointer of what broke it, and accepts the boundary.
func TestRulesTableBlocks(t *testing.T) {
	x := strings.Repeat
	for _, tc := range []struct {
		name     string
		ok, bad  []slack.Block
		err, ptr string
	}{
		{"blocks per message", repeatBlocks(MaxMessageBlocks, slack.NewDividerBlock()),
			repeatBlocks(MaxMessageBlocks+1, slack.NewDividerBlock()), "invalid_blocks", "/blocks]"},
		{"section text", []slack.Block{section(x("é", MaxSectionText))},
			[]slack.Block{section(x("é", MaxSectionText+1))}, "invalid_blocks", "/blocks/0/text/text]"},
		{"section text not empty", []slack.Block{section("a")},
			[]slack.Block{section("")}, "invalid_blocks", "/blocks/0/text/text]"},
		{"section field", []slack.Block{slack.NewSectionBlock(nil, []*slack.TextBlockObject{mrkdwn(x("a", MaxSectionField))}, nil)},
			[]slack.Block{slack.NewSectionBlock(nil, []*slack.TextBlockObject{mrkdwn(x("a", MaxSectionField+1))}, nil)},
			"invalid_blocks", "/blocks/0/fields/0/text]"},
		{"header text", []slack.Block{slack.NewHeaderBlock(plain(x("h", MaxHeaderText)))},
			[]slack.Block{slack.NewHeaderBlock(plain(x("h", MaxHeaderText+1)))}, "invalid_blocks", "/blocks/0/text/text]"},
		{"header is plain text", []slack.Block{slack.NewHeaderBlock(plain("h"))},
			[]slack.Block{slack.NewHeaderBlock(mrkdwn("h"))}, "invalid_blocks", "/blocks/0/text/type]"},
		{"markdown block", []slack.Block{slack.NewMarkdownBlock("", x("m", MaxMarkdownTotal))},
			[]slack.Block{slack.NewMarkdownBlock("", x("m", MaxMarkdownTotal+1))}, "invalid_blocks", "/blocks/0/text]"},
		{"markdown blocks cumulative", []slack.Block{slack.NewMarkdownBlock("", x("m", 6000)), slack.NewMarkdownBlock("", x("m", 6000))},
			[]slack.Block{slack.NewMarkdownBlock("", x("m", 6000)), slack.NewMarkdownBlock("", x("m", 6001))}, "invalid_blocks", "/blocks/1/text]"},
		{"total block text", []slack.Block{slack.NewMarkdownBlock("", x("m", 10000)), section(x("s", MaxBlocksText-10000))},
			[]slack.Block{slack.NewMarkdownBlock("", x("m", 10000)), section(x("s", MaxBlocksText-10000+1))}, "msg_blocks_too_long", ""},
		{"button text", []slack.Block{slack.NewActionBlock("a", button(x("b", MaxButtonText), "a", "v"))},
			[]slack.Block{slack.NewActionBlock("a", button(x("b", MaxButtonText+1), "a", "v"))}, "invalid_blocks", "/blocks/0/elements/0/text/text]"},
		{"button value", []slack.Block{slack.NewActionBlock("a", button("b", "a", x("v", MaxButtonValue)))},
			[]slack.Block{slack.NewActionBlock("a", button("b", "a", x("v", MaxButtonValue+1)))}, "invalid_blocks", "/blocks/0/elements/0/value]"},
		{"action_id", []slack.Block{slack.NewActionBlock("a", button("b", x("a", MaxActionID), "v"))},
			[]slack.Block{slack.NewActionBlock("a", button("b", x("a", MaxActionID+1), "v"))}, "invalid_blocks", "/blocks/0/elements/0/action_id]"},
		{"accessory button", []slack.Block{slack.NewSectionBlock(mrkdwn("s"), nil, slack.NewAccessory(button(x("b", MaxButtonText), "a", "v")))},
			[]slack.Block{slack.NewSectionBlock(mrkdwn("s"), nil, slack.NewAccessory(button(x("b", MaxButtonText+1), "a", "v")))},
			"invalid_blocks", "/blocks/0/accessory/text/text]"},
		{"elements per actions block", []slack.Block{slack.NewActionBlock("a", buttons(MaxActionElements)...)},
			[]slack.Block{slack.NewActionBlock("a", buttons(MaxActionElements+1)...)}, "invalid_blocks", "/blocks/0/elements]"},
		{"context elements", []slack.Block{slack.NewContextBlock("c", contextTexts(MaxContextElements)...)},
			[]slack.Block{slack.NewContextBlock("c", contextTexts(MaxContextElements+1)...)}, "invalid_blocks", "/blocks/0/elements]"},
		{"block_id", []slack.Block{slack.NewActionBlock(x("i", MaxBlockID), button("b", "a", "v"))},
			[]slack.Block{slack.NewActionBlock(x("i", MaxBlockID+1), button("b", "a", "v"))}, "invalid_blocks", "/blocks/0/block_id]"},
		{"mrkdwn escaping", []slack.Block{section("`/agent use &lt;id&gt;` <@U123> <#C1|general> <https://x.y/?a=1&amp;b=2|link>")},
			[]slack.Block{section("`/agent use <id>`")}, "invalid_blocks", "/blocks/0/text/text]"},
		{"mrkdwn escaping in context", []slack.Block{slack.NewContextBlock("c", mrkdwn("R&amp;D"))},
			[]slack.Block{slack.NewContextBlock("c", mrkdwn("R&D"))}, "invalid_blocks", "/blocks/0/elements/0/text]"},
		{"plain text is not markup", []slack.Block{slack.NewHeaderBlock(plain("Map<String, List<Integer>> & more"))},
			nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v := CheckCall("chat.postMessage", MapArgs(map[string]string{"channel": "C1", "blocks": blocksJSON(t, tc.ok...)}), AgentApp); v != nil {
				t.Fatalf("boundary refused: %v", v)
			}
			if tc.bad == nil {
				return
			}
			v := CheckCall("chat.postMessage", MapArgs(map[string]string{"channel": "C1", "blocks": blocksJSON(t, tc.bad...)}), AgentApp)
			if v == nil || v.Error != tc.err {
				t.Fatalf("violation: got %v, want %s", v, tc.err)
			}
			if tc.ptr != "" && (len(v.Messages) == 0 || !strings.HasSuffix(v.Messages[0], "[json-pointer:"+tc.ptr) ||
				!strings.HasPrefix(v.Messages[0], "[ERROR] ")) {
				t.Errorf("messages %q: want Slack's shape ending in pointer %s", v.Messages, tc.ptr)
			}
			if v.Source == "" {
				t.Error("a rule without its source")
			}
		})
	}
}

func contextTexts(n int) []slack.MixedElement {
	out := make([]slack.MixedElement, n)
	for i := range out {
		out[i] = mrkdwn("c")
	}
	return out
}

func TestCheckEscaped(t *testing.T) {
	for _, s := range []string{
		"plain", "a &amp; b", "&lt;id&gt;", "<@U0FAKE1> hi", "<@W12|bob>", "<#C0CHAN1>", "<#C0CHAN1|general>",
		"<!here>", "<!channel>", "<!subteam^S123|team>", "<!date^1392734382^{date}|Feb 18>",
		"<https://example.com/a?b=1&amp;c=2|open>", "<mailto:a@b.c|mail>", "> a quote\n> more", "  > quoted",
	} {
		if bad, at, ok := CheckEscaped(s); !ok {
			t.Errorf("%q refused at %d (%q)", s, at, bad)
		}
	}
	for s, want := range map[string]string{
		"R&D": "&", "Map<String, List<Integer>>": "<", "a -> b": ">", "<id>": "<", "x < y": "<",
		"<https://a b>": "<", "<@lowercase>": "<", "&amp x": "&", "<unclosed": "<",
	} {
		if bad, _, ok := CheckEscaped(s); ok || bad != want {
			t.Errorf("%q: got %q ok=%v, want %q refused", s, bad, ok, want)
		}
	}
}

func TestRulesTableArgumentsAndViews(t *testing.T) {
	args := func(kv ...string) Args {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return MapArgs(m)
	}
	view := func(n int) string {
		b, _ := json.Marshal(slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: repeatBlocks(n, slack.NewDividerBlock())}})
		return string(b)
	}
	prompts := func(n int) string {
		ps := make([]Prompt, n)
		for i := range ps {
			ps[i] = Prompt{Title: "t", Message: "m"}
		}
		b, _ := json.Marshal(ps)
		return string(b)
	}
	for _, tc := range []struct {
		name, method string
		args         Args
		app          AppKind
		err          string // "-" for accepted; "" for silently ignored
	}{
		{"postMessage needs a channel", "chat.postMessage", args("text", "hi"), AgentApp, "channel_not_found"},
		{"postMessage needs content", "chat.postMessage", args("channel", "C1"), AgentApp, "no_text"},
		{"postMessage ok", "chat.postMessage", args("channel", "C1", "text", "hi"), AgentApp, "-"},
		{"text escaping", "chat.postMessage", args("channel", "C1", "text", "Map<String>"), AgentApp, "invalid_arguments"},
		{"text escaped", "chat.postMessage", args("channel", "C1", "text", "Map&lt;String&gt; <@U1>"), AgentApp, "-"},
		{"ephemeral needs a user", "chat.postEphemeral", args("channel", "C1", "text", "hi"), AgentApp, "user_not_in_channel"},
		{"update needs ts", "chat.update", args("channel", "C1", "text", "hi"), AgentApp, "message_not_found"},
		{"startStream in a channel needs its recipient", "chat.startStream", args("channel", "C1", "thread_ts", "1.2", "recipient_user_id", "U1"), AgentApp, "invalid_arguments"},
		{"startStream in a channel with its recipient", "chat.startStream", args("channel", "C1", "recipient_user_id", "U1", "recipient_team_id", "T1"), AgentApp, "-"},
		{"startStream in a DM", "chat.startStream", args("channel", "D1", "thread_ts", "1.2"), AgentApp, "-"},
		{"setStatus needs thread_ts", "assistant.threads.setStatus", args("channel_id", "D1", "status", "x"), AgentApp, "invalid_arguments"},
		{"setTitle needs a title", "assistant.threads.setTitle", args("channel_id", "D1", "thread_ts", "1.2"), AgentApp, "invalid_arguments"},
		{"rename needs a title", "agents.sessions.rename", args("channel_id", "C1", "thread_ts", "1.2"), AgentApp, "invalid_arguments"},
		{"four prompts", "assistant.threads.setSuggestedPrompts", args("channel_id", "D1", "prompts", prompts(4)), AgentApp, "-"},
		{"five prompts", "assistant.threads.setSuggestedPrompts", args("channel_id", "D1", "prompts", prompts(5)), AgentApp, "invalid_arguments"},
		{"a prompt without message", "assistant.threads.setSuggestedPrompts", args("channel_id", "D1", "prompts", `[{"title":"t"}]`), AgentApp, "invalid_arguments"},
		{"agent app with thread_ts", "assistant.threads.setSuggestedPrompts", args("channel_id", "D1", "thread_ts", "1.2", "prompts", prompts(1)), AgentApp, ""},
		{"assistant app with thread_ts", "assistant.threads.setSuggestedPrompts", args("channel_id", "D1", "thread_ts", "1.2", "prompts", prompts(1)), AssistantApp, "-"},
		{"100 blocks in a view", "views.publish", args("user_id", "U1", "view", view(MaxViewBlocks)), AgentApp, "-"},
		{"101 blocks in a view", "views.publish", args("user_id", "U1", "view", view(MaxViewBlocks+1)), AgentApp, "invalid_arguments"},
		{"view needs a user", "views.publish", args("view", view(1)), AgentApp, "invalid_arguments"},
		{"reactions need a name", "reactions.add", args("channel", "C1", "timestamp", "1.2"), AgentApp, "invalid_name"},
		{"unknown methods pass to the server", "no.such.method", args(), AgentApp, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := CheckCall(tc.method, tc.args, tc.app)
			switch {
			case tc.err == "-" && v != nil:
				t.Fatalf("refused: %v", v)
			case tc.err != "-" && v == nil:
				t.Fatalf("accepted, want %q", tc.err)
			case v != nil && v.Error != tc.err:
				t.Fatalf("got %v, want %q", v, tc.err)
			}
		})
	}
}

// Through the real client: a refused payload comes back as Slack's error,
// with the block path in response_metadata.messages, and the test owning the
// server would fail (the violation is recorded).
func TestRulesTableThroughSlackGo(t *testing.T) {
	fake := New(t)
	fake.AllowViolations()
	api := fake.Client()
	_, _, err := api.PostMessage("C1", slack.MsgOptionText("fb", false),
		slack.MsgOptionBlocks(slack.NewSectionBlock(mrkdwn("R&D <draft>.md"), nil, nil)))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "invalid_blocks" {
		t.Fatalf("err = %v, want invalid_blocks", err)
	}
	if len(se.ResponseMetadata.Messages) != 1 || !strings.Contains(se.ResponseMetadata.Messages[0], "[json-pointer:/blocks/0/text/text]") {
		t.Errorf("messages = %q", se.ResponseMetadata.Messages)
	}
	if len(fake.Messages()) != 0 {
		t.Error("a refused message was stored")
	}
	// Silently ignored: ok for the client, a violation for the test.
	err = api.SetAssistantThreadsSuggestedPrompts(slack.AssistantThreadsSetSuggestedPromptsParameters{
		ChannelID: "D1", ThreadTS: "1.000001", Prompts: []slack.AssistantThreadsPrompt{{Title: "t", Message: "m"}}})
	if err != nil {
		t.Fatalf("setSuggestedPrompts: %v (Slack answers ok)", err)
	}
	if got := fake.SuggestedPromptsSet(); len(got) != 0 {
		t.Errorf("prompts shown: %+v", got)
	}
	if v := fake.Violations(); len(v) != 2 || v[1].Error != "" || v[1].Method != "assistant.threads.setSuggestedPrompts" {
		t.Errorf("violations = %v", v)
	}
	err = api.SetAssistantThreadsSuggestedPrompts(slack.AssistantThreadsSetSuggestedPromptsParameters{
		ChannelID: "D1", Prompts: []slack.AssistantThreadsPrompt{{Title: "t", Message: "m"}}})
	if err != nil || len(fake.SuggestedPromptsSet()) != 1 {
		t.Errorf("prompts without thread_ts: err %v, shown %d", err, len(fake.SuggestedPromptsSet()))
	}
}

// A test whose bot sends a violating payload fails.
func TestViolationsFailTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	fake := New(nil)
	fake.tb = rec
	defer fake.Close()
	_, _, _ = fake.Client().PostMessage("C1", slack.MsgOptionText("a <b>", false))
	fake.reportViolations()
	if !strings.Contains(rec.failed, "chat.postMessage: invalid_arguments") {
		t.Fatalf("the test did not fail: %q", rec.failed)
	}
}

type recordingTB struct {
	testing.TB
	failed string
}

func (r *recordingTB) Errorf(format string, args ...any) { r.failed += fmt.Sprintf(format, args...) }

// BenchmarkCheckCall is the payload checker's cost per Slack call: a
// typical answer (a 10,000-character markdown block and feedback buttons),
// a 45-item greeting, and a 100-block Home tab.
func BenchmarkCheckCall(b *testing.B) {
	answer := blocksJSON(b, slack.NewMarkdownBlock("", strings.Repeat("word <@U1> `code` ", 550)),
		slack.NewActionBlock("fb", button("👍", "good", "1"), button("👎", "bad", "0")))
	greeting := blocksJSON(b, append([]slack.Block{slack.NewMarkdownBlock("", strings.Repeat("1. `*item` — a long description &amp; more\n", 45))},
		slack.NewActionBlock("m0", buttons(25)...), slack.NewActionBlock("m1", buttons(20)...))...)
	home, _ := json.Marshal(slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: repeatBlocks(100,
		slack.NewSectionBlock(mrkdwn(strings.Repeat("*Agent* — a title &amp; description ", 20)), nil, slack.NewAccessory(button("Start", "home:x", "x"))))}})
	for _, bc := range []struct {
		name, method string
		args         map[string]string
	}{
		{"answer", "chat.postMessage", map[string]string{"channel": "C1", "text": "fallback", "blocks": answer}},
		{"greeting", "chat.postMessage", map[string]string{"channel": "C1", "text": "fallback", "blocks": greeting}},
		{"home", "views.publish", map[string]string{"user_id": "U1", "view": string(home)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := MapArgs(bc.args)
			b.SetBytes(int64(len(bc.args["blocks"]) + len(bc.args["view"])))
			for b.Loop() {
				if v := CheckCall(bc.method, args, AgentApp); v != nil {
					b.Fatal(v)
				}
			}
		})
	}
}

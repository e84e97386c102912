package fakeslack

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The rules table: what Slack documents it accepts, checked on every Web
// API call before its handler runs. Each rule cites its source beside it.
// A payload that breaks a rule gets the error Slack answers, with Slack's
// error shape ({"ok":false,"error":"invalid_blocks","response_metadata":
// {"messages":["[ERROR] must be less than 3001 characters
// [json-pointer:/blocks/0/text/text]"]}}), and is recorded as a Violation,
// which fails the test that owns the Server (see AllowViolations).

// Limits of the rules table.
const (
	// https://docs.slack.dev/reference/block-kit/blocks: "You can include up
	// to 50 blocks in each message, and 100 blocks in modals or Home tabs."
	MaxMessageBlocks = 50
	MaxViewBlocks    = 100
	// https://docs.slack.dev/reference/block-kit/blocks/section-block: text
	// "Maximum length for the text in this field is 3000 characters";
	// fields "Maximum number of items is 10. Maximum length for the text in
	// each item is 2000 characters."
	MaxSectionText  = 3000
	MaxSectionField = 2000
	MaxFields       = 10
	// https://docs.slack.dev/reference/block-kit/blocks/header-block:
	// "Maximum length for the text in this field is 150 characters."
	MaxHeaderText = 150
	// https://docs.slack.dev/reference/block-kit/blocks/markdown-block: "The
	// cumulative limit for all markdown blocks in a single payload is 12,000
	// characters."
	MaxMarkdownTotal = 12_000
	// Total text of a message's blocks: Slack answers msg_blocks_too_long
	// past about 12,000 characters of text in all blocks together, a limit
	// it does not document (slackapi/bolt-js#2509: "12,000 text characters
	// with a buffer for block containers"; slackapi/bolt-js#2867).
	MaxBlocksText = 12_000
	// https://docs.slack.dev/reference/block-kit/composition-objects/text-object:
	// "The minimum length is 1 and maximum length is 3000 characters."
	MaxTextObject = 3000
	// https://docs.slack.dev/reference/block-kit/block-elements/button-element:
	// text "Maximum length for this field is 75 characters"; value "Maximum
	// length is 2000 characters"; action_id "Maximum length is 255
	// characters"; url "Maximum length is 3000 characters".
	MaxButtonText  = 75
	MaxButtonValue = 2000
	MaxActionID    = 255
	MaxButtonURL   = 3000
	// https://docs.slack.dev/reference/block-kit/blocks/actions-block:
	// elements "There is a maximum of 25 elements in each action block."
	MaxActionElements = 25
	// https://docs.slack.dev/reference/block-kit/blocks/context-block:
	// elements "Maximum number of items is 10."
	MaxContextElements = 10
	// https://docs.slack.dev/reference/block-kit/blocks: block_id "Maximum
	// length for this field is 255 characters."
	MaxBlockID = 255
	// https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts:
	// "Use this method to set up to four suggested prompts in an app thread."
	MaxSuggestedPrompts = 4
)

// Violation is one payload the rules table refused, or (for a rule Slack
// enforces by silently doing nothing) recorded as failed.
type Violation struct {
	Method string
	// Error is the Slack error answered; "" when Slack answers ok and
	// silently ignores the call.
	Error string
	// Messages are response_metadata.messages, each naming the JSON
	// pointer of what broke the rule.
	Messages []string
	// Source is the documentation the rule comes from.
	Source string
}

func (v Violation) String() string {
	err := v.Error
	if err == "" {
		err = "silently ignored"
	}
	return fmt.Sprintf("%s: %s %v (%s)", v.Method, err, v.Messages, v.Source)
}

// Args are a Web API call's arguments by name, as the fake reads them from a
// form or JSON body (JSON values that are not strings as JSON text).
type Args func(name string) string

// MapArgs makes Args of a map, for checking payloads without a server.
func MapArgs(m map[string]string) Args { return func(name string) string { return m[name] } }

// argRule is a required argument: missing, the call fails with code.
type argRule struct {
	names []string // any one of them present satisfies the rule
	code  string
}

// methodRule is the table's row for one Web API method.
type methodRule struct {
	doc      string    // the method's documentation page
	required []argRule // required arguments, from the page's "Required arguments"
	blocks   string    // argument holding message blocks, "" when none
	view     bool      // the "view" argument holds a view (views.publish)
	text     []string  // arguments parsed for Slack markup (escaping rule)
	extra    func(args Args, app AppKind) *Violation
}

// AppKind says which messaging experience the fake app has, which changes
// what some assistant.threads methods do.
type AppKind int

// App kinds.
const (
	// AgentApp is an app whose manifest declares features.agent_view (as
	// agentbot's does): the default.
	AgentApp AppKind = iota
	// AssistantApp is a legacy app with features.assistant_view.
	AssistantApp
)

// msgText is the argument of chat methods that Slack parses for markup.
var msgText = []string{"text"}

func req(code string, names ...string) argRule { return argRule{names: names, code: code} }

// Slack answers a missing argument with invalid_arguments unless the
// method's page names a more specific error.
const badArgs = "invalid_arguments"

// rules is the table, one row per method agentbot uses.
var rules = map[string]methodRule{
	"chat.postMessage": {doc: "https://docs.slack.dev/reference/methods/chat.postMessage",
		required: []argRule{req("channel_not_found", "channel"), req("no_text", "text", "blocks", "attachments", "markdown_text")},
		blocks:   "blocks", text: msgText},
	"chat.postEphemeral": {doc: "https://docs.slack.dev/reference/methods/chat.postEphemeral",
		required: []argRule{req("channel_not_found", "channel"), req("user_not_in_channel", "user"),
			req("no_text", "text", "blocks", "attachments", "markdown_text")},
		blocks: "blocks", text: msgText},
	"chat.update": {doc: "https://docs.slack.dev/reference/methods/chat.update",
		required: []argRule{req("channel_not_found", "channel"), req("message_not_found", "ts")},
		blocks:   "blocks", text: msgText},
	"chat.delete": {doc: "https://docs.slack.dev/reference/methods/chat.delete",
		required: []argRule{req("channel_not_found", "channel"), req("message_not_found", "ts")}},
	"chat.startStream": {doc: "https://docs.slack.dev/reference/methods/chat.startStream",
		required: []argRule{req("channel_not_found", "channel")}, extra: checkRecipient},
	"chat.appendStream": {doc: "https://docs.slack.dev/reference/methods/chat.appendStream",
		required: []argRule{req("channel_not_found", "channel"), req("message_not_found", "ts")}},
	"chat.stopStream": {doc: "https://docs.slack.dev/reference/methods/chat.stopStream",
		required: []argRule{req("channel_not_found", "channel"), req("message_not_found", "ts")},
		blocks:   "blocks"},
	"assistant.threads.setStatus": {doc: "https://docs.slack.dev/reference/methods/assistant.threads.setStatus",
		// status is required, but "" clears it: present in the form as empty.
		required: []argRule{req("channel_not_found", "channel_id"), req(badArgs, "thread_ts")}},
	"assistant.threads.setSuggestedPrompts": {doc: "https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts",
		required: []argRule{req("channel_not_found", "channel_id"), req(badArgs, "prompts")},
		extra:    checkSuggestedPrompts},
	"assistant.threads.setTitle": {doc: "https://docs.slack.dev/reference/methods/assistant.threads.setTitle",
		required: []argRule{req("channel_not_found", "channel_id"), req(badArgs, "thread_ts"), req(badArgs, "title")}},
	// slackapi/java-slack-sdk#1633: "agents.sessions.setStatus — channel_id
	// (required), status (required)"; "agents.sessions.rename — channel_id
	// (required), title (required), optional thread_ts".
	"agents.sessions.setStatus": {doc: "https://docs.slack.dev/reference/methods/agents.sessions.setStatus",
		required: []argRule{req(badArgs, "channel_id"), req("invalid_status", "status")}},
	"agents.sessions.rename": {doc: "https://docs.slack.dev/reference/methods/agents.sessions.rename",
		required: []argRule{req(badArgs, "channel_id"), req(badArgs, "title")}},
	"views.publish": {doc: "https://docs.slack.dev/reference/methods/views.publish",
		required: []argRule{req(badArgs, "user_id"), req(badArgs, "view")}, view: true},
	"reactions.add": {doc: "https://docs.slack.dev/reference/methods/reactions.add",
		required: []argRule{req("channel_not_found", "channel"), req("invalid_name", "name"), req("no_item_specified", "timestamp")}},
	"conversations.replies": {doc: "https://docs.slack.dev/reference/methods/conversations.replies",
		required: []argRule{req("channel_not_found", "channel"), req("thread_not_found", "ts")}},
	"conversations.history": {doc: "https://docs.slack.dev/reference/methods/conversations.history",
		required: []argRule{req("channel_not_found", "channel")}},
	"conversations.info": {doc: "https://docs.slack.dev/reference/methods/conversations.info",
		required: []argRule{req("channel_not_found", "channel")}},
	"conversations.members": {doc: "https://docs.slack.dev/reference/methods/conversations.members",
		required: []argRule{req("channel_not_found", "channel")}},
	"conversations.open": {doc: "https://docs.slack.dev/reference/methods/conversations.open",
		required: []argRule{req("users_list_not_supplied", "channel", "users")}},
	"users.info": {doc: "https://docs.slack.dev/reference/methods/users.info",
		required: []argRule{req("user_not_found", "user")}},
	"files.getUploadURLExternal": {doc: "https://docs.slack.dev/reference/methods/files.getUploadURLExternal",
		required: []argRule{req(badArgs, "filename"), req(badArgs, "length")}},
	"files.completeUploadExternal": {doc: "https://docs.slack.dev/reference/methods/files.completeUploadExternal",
		required: []argRule{req(badArgs, "files")}, text: []string{"initial_comment"}},
	"files.info": {doc: "https://docs.slack.dev/reference/methods/files.info",
		required: []argRule{req("file_not_found", "file")}},
}

// Escaping: https://docs.slack.dev/messaging/formatting-message-text#escaping
// "There are three characters you must convert to HTML entities ... & <
// >. Don't HTML entity-encode the entire message; Slack will take care of
// the rest." Slack reads < and > as the edges of its markup (mentions,
// links, special mentions), so a raw one anywhere else is broken markup;
// the fake refuses it where Slack would silently render it wrong.
const escapingDoc = "https://docs.slack.dev/messaging/formatting-message-text#escaping"

// markupToken is what may stand between < and > in mrkdwn and text:
// https://docs.slack.dev/messaging/formatting-message-text (user and
// channel mentions, special mentions, user groups, dates, links). A
// channel id starts with C, or G for a private channel or group DM made
// before 2021 (https://docs.slack.dev/reference/objects/conversation-object),
// and either is a channel mention.
var markupToken = regexp.MustCompile(`^(?:@[UW][A-Z0-9]+|#[CG][A-Z0-9]+|![a-z]+|!subteam\^S[A-Z0-9]+|!date\^[0-9]+\^[^|]*|(?:https?|mailto|tel|slack):[^\s|]+)(?:\|[^<>]*)?$`)

// CheckEscaped returns the first raw control character of s that is not
// part of Slack markup or an entity (&amp; &lt; &gt;), and its byte
// offset; ok is true when s is escaped. A > opening a line is a quote.
func CheckEscaped(s string) (bad string, at int, ok bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&':
			rest := s[i:]
			if !strings.HasPrefix(rest, "&amp;") && !strings.HasPrefix(rest, "&lt;") && !strings.HasPrefix(rest, "&gt;") {
				return "&", i, false
			}
		case '<':
			end := strings.IndexAny(s[i+1:], "<>")
			if end < 0 || s[i+1+end] != '>' || !markupToken.MatchString(s[i+1:i+1+end]) {
				return "<", i, false
			}
			i += end + 1
		case '>':
			if !quoteStart(s, i) {
				return ">", i, false
			}
		}
	}
	return "", 0, true
}

// quoteStart reports whether the > at i opens a line (a block quote).
func quoteStart(s string, i int) bool {
	line := s[strings.LastIndexByte(s[:i], '\n')+1 : i]
	return strings.Trim(line, " >") == ""
}

// CheckCall checks a Web API call against the rules table. It returns nil
// when the call passes; an unknown method passes (the server answers
// unknown_method).
func CheckCall(method string, args Args, app AppKind) *Violation {
	rule, ok := rules[method]
	if !ok {
		return nil
	}
	for _, r := range rule.required {
		if !anyPresent(args, r.names) {
			return &Violation{Method: method, Error: r.code, Source: rule.doc,
				Messages: []string{"[ERROR] missing required field: " + strings.Join(r.names, " or ")}}
		}
	}
	for _, name := range rule.text {
		if bad, at, ok := CheckEscaped(args(name)); !ok {
			return &Violation{Method: method, Error: badArgs, Source: escapingDoc,
				Messages: []string{fmt.Sprintf("[ERROR] unescaped %q at byte %d [json-pointer:/%s]", bad, at, name)}}
		}
	}
	if rule.blocks != "" {
		if v := checkMessageBlocks(method, args(rule.blocks)); v != nil {
			return v
		}
	}
	if rule.view {
		if v := checkView(method, args("view")); v != nil {
			return v
		}
	}
	if rule.extra != nil {
		if v := rule.extra(args, app); v != nil {
			v.Method = method
			return v
		}
	}
	return nil
}

func anyPresent(args Args, names []string) bool {
	for _, n := range names {
		if args(n) != "" {
			return true
		}
	}
	return false
}

// checkMessageBlocks applies the block rules to a message's blocks.
func checkMessageBlocks(method, raw string) *Violation {
	if raw == "" {
		return nil
	}
	var blocks []any
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return &Violation{Method: method, Error: "invalid_blocks_format", Source: "https://docs.slack.dev/reference/methods/chat.postMessage",
			Messages: []string{"[ERROR] blocks must be a JSON array"}}
	}
	c := blockChecker{}
	c.blocks("/blocks", blocks, MaxMessageBlocks)
	if len(c.msgs) > 0 {
		return &Violation{Method: method, Error: "invalid_blocks", Messages: c.msgs, Source: c.source}
	}
	if c.text > MaxBlocksText {
		// Slack gives no detail with this error (slackapi/bolt-js#2867).
		return &Violation{Method: method, Error: "msg_blocks_too_long", Source: "slackapi/bolt-js#2509",
			Messages: []string{fmt.Sprintf("(fake) %d characters of text in blocks, over %d", c.text, MaxBlocksText)}}
	}
	return nil
}

// checkView applies the view rules (https://docs.slack.dev/reference/views)
// to views.publish's view; views.* answer invalid_arguments with the
// pointers in response_metadata.messages.
func checkView(method, raw string) *Violation {
	var view struct {
		Type   string `json:"type"`
		Blocks []any  `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(raw), &view); err != nil || view.Type == "" {
		return &Violation{Method: method, Error: badArgs, Source: "https://docs.slack.dev/reference/views",
			Messages: []string{"[ERROR] view must be an object with a type [json-pointer:/view]"}}
	}
	c := blockChecker{}
	c.blocks("/view/blocks", view.Blocks, MaxViewBlocks)
	if len(c.msgs) > 0 {
		return &Violation{Method: method, Error: badArgs, Messages: c.msgs, Source: c.source}
	}
	return nil
}

// checkRecipient applies chat.startStream's rule for channels:
// recipient_user_id and recipient_team_id are "Required when streaming to
// channels" (https://docs.slack.dev/reference/methods/chat.startStream); a
// DM's id starts with D.
func checkRecipient(args Args, _ AppKind) *Violation {
	if strings.HasPrefix(args("channel"), "D") || (args("recipient_user_id") != "" && args("recipient_team_id") != "") {
		return nil
	}
	return &Violation{Error: badArgs, Source: "https://docs.slack.dev/reference/methods/chat.startStream",
		Messages: []string{"[ERROR] recipient_user_id and recipient_team_id are required when streaming to channels"}}
}

// checkSuggestedPrompts applies the page's rules: one to four prompts, each
// with a title and a message, and the agent-app rule for thread_ts.
func checkSuggestedPrompts(args Args, app AppKind) *Violation {
	const doc = "https://docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts"
	var prompts []struct {
		Title   string `json:"title"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(args("prompts")), &prompts); err != nil || len(prompts) == 0 || len(prompts) > MaxSuggestedPrompts {
		return &Violation{Error: badArgs, Source: doc,
			Messages: []string{fmt.Sprintf("[ERROR] prompts must be 1 to %d prompts [json-pointer:/prompts]", MaxSuggestedPrompts)}}
	}
	for i, p := range prompts {
		if p.Title == "" || p.Message == "" {
			return &Violation{Error: badArgs, Source: doc,
				Messages: []string{fmt.Sprintf("[ERROR] a prompt needs a title and a message [json-pointer:/prompts/%d]", i)}}
		}
	}
	// The page: "The thread_ts parameter should only be used in the legacy
	// assistant messaging experience. Including it in a call for an agent
	// app will cause the call to silently fail."
	if app == AgentApp && args("thread_ts") != "" {
		return &Violation{Error: "", Source: doc,
			Messages: []string{"(fake) thread_ts sent by an agent app: Slack answers ok and shows no prompts"}}
	}
	return nil
}

// blockChecker walks blocks, collecting Slack's messages for what breaks
// a rule, the markdown blocks' cumulative length and all text.
type blockChecker struct {
	msgs    []string
	source  string
	mdTotal int
	text    int
}

func (c *blockChecker) fail(source, ptr, format string, args ...any) {
	if c.source == "" {
		c.source = source
	}
	c.msgs = append(c.msgs, fmt.Sprintf("[ERROR] "+format+" [json-pointer:%s]", append(args, ptr)...))
}

const blocksDoc = "https://docs.slack.dev/reference/block-kit/blocks"

func (c *blockChecker) blocks(ptr string, blocks []any, limit int) {
	if len(blocks) > limit {
		c.fail(blocksDoc, ptr, "no more than %d items allowed", limit)
		return
	}
	for i, b := range blocks {
		c.block(fmt.Sprintf("%s/%d", ptr, i), b)
	}
}

func (c *blockChecker) block(ptr string, v any) {
	b, _ := v.(map[string]any)
	typ, _ := b["type"].(string)
	if id, _ := b["block_id"].(string); utf8.RuneCountInString(id) > MaxBlockID {
		c.fail(blocksDoc, ptr+"/block_id", "must be less than %d characters", MaxBlockID+1)
	}
	switch typ {
	case "section":
		c.section(ptr, b)
	case "header":
		c.textObject(ptr+"/text", b["text"], MaxHeaderText, "https://docs.slack.dev/reference/block-kit/blocks/header-block", true)
	case "markdown":
		c.markdown(ptr, b)
	case "actions":
		c.elements(ptr, b, MaxActionElements, "https://docs.slack.dev/reference/block-kit/blocks/actions-block")
	case "context":
		c.elements(ptr, b, MaxContextElements, "https://docs.slack.dev/reference/block-kit/blocks/context-block")
	case "divider", "rich_text", "image", "input", "file", "video", "context_actions", "table", "plan", "task_card":
	default:
		c.fail(blocksDoc, ptr+"/type", "unsupported block type %q", typ)
	}
}

func (c *blockChecker) section(ptr string, b map[string]any) {
	const doc = "https://docs.slack.dev/reference/block-kit/blocks/section-block"
	fields, _ := b["fields"].([]any)
	if b["text"] == nil && len(fields) == 0 {
		c.fail(doc, ptr, "must provide text or fields")
	}
	if b["text"] != nil {
		c.textObject(ptr+"/text", b["text"], MaxSectionText, doc, false)
	}
	if len(fields) > MaxFields {
		c.fail(doc, ptr+"/fields", "no more than %d items allowed", MaxFields)
	}
	for i, f := range fields {
		c.textObject(fmt.Sprintf("%s/fields/%d", ptr, i), f, MaxSectionField, doc, false)
	}
	if acc, ok := b["accessory"].(map[string]any); ok {
		c.element(ptr+"/accessory", acc)
	}
}

func (c *blockChecker) markdown(ptr string, b map[string]any) {
	const doc = "https://docs.slack.dev/reference/block-kit/blocks/markdown-block"
	text, _ := b["text"].(string)
	n := utf8.RuneCountInString(text)
	if n == 0 {
		c.fail(doc, ptr+"/text", "must be more than 0 characters")
	}
	c.mdTotal += n
	c.text += n
	if c.mdTotal > MaxMarkdownTotal {
		c.fail(doc, ptr+"/text", "markdown blocks must be less than %d characters in total", MaxMarkdownTotal+1)
	}
}

func (c *blockChecker) elements(ptr string, b map[string]any, limit int, doc string) {
	els, _ := b["elements"].([]any)
	switch {
	case len(els) == 0:
		c.fail(doc, ptr+"/elements", "must provide at least 1 item")
	case len(els) > limit:
		c.fail(doc, ptr+"/elements", "no more than %d items allowed", limit)
	}
	for i, e := range els {
		el, _ := e.(map[string]any)
		c.element(fmt.Sprintf("%s/elements/%d", ptr, i), el)
	}
}

// element checks a block element or, in context blocks, a text object.
func (c *blockChecker) element(ptr string, el map[string]any) {
	const doc = "https://docs.slack.dev/reference/block-kit/block-elements/button-element"
	typ, _ := el["type"].(string)
	if typ == "plain_text" || typ == "mrkdwn" {
		c.textObject(ptr, el, MaxTextObject, "https://docs.slack.dev/reference/block-kit/blocks/context-block", false)
		return
	}
	if id, _ := el["action_id"].(string); utf8.RuneCountInString(id) > MaxActionID {
		c.fail(doc, ptr+"/action_id", "must be less than %d characters", MaxActionID+1)
	}
	if typ != "button" {
		return
	}
	c.textObject(ptr+"/text", el["text"], MaxButtonText, doc, true)
	if v, _ := el["value"].(string); utf8.RuneCountInString(v) > MaxButtonValue {
		c.fail(doc, ptr+"/value", "must be less than %d characters", MaxButtonValue+1)
	}
	if u, _ := el["url"].(string); utf8.RuneCountInString(u) > MaxButtonURL {
		c.fail(doc, ptr+"/url", "must be less than %d characters", MaxButtonURL+1)
	}
}

// textObject checks a text object: its type, its length (1 to limit) and,
// for mrkdwn, its escaping.
func (c *blockChecker) textObject(ptr string, v any, limit int, doc string, plainOnly bool) {
	o, _ := v.(map[string]any)
	typ, _ := o["type"].(string)
	text, _ := o["text"].(string)
	n := utf8.RuneCountInString(text)
	c.text += n
	switch {
	case typ != "plain_text" && (typ != "mrkdwn" || plainOnly):
		c.fail(doc, ptr+"/type", "must be plain_text%s", map[bool]string{false: " or mrkdwn", true: ""}[plainOnly])
	case n == 0:
		c.fail(doc, ptr+"/text", "must be more than 0 characters")
	case n > limit:
		c.fail(doc, ptr+"/text", "must be less than %d characters", limit+1)
	}
	if typ == "mrkdwn" {
		if bad, at, ok := CheckEscaped(text); !ok {
			c.fail(escapingDoc, ptr+"/text", "unescaped %q at byte %d", bad, at)
		}
	}
}

// Shown is mrkdwn or message text as a person reads it: the entities of
// the escaping rule shown as the characters they stand for.
func Shown(text string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
}

// ScopeCustomize is the scope that lets a bot post under another name and
// icon. https://docs.slack.dev/reference/methods/chat.postMessage
// (Authorship) and https://docs.slack.dev/reference/scopes/chat.write.customize:
// "Send messages as your Slack app with a customized username and
// avatar"; chat.startStream lists the same icon_emoji, icon_url and
// username arguments (https://docs.slack.dev/reference/methods/chat.startStream).
// Without the scope Slack does not refuse the call: it ignores the three
// arguments and shows the app's own name and icon (linyows/dewy#362:
// "Without the chat:write.customize scope, the Slack API ignores the
// username and icon_url parameters"; papercups-io/papercups#522: "seems to
// just ignore these fields when scope is missing"). So does the fake.
const ScopeCustomize = "chat:write.customize"

// customAuthor is the author a chat.postMessage or chat.startStream
// shows: its username, icon_emoji and icon_url arguments with
// ScopeCustomize granted, none without. icon_emoji "Overrides icon_url"
// (chat.postMessage's page).
func customAuthor(args Args, granted bool) Author {
	if !granted {
		return Author{}
	}
	a := Author{Username: args("username"), IconEmoji: args("icon_emoji"), IconURL: args("icon_url")}
	if a.IconEmoji != "" {
		a.IconURL = ""
	}
	return a
}

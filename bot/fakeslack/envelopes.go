package fakeslack

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

const (
	responsePath      = "/response/" // + id: response_url of slash commands and actions
	verificationToken = "fake-verification-token"
)

// EventOptions shape the events_api envelope built by SendEventWith.
type EventOptions struct {
	EventID      string // default: a fresh "Ev..." id; reuse one to simulate a redelivery
	EventTime    int64  // default: now (Unix seconds)
	RetryAttempt int    // Slack's retry_attempt (0 for the first delivery)
	RetryReason  string // Slack's retry_reason, e.g. "timeout"
	TeamID       string // default: the fake's team
	// EnterpriseID, when set, sends the event as an org-wide install
	// receives it: enterprise_id in the payload and its authorization,
	// is_enterprise_install true, and team_id the workspace the event
	// happened in (https://docs.slack.dev/enterprise-grid/developing-for-enterprise-grid).
	EnterpriseID string
	// Conn delivers the envelope on the websocket with this id (see
	// ConnIDs and Envelope.Conn), waiting while it is not connected; 0
	// spreads envelopes round-robin over the live websockets.
	Conn int
}

// SendEvent pushes an events_api envelope carrying inner as the event (a
// struct such as slackevents.AppMentionEvent, a map, or raw JSON as
// json.RawMessage, []byte or string) and returns its envelope_id. A message
// or app_mention event is also stored as a user message, so
// conversations.replies and ThreadMessages see it. When inner is not a JSON
// object, nothing is sent, the error is reported on the testing.TB given to
// New, and "" is returned.
func (s *Server) SendEvent(inner any) string {
	return s.SendEventWith(inner, EventOptions{})
}

// SendEventWith is SendEvent with explicit event_id, retry fields and team.
func (s *Server) SendEventWith(inner any, opt EventOptions) string {
	raw, err := toJSONObject(inner)
	if err != nil {
		s.reportf("fakeslack: SendEvent: %v", err)
		return ""
	}
	if opt.EventID == "" {
		opt.EventID = "Ev" + strings.ToUpper(randomHex(5))
	}
	if opt.EventTime == 0 {
		opt.EventTime = time.Now().Unix()
	}
	if opt.TeamID == "" {
		opt.TeamID = s.cfg.teamID
	}
	s.storeUserMessage(raw)
	var enterprise any
	if opt.EnterpriseID != "" {
		enterprise = opt.EnterpriseID
	}
	payload := map[string]any{
		"token": verificationToken, "team_id": opt.TeamID, "api_app_id": s.cfg.appID,
		"event": raw, "type": "event_callback",
		"event_id": opt.EventID, "event_time": opt.EventTime, "event_context": "4-fake-" + opt.EventID,
		"authorizations": []map[string]any{{
			"enterprise_id": enterprise, "team_id": opt.TeamID, "user_id": s.cfg.botUserID,
			"is_bot": true, "is_enterprise_install": opt.EnterpriseID != "",
		}},
		"is_ext_shared_channel": false,
	}
	if opt.EnterpriseID != "" {
		payload["enterprise_id"] = opt.EnterpriseID
	}
	e := &Envelope{ID: newEnvelopeID(), Type: "events_api", EventID: opt.EventID, RetryAttempt: opt.RetryAttempt, target: opt.Conn}
	e.JSON, _ = json.Marshal(map[string]any{
		"envelope_id": e.ID, "type": "events_api", "payload": payload,
		"accepts_response_payload": false,
		"retry_attempt":            opt.RetryAttempt, "retry_reason": opt.RetryReason,
	})
	s.enqueue(e)
	return e.ID
}

// Redeliver sends an events_api envelope again, as Slack does when an ack is
// late: same event and event_id, a new envelope_id, retry_attempt one higher
// and the given retry_reason (e.g. "timeout").
func (s *Server) Redeliver(envelopeID, reason string) (string, error) {
	return s.RedeliverTo(envelopeID, reason, 0)
}

// RedeliverTo is Redeliver on the websocket with id conn (0: round-robin),
// as when Slack retries an event on another of the app's connections.
func (s *Server) RedeliverTo(envelopeID, reason string, conn int) (string, error) {
	s.mu.Lock()
	e, ok := s.envIdx[envelopeID]
	var orig []byte
	if ok {
		orig = e.JSON
	}
	s.mu.Unlock()
	if !ok || e.Type != "events_api" {
		return "", fmt.Errorf("fakeslack: Redeliver: no events_api envelope %q", envelopeID)
	}
	var env struct {
		Payload struct {
			Event     json.RawMessage `json:"event"`
			EventID   string          `json:"event_id"`
			EventTime int64           `json:"event_time"`
			TeamID    string          `json:"team_id"`
		} `json:"payload"`
		RetryAttempt int `json:"retry_attempt"`
	}
	if err := json.Unmarshal(orig, &env); err != nil {
		return "", fmt.Errorf("fakeslack: Redeliver %s: %w", envelopeID, err)
	}
	id := s.SendEventWith(env.Payload.Event, EventOptions{
		EventID: env.Payload.EventID, EventTime: env.Payload.EventTime, TeamID: env.Payload.TeamID,
		RetryAttempt: env.RetryAttempt + 1, RetryReason: reason, Conn: conn,
	})
	return id, nil
}

// SendSlashCommand pushes a slash_commands envelope and returns its
// envelope_id. Empty infrastructure fields (team, app, trigger id,
// response_url, user and channel names) are filled in; the response_url
// points at the fake, which records what is POSTed there as KindResponseURL
// messages.
func (s *Server) SendSlashCommand(cmd slack.SlashCommand) string {
	s.mu.Lock()
	if cmd.TeamID == "" {
		cmd.TeamID = s.cfg.teamID
	}
	if cmd.TeamDomain == "" {
		cmd.TeamDomain = "fake"
	}
	if cmd.APIAppID == "" {
		cmd.APIAppID = s.cfg.appID
	}
	if cmd.Token == "" {
		cmd.Token = verificationToken
	}
	if cmd.TriggerID == "" {
		cmd.TriggerID = "trig-" + randomHex(6)
	}
	if cmd.UserName == "" && cmd.UserID != "" {
		cmd.UserName = "user-" + strings.ToLower(cmd.UserID)
	}
	if cmd.ChannelName == "" && cmd.ChannelID != "" {
		cmd.ChannelName = strings.ToLower(cmd.ChannelID)
	}
	if cmd.ResponseURL == "" {
		cmd.ResponseURL = s.newResponseURLLocked(cmd.ChannelID, cmd.UserID)
	}
	s.mu.Unlock()
	e := &Envelope{ID: newEnvelopeID(), Type: "slash_commands"}
	e.JSON, _ = json.Marshal(map[string]any{
		"envelope_id": e.ID, "type": "slash_commands", "payload": cmd, "accepts_response_payload": true,
	})
	s.enqueue(e)
	return e.ID
}

// BlockAction describes a button click for SendBlockAction.
type BlockAction struct {
	UserID      string
	UserName    string // default "user-<id>"
	ChannelID   string
	MessageTS   string // ts of the message holding the button
	ThreadTS    string // thread of that message; "" for a top-level message
	IsEphemeral bool   // the button sat in an ephemeral message
	ActionID    string
	BlockID     string
	Value       string
	Text        string // the button's label; default Value
	Type        string // the element's type; default "button" (e.g. "feedback_buttons")
	ActionTS    string // when the person clicked (action_ts); default the fake's next ts, on the clock of its message ts
	// TeamID is the workspace the click happened in (default the fake's
	// team); EnterpriseID, when set, makes the payload an org-wide
	// install's, with "enterprise" and is_enterprise_install. UserTeamID
	// is the clicking person's own workspace (default TeamID).
	TeamID, EnterpriseID, UserTeamID string
	// NoTeam sends "team": null, as Slack may for an org-wide install's
	// payload (https://docs.slack.dev/enterprise-grid/developing-for-enterprise-grid:
	// "team_id ... may be null" where the action is not tied to one
	// workspace); the user's team_id still names theirs.
	NoTeam bool
	// State is the message's stateful elements (input blocks) as
	// state.values: block id → action id → the element's value object
	// ({"type":"plain_text_input","value":"…"}, {"type":"static_select",
	// "selected_option":{…}}, …). Every block_actions payload carries the
	// full state of its surface since 2020
	// (https://api.slack.com/changelog/2020-09-full-state-on-view-submisson-and-block-actions).
	State map[string]map[string]any
}

// SendBlockAction pushes an interactive envelope with a block_actions payload
// (user, channel, container with message_ts/thread_ts, the message when the
// fake knows it, response_url, one button action) and returns its envelope_id.
func (s *Server) SendBlockAction(a BlockAction) string {
	if a.UserName == "" {
		a.UserName = "user-" + strings.ToLower(a.UserID)
	}
	if a.Text == "" {
		a.Text = a.Value
	}
	if a.Type == "" {
		a.Type = "button"
	}
	actionTS := a.ActionTS
	if actionTS == "" {
		actionTS = s.NextTS() // Slack's clock: the click comes after the messages posted before it
	}
	container := map[string]any{"type": "message", "message_ts": a.MessageTS, "channel_id": a.ChannelID,
		"is_ephemeral": a.IsEphemeral}
	if a.ThreadTS != "" {
		container["thread_ts"] = a.ThreadTS
	}
	if a.TeamID == "" {
		a.TeamID = s.cfg.teamID
	}
	if a.UserTeamID == "" {
		a.UserTeamID = a.TeamID
	}
	var team any = map[string]any{"id": a.TeamID, "domain": "fake"}
	if a.NoTeam {
		team = nil
	}
	s.mu.Lock()
	payload := map[string]any{
		"type":       "block_actions",
		"team":       team,
		"user":       map[string]any{"id": a.UserID, "username": a.UserName, "name": a.UserName, "team_id": a.UserTeamID},
		"api_app_id": s.cfg.appID, "token": verificationToken,
		"container":    container,
		"trigger_id":   "trig-" + randomHex(6),
		"channel":      map[string]any{"id": a.ChannelID, "name": strings.ToLower(a.ChannelID)},
		"response_url": s.newResponseURLLocked(a.ChannelID, a.UserID),
		"actions": []map[string]any{{
			"type": a.Type, "action_id": a.ActionID, "block_id": a.BlockID, "value": a.Value,
			"text": map[string]any{"type": "plain_text", "text": a.Text, "emoji": true}, "action_ts": actionTS,
		}},
	}
	if a.State != nil {
		payload["state"] = map[string]any{"values": a.State}
	}
	if m, ok := s.current[msgKey(a.ChannelID, a.MessageTS)]; ok && !a.IsEphemeral {
		payload["message"] = s.messageJSON(*m)
	}
	if a.EnterpriseID != "" {
		payload["enterprise"] = map[string]any{"id": a.EnterpriseID, "name": "fake-org"}
		payload["is_enterprise_install"] = true
	}
	s.mu.Unlock()
	e := &Envelope{ID: newEnvelopeID(), Type: "interactive"}
	e.JSON, _ = json.Marshal(map[string]any{
		"envelope_id": e.ID, "type": "interactive", "payload": payload, "accepts_response_payload": false,
	})
	s.enqueue(e)
	return e.ID
}

// SendRaw pushes raw as one websocket message, unchanged (it need not be
// valid JSON). It returns the envelope_id found in it, if any.
func (s *Server) SendRaw(raw []byte) string {
	var head struct {
		EnvelopeID string `json:"envelope_id"`
		Type       string `json:"type"`
	}
	_ = json.Unmarshal(raw, &head)
	e := &Envelope{ID: head.EnvelopeID, Type: head.Type, JSON: append([]byte(nil), raw...)}
	s.enqueue(e)
	return e.ID
}

// SendMalformed pushes an envelope of type envType (events_api,
// slash_commands, interactive, or a type Slack may add) with a fresh
// envelope_id and a payload that does not decode as that type: for
// events_api an event_callback whose event carries a field of the wrong
// type, otherwise a string where an object belongs. slack-go's socketmode
// client reports it as socketmode.EventTypeErrorBadMessage with the raw
// envelope. It returns the envelope_id; the fake records its ack like any
// other (Acks, WaitAck).
func (s *Server) SendMalformed(envType string) string {
	var payload any = "not a " + envType + " payload"
	if envType == "events_api" {
		payload = map[string]any{
			"token": verificationToken, "team_id": s.cfg.teamID, "api_app_id": s.cfg.appID,
			"type": "event_callback", "event_id": "Ev" + strings.ToUpper(randomHex(5)), "event_time": time.Now().Unix(),
			// ts must be a string ("1700000000.000100"): a number does not decode.
			"event": map[string]any{"type": "app_mention", "user": "U0MALFORMED", "channel": "C0MALFORMED", "ts": 17e8},
		}
	}
	e := &Envelope{ID: newEnvelopeID(), Type: envType}
	e.JSON, _ = json.Marshal(map[string]any{
		"envelope_id": e.ID, "type": envType, "payload": payload, "accepts_response_payload": false,
	})
	s.enqueue(e)
	return e.ID
}

// userEvent is a message or app_mention event as storeUserMessage reads
// it.
type userEvent struct {
	Type     string          `json:"type"`
	SubType  string          `json:"subtype"`
	Channel  string          `json:"channel"`
	TS       string          `json:"ts"`
	ThreadTS string          `json:"thread_ts"`
	User     string          `json:"user"`
	Text     string          `json:"text"`
	Blocks   json.RawMessage `json:"blocks"`
	Files    json.RawMessage `json:"files"`
}

// person reports whether ev is a person's message: an app_mention, or a
// message of no subtype, file_share or thread_broadcast.
func (ev userEvent) person() bool {
	return ev.Type == "app_mention" ||
		(ev.Type == "message" && (ev.SubType == "" || ev.SubType == "file_share" || ev.SubType == "thread_broadcast"))
}

// message is ev as a user Message.
func (ev userEvent) message() Message {
	m := Message{Kind: KindUser, Channel: ev.Channel, TS: ev.TS, ThreadTS: ev.ThreadTS, Text: ev.Text,
		User: ev.User, Time: time.Now(), Blocks: present(ev.Blocks), Files: present(ev.Files)}
	if ev.Type == "message" {
		m.SubType = ev.SubType // an app_mention has none, whatever it shares
	}
	return m
}

// present is raw, or nil when it is empty, null or an empty list.
func present(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "[]" {
		return nil
	}
	return raw
}

// storeUserMessage keeps message and app_mention events as user messages.
func (s *Server) storeUserMessage(raw json.RawMessage) {
	var ev userEvent
	if json.Unmarshal(raw, &ev) != nil || ev.Channel == "" || ev.TS == "" || !ev.person() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.current[msgKey(ev.Channel, ev.TS)]; seen {
		return
	}
	s.storeLocked(ev.message())
	s.joinLocked(ev.Channel, ev.User)
	s.notifyLocked()
}

type responseTarget struct{ channel, user string }

func (s *Server) newResponseURLLocked(channel, user string) string {
	id := randomHex(8)
	if s.responses == nil {
		s.responses = map[string]responseTarget{}
	}
	s.responses[id] = responseTarget{channel: channel, user: user}
	return s.base + responsePath + id
}

// serveResponseURL records what the bot POSTs to a response_url.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	id := strings.TrimPrefix(r.URL.Path, responsePath)
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var msg struct {
		Text            string          `json:"text"`
		Blocks          json.RawMessage `json:"blocks"`
		ResponseType    string          `json:"response_type"`
		ReplaceOriginal bool            `json:"replace_original"`
		DeleteOriginal  bool            `json:"delete_original"`
		ThreadTS        string          `json:"thread_ts"`
	}
	call := Call{Method: MethodResponseURL, JSON: raw, Time: now, Status: http.StatusOK}

	s.mu.Lock()
	f, faulty := s.takeFaultLocked(MethodResponseURL)
	target, known := s.responses[id]
	switch {
	case faulty:
		call.Status, call.Error = faultResult(f, false)
	case !known:
		call.Status, call.Error = http.StatusNotFound, "expired_url"
	case json.Unmarshal(raw, &msg) != nil:
		call.Status, call.Error = http.StatusBadRequest, "invalid_json"
	default:
		m := Message{Kind: KindResponseURL, Channel: target.channel, TS: s.nextTSLocked(), ThreadTS: msg.ThreadTS,
			Text: msg.Text, User: target.user, Time: now}
		if len(msg.Blocks) > 0 && string(msg.Blocks) != "null" {
			m.Blocks = msg.Blocks
		}
		s.messages = append(s.messages, m)
	}
	s.calls = append(s.calls, call)
	s.notifyLocked()
	s.mu.Unlock()

	switch {
	case faulty:
		writeFault(w, f, false)
	case call.Status != http.StatusOK:
		http.Error(w, call.Error, call.Status)
	default:
		writeJSONStatus(w, http.StatusOK, []byte(`{"ok":true}`))
	}
}

// toJSONObject turns v into the raw JSON of an object.
func toJSONObject(v any) (json.RawMessage, error) {
	var raw []byte
	switch t := v.(type) {
	case json.RawMessage:
		raw = t
	case []byte:
		raw = t
	case string:
		raw = []byte(t)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("marshal event: %w", err)
		}
		raw = b
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("event is not a JSON object: %w", err)
	}
	return json.RawMessage(raw), nil
}

// newEnvelopeID returns a random UUID-shaped id, like Slack's.
func newEnvelopeID() string {
	h := randomHex(16)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// reportf reports a misuse on the testing.TB given to New, if any.
func (s *Server) reportf(format string, args ...any) {
	if s.tb != nil {
		s.tb.Errorf(format, args...)
	}
}

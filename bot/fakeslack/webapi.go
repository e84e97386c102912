package fakeslack

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiRequest is a parsed Web API request.
type apiRequest struct {
	method string
	form   url.Values
	body   map[string]json.RawMessage // top-level fields of a JSON body
	token  string
	now    time.Time
}

// get returns a parameter from the form, else from the JSON body (strings as
// is, anything else as JSON text).
func (r *apiRequest) get(name string) string {
	if v := r.form.Get(name); v != "" {
		return v
	}
	raw, ok := r.body[name]
	if !ok {
		return ""
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	return string(raw)
}

// result is the body of a successful answer; "ok": true is added.
type result map[string]any

type tokenKind int

const (
	needBot tokenKind = iota
	needApp
	// needNone: the method takes no token (oauth.v2.access authenticates
	// the client by its id and secret).
	needNone
)

type methodSpec struct {
	token tokenKind
	fn    func(s *Server, r *apiRequest) (result, string)
}

// methods are the Web API methods the fake implements. Handlers run with s.mu
// held and return either a result or a Slack error code.
var methods = map[string]methodSpec{
	"apps.connections.open":                 {needApp, (*Server).appsConnectionsOpen},
	"auth.test":                             {needBot, (*Server).authTest},
	"chat.postMessage":                      {needBot, (*Server).chatPostMessage},
	"chat.postEphemeral":                    {needBot, (*Server).chatPostEphemeral},
	"chat.update":                           {needBot, (*Server).chatUpdate},
	"chat.delete":                           {needBot, (*Server).chatDelete},
	"chat.startStream":                      {needBot, (*Server).chatStartStream},
	"chat.appendStream":                     {needBot, (*Server).chatAppendStream},
	"chat.stopStream":                       {needBot, (*Server).chatStopStream},
	"assistant.threads.setStatus":           {needBot, (*Server).assistantSetStatus},
	"assistant.threads.setSuggestedPrompts": {needBot, (*Server).assistantSetSuggestedPrompts},
	"assistant.threads.setTitle":            {needBot, (*Server).assistantSetTitle},
	"agents.sessions.rename":                {needBot, (*Server).agentSessionRename},
	"agents.sessions.setStatus":             {needBot, (*Server).agentSessionSetStatus},
	"files.getUploadURLExternal":            {needBot, (*Server).filesGetUploadURL},
	"files.completeUploadExternal":          {needBot, (*Server).filesCompleteUpload},
	"files.info":                            {needBot, (*Server).filesInfo},
	"conversations.replies":                 {needBot, (*Server).conversationsReplies},
	"conversations.history":                 {needBot, (*Server).conversationsHistory},
	"conversations.info":                    {needBot, (*Server).conversationsInfo},
	"conversations.members":                 {needBot, (*Server).conversationsMembers},
	"reactions.add":                         {needBot, (*Server).reactionsAdd},
	"users.info":                            {needBot, (*Server).usersInfo},
	"views.publish":                         {needBot, (*Server).viewsPublish},
	"conversations.open":                    {needBot, (*Server).conversationsOpen},
	"oauth.v2.access":                       {needNone, (*Server).oauthV2Access},
	"auth.revoke":                           {needBot, (*Server).authRevoke},
}

// serveAPI answers /api/<method>: it records the call, applies injected
// faults, checks the token and runs the method's handler.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	req, perr := parseAPIRequest(r, method, now)
	call := Call{Method: method, Form: req.form, Token: req.token, Time: now, Status: http.StatusOK}
	if req.body != nil {
		call.JSON, _ = json.Marshal(req.body)
	}

	s.mu.Lock()
	if f, ok := s.takeFaultLocked(method); ok {
		call.Status, call.Error = faultResult(f, true)
		s.calls = append(s.calls, call)
		s.notifyLocked()
		s.mu.Unlock()
		writeFault(w, f, true)
		return
	}
	var (
		res  result
		serr = perr
		msgs []string // response_metadata.messages of a refused payload
	)
	spec, known := methods[method]
	switch {
	case serr != "":
	case !known:
		serr = "unknown_method"
	default:
		serr = s.checkTokenLocked(spec.token, req)
		if serr != "" {
			break
		}
		if v := CheckCall(method, req.get, s.cfg.app); v != nil {
			s.violations = append(s.violations, *v)
			if serr, msgs = v.Error, v.Messages; serr == "" {
				res = result{} // silently ignored: ok, and nothing happens
			}
			break
		}
		res, serr = spec.fn(s, req)
	}
	call.Error = serr
	s.calls = append(s.calls, call)
	s.notifyLocked()
	s.mu.Unlock()

	if serr != "" {
		writeJSONStatus(w, http.StatusOK, errorBody(serr, msgs...))
		return
	}
	if res == nil {
		res = result{}
	}
	res["ok"] = true
	body, err := json.Marshal(res)
	if err != nil {
		writeJSONStatus(w, http.StatusOK, errorBody("internal_error"))
		return
	}
	writeJSONStatus(w, http.StatusOK, body)
}

// record appends a call made outside the API handler lock.
func (s *Server) record(c Call) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.notifyLocked()
	s.mu.Unlock()
}

// checkTokenLocked returns the Slack error for a missing or wrong token:
// a bot token is the default one or an installation's, which may name
// channels of its own team only (oauth.go).
func (s *Server) checkTokenLocked(kind tokenKind, r *apiRequest) string {
	if kind == needNone {
		return ""
	}
	e := checkToken(kind, r.token, s.cfg.botToken, s.cfg.appToken)
	if e != "invalid_auth" || kind != needBot {
		return e
	}
	in, e := s.installTokenLocked(r.token, r.now)
	if e != "" {
		return e
	}
	return s.crossTeamLocked(in, r.get("channel"))
}

// checkToken returns the Slack error for a missing or wrong token of kind.
func checkToken(kind tokenKind, token, bot, app string) string {
	want, other := bot, app
	if kind == needApp {
		want, other = other, want
	}
	switch token {
	case "":
		return "not_authed"
	case want:
		return ""
	case other:
		return "not_allowed_token_type"
	default:
		return "invalid_auth"
	}
}

// parseAPIRequest reads the form, query and JSON body of r. A body that
// cannot be parsed yields a Slack error code.
func parseAPIRequest(r *http.Request, method string, now time.Time) (*apiRequest, string) {
	req := &apiRequest{method: method, form: url.Values{}, now: now}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		req.token = auth
	}
	ctype, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ctype == "application/json" {
		raw, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
		if err != nil {
			return req, "invalid_json"
		}
		if len(strings.TrimSpace(string(raw))) > 0 {
			if err := json.Unmarshal(raw, &req.body); err != nil {
				return req, "invalid_json"
			}
		}
		req.form = r.URL.Query()
	} else {
		if err := r.ParseForm(); err != nil {
			return req, "invalid_form_data"
		}
		req.form = r.Form
	}
	if req.token == "" {
		req.token = req.get("token")
	}
	req.form.Del("token")
	delete(req.body, "token")
	return req, ""
}

// errorBody is Slack's error answer; messages go in
// response_metadata.messages, as Slack reports what in a payload broke
// its rules.
func errorBody(slackErr string, messages ...string) []byte {
	out := map[string]any{"ok": false, "error": slackErr}
	if len(messages) > 0 {
		out["response_metadata"] = map[string]any{"messages": messages}
	}
	body, _ := json.Marshal(out)
	return body
}

package fakeslack

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slacktest"
)

// Defaults of a new Server; each can be changed with an Option.
const (
	DefaultBotToken  = "xoxb-fake-bot-token"
	DefaultAppToken  = "xapp-fake-app-token"
	DefaultTeamID    = "T0FAKETEAM"
	DefaultTeamName  = "Fake Team"
	DefaultBotUserID = "U0FAKEBOT"
	DefaultBotID     = "B0FAKEBOT"
	DefaultBotName   = "agentbot"
	DefaultAppID     = "A0FAKEAPP"
	// DefaultPingInterval is how often the fake pings each websocket. slack-go's
	// socketmode client drops a connection that saw no ping for 30 s.
	DefaultPingInterval = 2 * time.Second
)

// ErrTimeout is returned (wrapped) by the Wait helpers when the condition did
// not become true in time.
var ErrTimeout = errors.New("fakeslack: timeout")

// Option configures a Server in New.
type Option func(*config)

type config struct {
	botToken, appToken      string
	teamID, teamName        string
	botUserID, botID, botNm string
	appID                   string
	pingInterval            time.Duration
	app                     AppKind
	// scopes are the bot token's granted scopes; nil grants every scope.
	scopes map[string]bool
	// clientID and clientSecret are the OAuth app's (oauth.go).
	clientID, clientSecret string
}

// WithScopes sets the bot token's granted scopes (default: every scope).
// Only what Slack does differently without a scope is modelled: see
// ScopeCustomize.
func WithScopes(scopes ...string) Option {
	return func(c *config) {
		c.scopes = map[string]bool{}
		for _, sc := range scopes {
			c.scopes[sc] = true
		}
	}
}

// granted reports whether the bot token holds scope.
func (c config) granted(scope string) bool { return c.scopes == nil || c.scopes[scope] }

// WithTokens sets the bot token (xoxb) every Web API method requires and the
// app-level token (xapp) apps.connections.open requires.
func WithTokens(botToken, appToken string) Option {
	return func(c *config) { c.botToken, c.appToken = botToken, appToken }
}

// WithTeam sets the workspace id and name reported by auth.test and envelopes.
func WithTeam(id, name string) Option {
	return func(c *config) { c.teamID, c.teamName = id, name }
}

// WithBotUser sets the bot's user id, bot id and user name.
func WithBotUser(userID, botID, name string) Option {
	return func(c *config) { c.botUserID, c.botID, c.botNm = userID, botID, name }
}

// WithAppID sets the app id reported in hello messages and envelopes.
func WithAppID(id string) Option {
	return func(c *config) { c.appID = id }
}

// WithPingInterval sets how often each websocket is pinged (default 2 s).
func WithPingInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.pingInterval = d
		}
	}
}

// WithAppKind sets the app's messaging experience (default AgentApp, as
// agentbot's manifest declares agent_view).
func WithAppKind(k AppKind) Option {
	return func(c *config) { c.app = k }
}

// Server is a running fake Slack. All methods are safe for concurrent use.
type Server struct {
	cfg  config
	tb   testing.TB
	ts   *slacktest.Server
	base string // http://127.0.0.1:port

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every state change
	closed  bool
	tsSeq   int64 // last message ts handed out, in microseconds
	idSeq   int

	calls     []Call
	faults    map[string][]fault
	messages  []Message           // message log, in order
	current   map[string]*Message // channel/ts -> current state
	order     []string            // keys of current, in creation order
	streams   []*Stream
	stops     []*Stream          // streams in the order chat.stopStream stopped them
	streamIdx map[string]*Stream // channel/ts -> stream
	refuse    string             // error for chat.startStream, "" to accept
	statuses  []Status
	sessions  []AgentSessionStatus // agents.sessions.setStatus calls (agents.go)
	agentSess map[string]string    // channel/thread -> title of the agent sessions setStatus created (agents.go)
	prompts   []SuggestedPrompts   // assistant.threads.setSuggestedPrompts (assistant.go)
	titles    []Title              // setTitle and agents.sessions.rename (assistant.go)
	// repliesCap caps conversations.replies pages (LimitReplies).
	repliesCap int

	violations []Violation // payloads the rules table refused (rules.go)
	allowViol  bool        // AllowViolations: a test sends them on purpose
	reactions  []Reaction
	uploads    []Upload
	pendingUp  map[string]*Upload // file id -> upload not yet completed
	files      map[string]*storedFile
	users      map[string]slack.User
	members    map[string][]string // channel -> members set by SetMembers (members.go)
	channels   map[string]Channel  // channel -> what SetChannel said (members.go)
	tickets    map[string]bool     // unused websocket tickets
	envs       []*Envelope
	envIdx     map[string]*Envelope
	acks       []Ack
	responses  map[string]responseTarget // response_url id -> where it answers

	// socketRefusal is the error apps.connections.open answers with
	// (RefuseSocketMode); "" when it opens connections.
	socketRefusal string

	// oauth holds the OAuth app and installations (oauth.go); nil until
	// first used.
	oauth *oauthState

	// The next expireTimes streams expire once they have had expireAfter
	// appends (ExpireStreamsAfterAppends).
	expireAfter, expireTimes int

	sock     sync.Mutex // serialises websocket writes, conns and pending
	conns    []*wsConn
	rr       int // round-robin cursor
	pending  []*Envelope
	connSeq  int
	connWG   sync.WaitGroup
	sockDown bool
	// httpOut, when set, delivers envelopes over HTTP instead
	// (DeliverHTTP, requests.go); deliveries are its requests.
	httpOut    *httpSender
	deliveries []Delivery
}

// New starts a fake Slack. With a non-nil tb it is closed in tb.Cleanup;
// otherwise call Close.
func New(tb testing.TB, opts ...Option) *Server {
	cfg := config{
		botToken: DefaultBotToken, appToken: DefaultAppToken,
		teamID: DefaultTeamID, teamName: DefaultTeamName,
		botUserID: DefaultBotUserID, botID: DefaultBotID, botNm: DefaultBotName,
		appID: DefaultAppID, pingInterval: DefaultPingInterval,
		clientID: "fake-client-id", clientSecret: "fake-client-secret",
	}
	for _, o := range opts {
		o(&cfg)
	}
	s := &Server{
		cfg:       cfg,
		tb:        tb,
		changed:   make(chan struct{}),
		tsSeq:     1_700_000_000_000_000,
		faults:    map[string][]fault{},
		current:   map[string]*Message{},
		streamIdx: map[string]*Stream{},
		pendingUp: map[string]*Upload{},
		files:     map[string]*storedFile{},
		users:     map[string]slack.User{},
		tickets:   map[string]bool{},
		envIdx:    map[string]*Envelope{},
	}
	s.ts = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/api/", s.serveAPI)
		c.Handle(linkPath, s.serveSocket)
		c.Handle(uploadPath, s.serveUpload)
		c.Handle(filesPath, s.serveDownload)
		c.Handle(signinPath, serveSignin)
		c.Handle(responsePath, s.serveResponseURL)
	})
	s.base = "http://" + s.ts.ServerAddr
	s.ts.Start()
	if tb != nil {
		tb.Helper()
		tb.Cleanup(s.Close)
		tb.Cleanup(s.reportViolations) // runs first: cleanups run last-in first-out
	}
	return s
}

// Close drops every websocket and stops the server. It is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.notifyLocked()
	s.mu.Unlock()

	s.sock.Lock()
	s.sockDown = true
	s.sock.Unlock()
	s.DropConnections()
	s.connWG.Wait()
	s.stopHTTP()
	s.ts.Stop()
}

// URL is the server's base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.base }

// APIURL is the Web API base to pass to slack.OptionAPIURL; it ends in "/api/".
func (s *Server) APIURL() string { return s.base + "/api/" }

// BotToken is the bot token the fake accepts for Web API calls.
func (s *Server) BotToken() string { return s.cfg.botToken }

// AppToken is the app-level token the fake accepts for apps.connections.open.
func (s *Server) AppToken() string { return s.cfg.appToken }

// TeamID is the fake workspace id.
func (s *Server) TeamID() string { return s.cfg.teamID }

// BotUserID is the bot's user id (auth.test user_id).
func (s *Server) BotUserID() string { return s.cfg.botUserID }

// BotID is the bot's bot id (auth.test bot_id).
func (s *Server) BotID() string { return s.cfg.botID }

// AppID is the fake app's id.
func (s *Server) AppID() string { return s.cfg.appID }

// Client returns a slack-go client with the fake's bot and app tokens and API
// URL; extra options are applied after those.
func (s *Server) Client(opts ...slack.Option) *slack.Client {
	all := append([]slack.Option{
		slack.OptionAppLevelToken(s.cfg.appToken),
		slack.OptionAPIURL(s.APIURL()),
	}, opts...)
	return slack.New(s.cfg.botToken, all...)
}

// NextTS hands out a fresh message timestamp ("1700000000.000100" and up);
// use it for user messages so they sort with the bot's.
func (s *Server) NextTS() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextTSLocked()
}

func (s *Server) nextTSLocked() string {
	s.tsSeq += 100
	return fmt.Sprintf("%d.%06d", s.tsSeq/1_000_000, s.tsSeq%1_000_000)
}

// nextIDLocked returns prefix followed by a fresh upper-case id.
func (s *Server) nextIDLocked(prefix string) string {
	s.idSeq++
	return fmt.Sprintf("%s0FAKE%04d", prefix, s.idSeq)
}

// notifyLocked wakes every waiter; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) notify() {
	s.mu.Lock()
	s.notifyLocked()
	s.mu.Unlock()
}

// WaitFor waits until cond returns true or timeout passes. cond is evaluated
// after every recorded change (calls, acks, connections), so it may use any
// accessor of the Server. The error wraps ErrTimeout.
func (s *Server) WaitFor(cond func() bool, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-timer.C:
			if cond() {
				return nil
			}
			return fmt.Errorf("%w: condition not met within %s", ErrTimeout, timeout)
		}
	}
}

// WaitMessages waits until the message log holds at least n entries and
// returns the log.
func (s *Server) WaitMessages(n int, timeout time.Duration) ([]Message, error) {
	err := s.WaitFor(func() bool { return len(s.Messages()) >= n }, timeout)
	msgs := s.Messages()
	if err != nil {
		return msgs, fmt.Errorf("want %d messages, have %d: %w", n, len(msgs), err)
	}
	return msgs, nil
}

// randomHex returns n random bytes hex-encoded.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// writeJSONStatus writes v as a JSON response with the given status.
func writeJSONStatus(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

package bot_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/model"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// rig is a running bot wired to a fake Slack and a fake model through the
// real socketmode, slack-go and go-openai clients, with a real bbolt store.
type rig struct {
	t     testing.TB
	slack *fakeslack.Server
	model *fakemodel.Server
	data  string
	st    *bolt.Store
	cat   *catalog.Catalog
	bot   *bot.Bot
	stop  context.CancelFunc
	done  chan error
	opts  rigOpts
	// requestURL serves the current bot's SlackHandler in HTTP mode.
	requestURL *httptest.Server
	handler    atomic.Pointer[http.Handler]
}

type rigOpts struct {
	bmad    []string
	bundles []string // bundle folders besides the repository's
	skills  string   // a shared skills folder
	mutate  func(*bot.Config)
	// mutateRig is mutate with the rig (its fake Slack), at every start.
	mutateRig func(*rig, *bot.Config)
	engine    func(*engine.Config)
	slack     []fakeslack.Option // how the fake Slack is set up
	// store, when set, is the store the bot sees in place of the bbolt
	// one (the engine still saves into the bbolt one).
	store func(*bolt.Store) bot.Store
	data  string // the data folder to open ("" for a fresh one)
	// http runs the bot in HTTP mode: Slack's requests come to its
	// request URL, signed, instead of over Socket Mode (default: the
	// mode inModes gave the test, else Socket Mode).
	http bool
	// delivery shapes the fake's HTTP delivery in HTTP mode.
	delivery fakeslack.HTTPOptions
}

// signingSecret is the test app's signing secret in HTTP mode.
const signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"

// modes holds the tests inModes runs in HTTP mode.
var modes sync.Map // testing.TB -> bool

// inModes runs f as two subtests, "socket" and "http": every rig f makes
// on the t it is given runs in that mode, so one scenario proves both
// (a rig made on a subtest of f's own runs in Socket Mode).
func inModes(t *testing.T, f func(t *testing.T)) {
	t.Run("socket", f)
	t.Run("http", func(t *testing.T) {
		modes.Store(t, true)
		t.Cleanup(func() { modes.Delete(t) })
		f(t)
	})
}

// repoRoot is the folder holding go.mod (see fixtures.RepoRoot).
func repoRoot(t testing.TB) string { t.Helper(); return fixtures.RepoRoot(t) }

func newRig(t testing.TB, o rigOpts) *rig {
	t.Helper()
	if v, ok := modes.Load(t); ok && v.(bool) {
		o.http = true
	}
	r := &rig{t: t, slack: fakeslack.New(t, o.slack...), model: fakemodel.NewTB(t), data: o.data, opts: o}
	if r.data == "" {
		r.data = filepath.Join(t.TempDir(), "data")
	}
	r.cat = catalog.Load(catalog.Options{Bundles: append([]string{fixtures.Bundles(t)}, o.bundles...), BMADRoots: o.bmad, Skills: o.skills})
	r.start()
	t.Cleanup(r.shutdown)
	return r
}

// start opens the store and runs a bot on it, as a process start would.
func (r *rig) start() {
	t := r.t
	st, err := bolt.Open(r.data)
	if err != nil {
		t.Fatal(err)
	}
	r.st = st
	ecfg := testEngineConfig(r.model, st, st, r.cat)
	if r.opts.engine != nil {
		r.opts.engine(&ecfg)
	}
	api := r.slack.Client()
	var bst bot.Store = st
	if r.opts.store != nil {
		bst = r.opts.store(st)
	}
	// One bot on its own bbolt store, as serve on bbolt: the sole replica.
	var sock *socketmode.Client
	secret := ""
	if r.opts.http {
		secret = signingSecret
	} else {
		sock = socketmode.New(api)
	}
	cfg := bot.Config{
		API: api, Socket: sock, SigningSecret: secret, Engine: engine.New(ecfg), Store: bst, Folders: storage.Folders{Dir: st.Dir()},
		Catalog: func() *catalog.Catalog { return r.cat }, ShutdownGrace: 5 * time.Second, SoleReplica: true,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if r.opts.mutate != nil {
		r.opts.mutate(&cfg)
	}
	if r.opts.mutateRig != nil {
		r.opts.mutateRig(r, &cfg)
	}
	b, err := bot.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.bot = b
	ctx, cancel := context.WithCancel(context.Background())
	r.stop, r.done = cancel, make(chan error, 1)
	go func() { r.done <- b.Run(ctx) }()
	if r.opts.http {
		r.serveRequests(b)
		return
	}
	r.waitFor("the bot to connect", func() bool { return b.Connected() && r.slack.Connected() > 0 })
}

// serveRequests serves b's request URL and, at the first start, has the
// fake Slack deliver there (url_verification first).
func (r *rig) serveRequests(b *bot.Bot) {
	h := b.SlackHandler()
	r.handler.Store(&h)
	r.waitFor("the bot to take requests", b.Connected)
	if r.requestURL != nil {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/slack/events", func(w http.ResponseWriter, req *http.Request) { (*r.handler.Load()).ServeHTTP(w, req) })
	r.requestURL = httptest.NewServer(mux)
	r.t.Cleanup(r.requestURL.Close)
	if err := r.slack.DeliverHTTP(r.requestURL.URL+"/slack/events", signingSecret, r.opts.delivery); err != nil {
		r.t.Fatal(err)
	}
}

// shutdown stops the bot and closes the store.
func (r *rig) shutdown() {
	if r.stop == nil {
		return
	}
	r.stop()
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Errorf("bot.Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		r.t.Error("bot did not stop")
	}
	r.st.Close()
	r.stop = nil
	if r.opts.http { // HTTP mode is proved only if Slack spoke over HTTP
		if n := r.slack.TotalConnections(); n != 0 {
			r.t.Errorf("HTTP mode: %d Socket Mode connections", n)
		}
		if len(r.slack.Envelopes()) > 0 && len(r.slack.Deliveries()) == 0 {
			r.t.Error("HTTP mode: envelopes sent, none delivered over HTTP")
		}
	}
}

// restart is a process restart on the same data directory.
func (r *rig) restart() {
	r.shutdown()
	r.start()
}

func (r *rig) waitFor(what string, cond func() bool) { r.t.Helper(); waitFor(r.t, what, cond) }

// waitFor polls cond until it holds, failing t after 15 seconds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sessionStore is what a test bot's engine keeps sessions and documents in.
type sessionStore interface {
	engine.Store
	engine.OutputStore
}

// testEngineConfig is the engine config of a test bot: the fake model m
// (retries without waiting), sessions and documents in st, the document
// folders of disk, and catalog cat.
func testEngineConfig(m *fakemodel.Server, st sessionStore, disk *bolt.Store, cat *catalog.Catalog) engine.Config {
	return engine.Config{
		Model: model.New(model.Config{APIKey: "k", BaseURL: m.URL(), Model: "m",
			Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}),
		Store:      st,
		Outputs:    st,
		Catalog:    func() *catalog.Catalog { return cat },
		OutputRoot: func(id string) string { d, _ := disk.OutputDir(id); return d },
		InputRoot:  func(id string) string { d, _ := disk.InputDir(id); return d },
	}
}

const (
	user    = "U0USER1"
	channel = "C0CHAN1"
)

// mention sends "@agentbot text" as a new channel message (or a thread reply).
func (r *rig) mention(text, thread string) (ts, envelope string) {
	ts = r.slack.NextTS()
	envelope = r.slack.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: user, Channel: channel,
		Text: "<@" + r.slack.BotUserID() + "> " + text, TimeStamp: ts, ThreadTimeStamp: thread})
	return ts, envelope
}

// reply sends a thread reply without a mention.
func (r *rig) reply(text, thread string) (ts, envelope string) {
	ts = r.slack.NextTS()
	envelope = r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: user, Channel: channel, ChannelType: "channel",
		Text: text, TimeStamp: ts, ThreadTimeStamp: thread})
	return ts, envelope
}

// botMessages are the bot's current messages in a thread (posts, updates
// applied, and streams), oldest first.
func (r *rig) botMessages(thread string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range r.slack.ThreadMessages(channel, thread) {
		if m.Kind != fakeslack.KindUser {
			out = append(out, m)
		}
	}
	return out
}

func (r *rig) waitBotMessages(thread string, n int) []fakeslack.Message {
	r.t.Helper()
	r.waitFor("bot messages", func() bool { return len(r.botMessages(thread)) >= n })
	return r.botMessages(thread)
}

// buttons lists the buttons of a message: action_id → value.
func buttons(t testing.TB, m fakeslack.Message) map[string]string {
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		t.Fatalf("blocks: %v", err)
	}
	out := map[string]string{}
	for _, b := range blocks {
		if b.Type == "actions" {
			for _, e := range b.Elements {
				out[e.ActionID] = e.Value
			}
		}
	}
	return out
}

// text is everything a message shows: its text, markdown blocks and stream.
func text(m fakeslack.Message) string { return m.Text + "\n" + m.MarkdownText() }

func has(t testing.TB, s, sub, what string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%s: %q not in %q", what, sub, s)
	}
}

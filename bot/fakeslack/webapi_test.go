package fakeslack

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
)

// slackErr returns the Slack error code of err, or "".
func slackErr(err error) string {
	if e, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		return e.Err
	}
	return ""
}

func TestAPIURLAndAuthTest(t *testing.T) {
	fake := New(t, WithTeam("T123", "Acme"), WithBotUser("U123", "B123", "helper"))
	if !strings.HasSuffix(fake.APIURL(), "/api/") || !strings.HasPrefix(fake.APIURL(), fake.URL()) {
		t.Errorf("APIURL = %q", fake.APIURL())
	}
	res, err := fake.Client().AuthTest()
	if err != nil {
		t.Fatal(err)
	}
	if res.TeamID != "T123" || res.UserID != "U123" || res.BotID != "B123" || res.User != "helper" || res.Team != "Acme" {
		t.Errorf("auth.test = %+v", res)
	}
}

func TestTokensAreChecked(t *testing.T) {
	fake := New(t)
	for _, tc := range []struct {
		name, token, want string
	}{
		{"missing", "", "not_authed"},
		{"wrong", "xoxb-wrong", "invalid_auth"},
		{"app token for a bot method", fake.AppToken(), "not_allowed_token_type"},
	} {
		api := slack.New(tc.token, slack.OptionAPIURL(fake.APIURL()))
		_, _, err := api.PostMessage("C1", slack.MsgOptionText("hi", false))
		if got := slackErr(err); got != tc.want {
			t.Errorf("%s: err = %v, want %s", tc.name, err, tc.want)
		}
	}
	// The bot token cannot open a Socket Mode connection.
	api := slack.New(fake.BotToken(), slack.OptionAppLevelToken(fake.BotToken()), slack.OptionAPIURL(fake.APIURL()))
	if _, _, err := api.StartSocketModeContext(t.Context()); slackErr(err) != "not_allowed_token_type" {
		t.Errorf("apps.connections.open with the bot token: %v", err)
	}
	if len(fake.Messages()) != 0 {
		t.Errorf("unauthenticated posts were recorded: %+v", fake.Messages())
	}
	calls := fake.Calls()
	if len(calls) != 4 || calls[0].Token != "" || calls[1].Token != "xoxb-wrong" || calls[0].Form.Has("token") {
		t.Errorf("calls = %+v", calls)
	}
}

func TestUnknownMethod(t *testing.T) {
	fake := New(t)
	_, err := fake.Client().GetTeamInfo()
	if slackErr(err) != "unknown_method" {
		t.Errorf("err = %v, want unknown_method", err)
	}
	if c := fake.CallsTo("team.info"); len(c) != 1 || c[0].Error != "unknown_method" {
		t.Errorf("calls = %+v", c)
	}
}

func TestPostUpdateDeleteEphemeral(t *testing.T) {
	fake := New(t)
	api := fake.Client()
	md := slack.NewMarkdownBlock("", "**Hello** world")
	ch, ts1, err := api.PostMessage("C1", slack.MsgOptionText("Hello world", false),
		slack.MsgOptionBlocks(md), slack.MsgOptionTS("1.000001"))
	if err != nil || ch != "C1" {
		t.Fatalf("post: %q %v", ch, err)
	}
	_, ts2, err := api.PostMessage("C1", slack.MsgOptionText("second", false), slack.MsgOptionTS("1.000001"))
	if err != nil {
		t.Fatal(err)
	}
	if ts1 == ts2 || ts1 >= ts2 || len(ts1) != len("1700000000.000100") {
		t.Errorf("timestamps %q, %q: want unique, increasing, Slack-shaped", ts1, ts2)
	}
	msgs := fake.Messages()
	if len(msgs) != 2 {
		t.Fatalf("messages = %+v", msgs)
	}
	m := msgs[0]
	if m.Kind != KindPost || m.Channel != "C1" || m.TS != ts1 || m.ThreadTS != "1.000001" || m.Text != "Hello world" ||
		m.MarkdownText() != "**Hello** world" || m.User != fake.BotUserID() {
		t.Errorf("message = %+v (markdown %q)", m, m.MarkdownText())
	}
	if types := m.BlockTypes(); len(types) != 1 || types[0] != "markdown" {
		t.Errorf("block types = %v", types)
	}

	if _, _, _, err := api.UpdateMessage("C1", ts2, slack.MsgOptionText("second, edited", false)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.DeleteMessage("C1", ts1); err != nil {
		t.Fatal(err)
	}
	if _, err := api.PostEphemeral("C1", "U9", slack.MsgOptionText("only you", false)); err != nil {
		t.Fatal(err)
	}
	msgs = fake.Messages()
	kinds := []MessageKind{KindPost, KindPost, KindUpdate, KindDelete, KindEphemeral}
	if len(msgs) != len(kinds) {
		t.Fatalf("messages = %+v", msgs)
	}
	for i, k := range kinds {
		if msgs[i].Kind != k {
			t.Errorf("message %d kind = %s, want %s", i, msgs[i].Kind, k)
		}
	}
	if msgs[4].User != "U9" || msgs[4].Text != "only you" {
		t.Errorf("ephemeral = %+v", msgs[4])
	}
	th := fake.ThreadMessages("C1", "1.000001")
	if len(th) != 1 || th[0].TS != ts2 || th[0].Text != "second, edited" {
		t.Errorf("thread = %+v", th)
	}
	if cur, ok := fake.Message("C1", ts1); !ok || !cur.Deleted {
		t.Errorf("deleted message state = %+v %v", cur, ok)
	}
	if _, _, _, err := api.UpdateMessage("C1", ts1, slack.MsgOptionText("x", false)); slackErr(err) != "message_not_found" {
		t.Errorf("update of a deleted message: %v", err)
	}
}

func TestMessageValidation(t *testing.T) {
	fake := New(t)
	fake.AllowViolations() // every case but the last breaks a rule on purpose
	api := fake.Client()
	for _, tc := range []struct {
		name string
		opts []slack.MsgOption
		want string
	}{
		{"no text", nil, "no_text"},
		{"markdown block over 12000", []slack.MsgOption{slack.MsgOptionBlocks(
			slack.NewMarkdownBlock("", strings.Repeat("é", MarkdownBlockLimit+1)))}, "invalid_blocks"},
		{"empty markdown block", []slack.MsgOption{slack.MsgOptionBlocks(slack.NewMarkdownBlock("", ""))}, "invalid_blocks"},
		{"text over 40000", []slack.MsgOption{slack.MsgOptionText(strings.Repeat("a", MaxTextChars+1), false)}, "msg_too_long"},
	} {
		_, _, err := api.PostMessage("C1", tc.opts...)
		if got := slackErr(err); got != tc.want {
			t.Errorf("%s: err = %v, want %s", tc.name, err, tc.want)
		}
	}
	// Exactly at the limit is fine.
	_, _, err := api.PostMessage("C1", slack.MsgOptionBlocks(
		slack.NewMarkdownBlock("", strings.Repeat("é", MarkdownBlockLimit))), slack.MsgOptionText("fb", false))
	if err != nil {
		t.Errorf("12000-character markdown block: %v", err)
	}
}

func TestRateLimitAndFailures(t *testing.T) {
	fake := New(t)
	api := fake.Client()
	fake.RateLimitNext("chat.postMessage", 2, 2500*time.Millisecond)
	for i := range 2 {
		_, _, err := api.PostMessage("C1", slack.MsgOptionText("hi", false))
		rl, ok := errors.AsType[*slack.RateLimitedError](err)
		if !ok || rl.RetryAfter != 3*time.Second {
			t.Fatalf("try %d: err = %#v, want RateLimitedError with RetryAfter 3s", i, err)
		}
	}
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatalf("after the rate limit: %v", err)
	}
	if n := len(fake.Messages()); n != 1 {
		t.Errorf("%d messages recorded, want 1", n)
	}
	if c := fake.CallsTo("chat.postMessage"); len(c) != 3 || c[0].Status != http.StatusTooManyRequests || c[2].Status != http.StatusOK {
		t.Errorf("calls = %+v", c)
	}

	fake.FailNext("chat.update", "cant_update_message")
	if _, _, _, err := api.UpdateMessage("C1", "1.0", slack.MsgOptionText("x", false)); slackErr(err) != "cant_update_message" {
		t.Errorf("FailNext: %v", err)
	}
	fake.FailHTTPNext("chat.postMessage", http.StatusServiceUnavailable)
	_, _, err := api.PostMessage("C1", slack.MsgOptionText("hi", false))
	if sc, ok := errors.AsType[slack.StatusCodeError](err); !ok || sc.Code != http.StatusServiceUnavailable {
		t.Errorf("FailHTTPNext: %#v", err)
	}
	// Faults apply to their method only.
	fake.FailNext("chat.delete", "message_not_found")
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("hi", false)); err != nil {
		t.Errorf("post with a chat.delete fault queued: %v", err)
	}
}

func TestStreams(t *testing.T) {
	fake := New(t)
	fake.AllowViolations() // a channel stream without its recipient is refused on purpose
	api := fake.Client()
	recipient := []slack.MsgOption{slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID(fake.TeamID())}

	_, _, err := api.StartStream("C1", slack.MsgOptionTS("1.000001"))
	if slackErr(err) != "invalid_arguments" {
		t.Errorf("channel stream without recipient: %v", err)
	}
	_, ts, err := api.StartStream("C1", append(recipient, slack.MsgOptionTS("1.000001"),
		slack.MsgOptionMarkdownText("Thinking"))...)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.AppendStream("C1", ts, slack.MsgOptionChunks(
		slack.NewTaskUpdateChunk("t1", "read_file"), slack.NewMarkdownTextChunk(" hard"))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.AppendStream("C1", ts, slack.MsgOptionMarkdownText("...")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.StopStream("C1", ts, slack.MsgOptionMarkdownText(" done")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.AppendStream("C1", ts, slack.MsgOptionMarkdownText("late")); slackErr(err) != "message_not_in_streaming_state" {
		t.Errorf("append after stop: %v", err)
	}
	streams := fake.Streams()
	if len(streams) != 1 {
		t.Fatalf("streams = %+v", streams)
	}
	st := streams[0]
	if st.Channel != "C1" || st.TS != ts || st.ThreadTS != "1.000001" || st.RecipientUserID != "U1" ||
		st.Text != "Thinking hard... done" || st.Appends != 2 || !st.Stopped {
		t.Errorf("stream = %+v", st)
	}
	if len(st.Chunks) != 2 || st.Chunks[0].Type != "task_update" || st.Chunks[0].Method != "chat.appendStream" ||
		!strings.Contains(string(st.Chunks[0].JSON), `"title":"read_file"`) {
		t.Errorf("chunks = %+v", st.Chunks)
	}
	if th := fake.ThreadMessages("C1", "1.000001"); len(th) != 1 || th[0].Kind != KindStream || th[0].Text != st.Text {
		t.Errorf("thread = %+v", th)
	}

	// An expired stream refuses appends; chat.update still works on it.
	_, ts2, err := api.StartStream("D1", slack.MsgOptionTS("1.000002"))
	if err != nil {
		t.Fatal(err)
	}
	fake.ExpireStreams()
	if _, _, err := api.AppendStream("D1", ts2, slack.MsgOptionMarkdownText("x")); slackErr(err) != "message_not_in_streaming_state" {
		t.Errorf("append to expired stream: %v", err)
	}
	if _, _, _, err := api.UpdateMessage("D1", ts2, slack.MsgOptionText("final", false)); err != nil {
		t.Errorf("update of expired stream message: %v", err)
	}

	fake.RefuseStartStream("feature_not_enabled")
	if _, _, err := api.StartStream("D1", slack.MsgOptionTS("1.000003")); slackErr(err) != "feature_not_enabled" {
		t.Errorf("refused start: %v", err)
	}
	fake.RefuseStartStream("")
	if _, _, err := api.StartStream("D1", slack.MsgOptionTS("1.000003")); err != nil {
		t.Errorf("start after re-enabling: %v", err)
	}
	if _, _, err := api.AppendStream("D1", "9.9", slack.MsgOptionMarkdownText("x")); slackErr(err) != "message_not_found" {
		t.Errorf("append to unknown stream: %v", err)
	}
}

func TestAssistantStatus(t *testing.T) {
	fake := New(t)
	fake.AllowViolations() // a call without thread_ts is refused on purpose
	api := fake.Client()
	err := api.SetAssistantThreadsStatus(slack.AssistantThreadsSetStatusParameters{
		ChannelID: "C1", ThreadTS: "1.000001", Status: "is reading files…", LoadingMessages: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := api.SetAssistantThreadsStatus(slack.AssistantThreadsSetStatusParameters{ChannelID: "C1", ThreadTS: "1.000001"}); err != nil {
		t.Fatal(err)
	}
	if err := api.SetAssistantThreadsStatus(slack.AssistantThreadsSetStatusParameters{ChannelID: "C1"}); slackErr(err) != "invalid_arguments" {
		t.Errorf("status without thread: %v", err)
	}
	st := fake.Statuses()
	if len(st) != 2 || st[0].Status != "is reading files…" || st[0].ThreadTS != "1.000001" ||
		len(st[0].LoadingMessages) != 2 || st[1].Status != "" {
		t.Errorf("statuses = %+v", st)
	}
}

func TestUploadFileFlow(t *testing.T) {
	fake := New(t)
	api := fake.Client()
	content := "# Brief\n\nÉtude ✅\n"
	sum, err := api.UploadFile(slack.UploadFileParameters{
		Filename: "brief.md", Title: "Product brief", Content: content, FileSize: len(content),
		Channel: "C1", ThreadTimestamp: "1.000001", InitialComment: "Saved brief.md",
	})
	if err != nil {
		t.Fatal(err)
	}
	ups := fake.Uploads()
	if len(ups) != 1 {
		t.Fatalf("uploads = %+v", ups)
	}
	u := ups[0]
	if u.FileID != sum.ID || u.Filename != "brief.md" || u.Title != "Product brief" || string(u.Content) != content ||
		u.Length != len(content) || u.ChannelID != "C1" || u.ThreadTS != "1.000001" || u.InitialComment != "Saved brief.md" {
		t.Errorf("upload = %+v", u)
	}
	var methods []string
	for _, c := range fake.Calls() {
		methods = append(methods, c.Method)
	}
	if got := strings.Join(methods, ","); got != "files.getUploadURLExternal,upload,files.completeUploadExternal" {
		t.Errorf("calls = %s", got)
	}
	// The shared file can be read back.
	f, _, _, err := api.GetFileInfo(sum.ID, 0, 0)
	if err != nil || f.Name != "brief.md" || f.Size != len(content) {
		t.Fatalf("files.info = %+v, %v", f, err)
	}
	var buf bytes.Buffer
	if err := api.GetFile(f.URLPrivateDownload, &buf); err != nil || buf.String() != content {
		t.Errorf("download = %q, %v", buf.String(), err)
	}

	// Completing an upload that never got its bytes fails.
	u2, err := api.GetUploadURLExternalContext(t.Context(), slack.GetUploadURLExternalParameters{FileName: "x.md", FileSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, err = api.CompleteUploadExternalContext(t.Context(), slack.CompleteUploadExternalParameters{
		Files: []slack.FileSummary{{ID: u2.FileID}}, Channel: "C1"})
	if slackErr(err) != "file_not_found" {
		t.Errorf("complete without bytes: %v", err)
	}
	fake.FailHTTPNext(MethodUpload, http.StatusInternalServerError)
	_, err = api.UploadFile(slack.UploadFileParameters{Filename: "y.md", Content: "y", FileSize: 1, Channel: "C1"})
	if sc, ok := errors.AsType[slack.StatusCodeError](err); !ok || sc.Code != http.StatusInternalServerError {
		t.Errorf("upload with injected 500: %v", err)
	}
	if len(fake.Uploads()) != 1 {
		t.Errorf("failed uploads were recorded: %+v", fake.Uploads())
	}
}

func TestAddFileDownloadNeedsBotToken(t *testing.T) {
	fake := New(t)
	f := fake.AddFile("notes.txt", []byte("hello\n"))
	if !strings.HasPrefix(f.URLPrivateDownload, fake.URL()) || f.Size != 6 || f.Mimetype == "" {
		t.Fatalf("file = %+v", f)
	}
	var buf bytes.Buffer
	if err := fake.Client().GetFile(f.URLPrivateDownload, &buf); err != nil || buf.String() != "hello\n" {
		t.Fatalf("download = %q, %v", buf.String(), err)
	}
	stranger := slack.New("xoxb-someone-else", slack.OptionAPIURL(fake.APIURL()))
	buf.Reset()
	err := stranger.GetFile(f.URLPrivate, &buf)
	if err == nil || !strings.Contains(err.Error(), "sign-in") {
		t.Errorf("download without the bot token: %v (got %q)", err, buf.String())
	}
	info, _, _, err := fake.Client().GetFileInfo(f.ID, 0, 0)
	if err != nil || info.URLPrivateDownload != f.URLPrivateDownload {
		t.Errorf("files.info = %+v, %v", info, err)
	}
	if _, _, _, err := fake.Client().GetFileInfo("F404", 0, 0); slackErr(err) != "file_not_found" {
		t.Errorf("files.info of unknown file: %v", err)
	}
	dl := fake.CallsTo(MethodDownload)
	if len(dl) != 2 || dl[0].Status != http.StatusOK || dl[1].Status != http.StatusFound {
		t.Errorf("download calls = %+v", dl)
	}
}

func TestRepliesReactionsUsers(t *testing.T) {
	fake := New(t)
	api := fake.Client()
	parent := fake.NextTS()
	fake.SendEvent(map[string]any{"type": "app_mention", "channel": "C1", "user": "U1", "text": "hi", "ts": parent})
	if _, _, err := api.PostMessage("C1", slack.MsgOptionText("hello", false), slack.MsgOptionTS(parent)); err != nil {
		t.Fatal(err)
	}
	msgs, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Text != "hi" || msgs[0].User != "U1" || msgs[1].Text != "hello" || msgs[1].User != fake.BotUserID() {
		t.Errorf("replies = %+v", msgs)
	}
	hist, err := api.GetConversationHistory(&slack.GetConversationHistoryParameters{ChannelID: "C1"})
	if err != nil || len(hist.Messages) != 1 || hist.Messages[0].Timestamp != parent {
		t.Errorf("history = %+v, %v", hist, err)
	}

	ref := slack.NewRefToMessage("C1", parent)
	if err := api.AddReaction("eyes", ref); err != nil {
		t.Fatal(err)
	}
	if err := api.AddReaction("eyes", ref); slackErr(err) != "already_reacted" {
		t.Errorf("second reaction: %v", err)
	}
	if rx := fake.Reactions(); len(rx) != 1 || rx[0].Name != "eyes" || rx[0].Timestamp != parent {
		t.Errorf("reactions = %+v", rx)
	}

	fake.AddUser(slack.User{ID: "U1", Name: "ada", RealName: "Ada Lovelace"})
	u, err := api.GetUserInfo("U1")
	if err != nil || u.RealName != "Ada Lovelace" {
		t.Errorf("users.info = %+v, %v", u, err)
	}
	u, err = api.GetUserInfo("U2")
	if err != nil || u.ID != "U2" || u.Name == "" {
		t.Errorf("users.info of unknown user = %+v, %v", u, err)
	}
}

func TestWaitMessages(t *testing.T) {
	fake := New(t)
	go func() {
		time.Sleep(20 * time.Millisecond)
		_, _, _ = fake.Client().PostMessage("C1", slack.MsgOptionText("later", false))
	}()
	msgs, err := fake.WaitMessages(1, wait)
	if err != nil || len(msgs) != 1 || msgs[0].Text != "later" {
		t.Fatalf("WaitMessages = %+v, %v", msgs, err)
	}
	if _, err := fake.WaitMessages(2, 10*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Errorf("WaitMessages(2) err = %v, want ErrTimeout", err)
	}
}

func TestBadRequests(t *testing.T) {
	fake := New(t)
	post := func(path, ctype, body string, auth bool) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, fake.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ctype)
		if auth {
			req.Header.Set("Authorization", "Bearer "+fake.BotToken())
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	if code, body := post("/api/chat.postMessage", "application/json", "{", true); code != 200 || !strings.Contains(body, `"error":"invalid_json"`) {
		t.Errorf("malformed JSON body: %d %s", code, body)
	}
	if code, _ := post("/upload/F404", "text/plain", "x", true); code != http.StatusNotFound {
		t.Errorf("upload to an unknown file: %d", code)
	}
	if code, _ := post("/response/nope", "application/json", `{"text":"x"}`, false); code != http.StatusNotFound {
		t.Errorf("unknown response_url: %d", code)
	}
	// A websocket ticket is good once, and only tickets handed out work.
	_, wsURL, err := fake.Client().StartSocketModeContext(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	bogus := strings.Replace(wsURL, "ticket=", "ticket=x", 1)
	for i, tc := range []struct {
		url string
		ok  bool
	}{{bogus, false}, {wsURL, true}, {wsURL, false}} {
		conn, resp, err := websocket.DefaultDialer.Dial(tc.url, nil)
		if conn != nil {
			_ = conn.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("dial %d: err %v, want ok=%v", i, err, tc.ok)
		}
		if !tc.ok && (resp == nil || resp.StatusCode != http.StatusUnauthorized) {
			t.Errorf("dial %d: response %v, want 401", i, resp)
		}
	}
	if err := fake.WaitFor(func() bool { return fake.TotalConnections() == 1 }, wait); err != nil {
		t.Errorf("%d websockets accepted, want 1 (one valid ticket): %v", fake.TotalConnections(), err)
	}
}

// StoppedSince hands each stopped stream out once, in the order of the
// stops, whatever order the streams started in.
func TestStoppedSince(t *testing.T) {
	fake := New(t)
	api := fake.Client()
	opts := func(thread string) []slack.MsgOption {
		return []slack.MsgOption{slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID(fake.TeamID()), slack.MsgOptionTS(thread)}
	}
	_, first, err := api.StartStream("C1", opts("1.000001")...)
	if err != nil {
		t.Fatal(err)
	}
	_, second, err := api.StartStream("C1", opts("1.000002")...)
	if err != nil {
		t.Fatal(err)
	}
	if got, n := fake.StoppedSince(0); len(got) != 0 || n != 0 {
		t.Fatalf("before any stop: %d streams, %d stops", len(got), n)
	}
	if _, _, err := api.StopStream("C1", second, slack.MsgOptionMarkdownText("two")); err != nil {
		t.Fatal(err)
	}
	got, n := fake.StoppedSince(0)
	if n != 1 || len(got) != 1 || got[0].TS != second || got[0].Text != "two" || !got[0].Stopped {
		t.Fatalf("after one stop: %+v, %d", got, n)
	}
	if _, _, err := api.StopStream("C1", first, slack.MsgOptionMarkdownText("one")); err != nil {
		t.Fatal(err)
	}
	got, n = fake.StoppedSince(n)
	if n != 2 || len(got) != 1 || got[0].TS != first {
		t.Fatalf("the second stop alone: %+v, %d", got, n)
	}
	if got, n = fake.StoppedSince(99); len(got) != 0 || n != 2 {
		t.Fatalf("past the end: %+v, %d", got, n)
	}
}

// RefuseSocketMode makes apps.connections.open refuse the app-level
// token with Slack's error, every time, until it is cleared.
func TestRefuseSocketMode(t *testing.T) {
	fake := New(t)
	api := slack.New(fake.BotToken(), slack.OptionAppLevelToken(fake.AppToken()), slack.OptionAPIURL(fake.APIURL()))
	fake.RefuseSocketMode("not_allowed_token_type")
	for range 2 {
		if _, _, err := api.StartSocketModeContext(t.Context()); slackErr(err) != "not_allowed_token_type" {
			t.Fatalf("apps.connections.open while refused: %v", err)
		}
	}
	fake.RefuseSocketMode("")
	if _, url, err := api.StartSocketModeContext(t.Context()); err != nil || url == "" {
		t.Fatalf("apps.connections.open once accepted again: %q, %v", url, err)
	}
}

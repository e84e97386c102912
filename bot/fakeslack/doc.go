// Package fakeslack is a local fake Slack for tests, in the spirit of
// net/http/httptest: the Web API methods agentbot uses plus the Socket Mode
// websocket, driven by the real slack-go clients.
//
// A test starts a Server, points slack-go at it and drives it from both ends:
//
//	fake := fakeslack.New(t)
//	api := fake.Client() // slack.New(BotToken, OptionAppLevelToken(AppToken), OptionAPIURL(fake.APIURL()))
//	sm := socketmode.New(api)
//	go sm.RunContext(ctx)
//	fake.WaitFor(func() bool { return fake.Connected() == 1 }, 5*time.Second)
//	env := fake.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: "U1", Channel: "C1",
//		Text: "<@" + fake.BotUserID() + "> hi", TimeStamp: fake.NextTS()})
//	latency, err := fake.WaitAck(env, 3*time.Second)
//	msgs, err := fake.WaitMessages(1, 5*time.Second)
//
// Every Web API call is recorded as a Call; typed views (Messages, Streams,
// Uploads, Statuses, AgentSessionStatuses, Reactions) show what the bot did.
// Faults are injected per method: RateLimitNext answers HTTP 429 with
// Retry-After (slack-go turns it into *slack.RateLimitedError), FailNext
// answers {"ok":false,"error":...}.
//
// Every Web API call is checked against a rules table built from Slack's
// documentation (rules.go, each rule citing its source): block counts per
// message and view, text lengths, the markdown blocks' cumulative limit,
// total block text, button and actions limits, escaping of < > & in
// mrkdwn and text, required arguments, and the agent-app rule of
// assistant.threads.setSuggestedPrompts. A payload that breaks a rule gets
// Slack's error (invalid_blocks with the JSON pointers in
// response_metadata.messages, msg_blocks_too_long, invalid_arguments, ...)
// and is recorded as a Violation; at the end of the test that owns the
// Server, any violation fails it, unless the test called AllowViolations.
// CheckCall runs the table without a server.
//
// The server is built on slacktest.NewTestServer. slacktest.Server.Handle keeps
// the FIRST handler registered for a pattern and silently ignores later ones,
// and NewTestServer registers its own defaults after running the Binders it is
// given, so our routes are registered through a Binder. They live under /api/
// (what slack-go expects of an API URL) and a few other prefixes, none of
// which slacktest uses; slacktest's own root-level RTM routes (its /ws handler
// blocks on an unbuffered channel, its chat.postMessage gives second-resolution
// timestamps) are therefore never reached. The Socket Mode websocket is our own
// handler on top of slacktest.Websocket's upgrader.
package fakeslack

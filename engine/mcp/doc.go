// Package mcp gives agentbot agents tools served by Model Context Protocol
// servers, through the official go-sdk.
//
// A config file (AGENTBOT_MCP_CONFIG) names the servers:
//
//	max_result_bytes: 65536            # cap on one tool result (default 64 KiB)
//	servers:
//	  - name: files                    # [a-z0-9_-], no "__", at most 32 characters
//	    transport: stdio
//	    command: /usr/local/bin/files-mcp
//	    args: [--root, /data]
//	    env:
//	      API_KEY: {env: FILES_API_KEY}  # by reference only
//	    timeout: 20s                   # connect, list, and each call between signs of life (default 30s)
//	    max_timeout: 10m               # a call that reports progress, in all (default 10m)
//	    include: ["read_*", list]      # path.Match globs on the server's tool names
//	    exclude: [read_secret]
//	    policy: {read_dangerous: ask, "*": auto}   # first match wins
//	  - name: github
//	    transport: http                # streamable HTTP
//	    url: https://mcp.example.com/mcp
//	    headers:
//	      Authorization: "Bearer ${GITHUB_TOKEN}"   # identity static (the default with headers)
//	  - name: linear
//	    transport: http
//	    url: https://mcp.linear.app/mcp
//	    identity: service              # user (default without headers), service or static
//	    oauth:                         # all optional
//	      client_id: agentbot          # pre-registered at the authorization server
//	      client_secret: {env: LINEAR_CLIENT_SECRET}
//	      scopes: [read, write]        # instead of the ones the server asks for
//	  - name: jira
//	    transport: http
//	    url: https://mcp.example.org/mcp
//	    identity: service
//	    oauth:
//	      client_id: agentbot
//	      client_key: {env: JIRA_CLIENT_KEY}   # a PEM private key instead of a secret (private_key_jwt)
//	      client_key_id: agentbot-2026         # optional: the kid the server knows the key by
//
// An HTTP server's identity says who its calls act as. static: the
// configured headers, as they are. service: one identity for everyone,
// whose OAuth tokens (MCP authorization, package oauth) come from
// Options.Authorizer: a request is sent without a token until the server
// challenges it (401), then the Authorizer authorizes and the request is
// sent again with the token, which oauth.Transport puts only on requests
// to the server's resource; a 403 insufficient_scope is stepped up, at
// most twice per request. With a client secret and an authorization
// server that offers the client credentials grant, OAuthAuthorizer gets a
// service token with it. A client_key (a PEM ECDSA P-256/384/521, RSA or
// Ed25519 private key, checked when the config loads) replaces the secret:
// each token request then carries a new assertion signed with it
// (private_key_jwt, RFC 7523), for the client credentials grant as for a
// pre-registered client's code exchange and refresh. user: each person
// connects their own account, and each gets a session of their own, whose
// requests carry the tokens Options.Authorizer keeps for that person (see
// below); without an Authorizer, such a server that asks for
// authorization is unavailable, saying so, and one that asks for none
// works, a session per person.
//
// Secrets are only ever written as references to environment variables; a
// literal header or env value is refused. A server with any problem (missing
// variable, bad glob, unknown key...) is left out with a Problem and the
// others keep working. A stdio server gets PATH, HOME, LANG, LC_ALL, TMPDIR
// and TZ of our process plus its configured env, nothing else; it runs in its
// own process group, which Manager.Close kills.
//
// A Manager keeps one session per server and identity: one for a stdio,
// static or service server, and one per person for an identity user
// server. Sessions connect and list their tools in the background (Warm
// starts the shared ones; a turn's listing starts any missing), and a
// turn waits at most Options.ListBudget (150ms) for them:
// a server that is slow, hanging or down is served from its last known
// tool list, with a Problem giving its age, or is left out with a Problem
// marked Unavailable, which SessionTools tells the user once per session.
// A server starting cold (it has never listed its tools in this process
// and has not failed) is waited for up to its timeout instead, so the
// first turn of a fresh process gets the tools of a stdio server that
// takes a second or two to start.
//
// At an identity user server, a turn acts as the person whose message
// started it (SessionTools' who: in Slack the workspace and user, in the
// terminal "terminal" and $USER), never as anyone else. The server's tool
// list is shared: listed on the session of the first person who needs
// it, refreshed in the background when the server says it changed, and
// bound to each person who lists it, at once, without waiting for their
// session, which opens on their first call. A person is connected when
// the Authorizer has a token for them that the server has not refused;
// at a server that wants authorization (it challenged a request, or was
// sent a token), the tools of a person who is not connected report
// NeedsConnection, so the engine's call waits for them to connect (a
// connect gate). Before anyone has listed the server, such a person is
// offered one tool instead, "server__connect_account", which waits the
// same way and then lists the tools. A call whose token the server
// refuses, and that the Authorizer cannot renew, says the account must
// be connected again, and the person's next call waits for that. A
// person's session unused for Options.IdleTimeout (10m) closes; at most
// Options.MaxSessions (256) of them live at once, the least recently used
// idle one closed to make room, never one with a call under way.
//
// A server that crashes, hangs past its timeout or cannot be reached gives
// the model an error Result, and its session is reconnected: at once the
// first time, then after a jittered exponential backoff. A call that
// times out is cancelled; a server that still answers a ping keeps its
// session (and its state), one that does not is restarted and the result
// says what a stdio server loses. A call that an HTTP server refused
// because it restarted and lost our session (404, or 400 "Bad Request")
// never ran: it is sent once more on a new session.
//
// Each server tool becomes a Tool named "server__tool" with the server's
// input schema; its Policy is the first matching config rule, else auto
// for a readOnlyHint tool, else ask. A tool that must be called as an MCP
// task (execution.taskSupport "required") is left out with a Problem: the
// go-sdk client cannot call tasks. A server that offers resources also
// gets "server__read_resource" (resources/read by URI), so the model can
// follow the resource links of results, which keep their name, title,
// description and MIME type. Images, audio and binary resources in
// results become Result.Files, which the engine saves as documents.
// Calls carry a progress token; each notifications/progress becomes a
// status line for the user and gives the call its timeout again, up to
// max_timeout. Messages up to DefaultMaxFrameBytes (128 MiB) are read, far
// over the go-sdk's 16 MiB; a result is then capped to max_result_bytes
// with a note. The server's secret values are scrubbed from results,
// errors and logs.
//
// A change of a server's tool list (notifications/tools/list_changed) is
// seen at once: over HTTP it comes on the standalone SSE stream, which the
// client opens after initializing. A stream that breaks, standalone or the
// answer to a call, is reconnected by the go-sdk with Last-Event-ID after
// the server's retry delay.
//
// The client declares only what agentbot supports: elicitation in form
// mode when Options.Elicit is set, and neither roots nor sampling. A
// server's request for input in the middle of a call (elicitation/create)
// goes to Options.Elicit with the server's message, requested schema
// (SchemaDefaults gives the values a form starts with) and the identity
// of the session asking (at an identity user server, the person the call
// acts as); the answer is
// accept with values, decline or cancel. The call's timeout does not run
// while the person is asked.
//
// The official MCP conformance suite's client scenarios run against
// engine/mcp/conformance/client, a Manager, in TestConformance;
// docs/development.md lists those left failing.
package mcp

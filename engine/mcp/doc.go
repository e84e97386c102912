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
//	    timeout: 20s                   # connect and each call (default 30s)
//	    include: ["read_*", list]      # path.Match globs on the server's tool names
//	    exclude: [read_secret]
//	    policy: {read_dangerous: ask, "*": auto}   # first match wins
//	  - name: github
//	    transport: http                # streamable HTTP
//	    url: https://mcp.example.com/mcp
//	    headers:
//	      Authorization: "Bearer ${GITHUB_TOKEN}"
//
// Secrets are only ever written as references to environment variables; a
// literal header or env value is refused. A server with any problem (missing
// variable, bad glob, unknown key...) is left out with a Problem and the
// others keep working. A stdio server gets PATH, HOME, LANG, LC_ALL, TMPDIR
// and TZ of our process plus its configured env, nothing else; it runs in its
// own process group, which Manager.Close kills.
//
// A Manager keeps one session per server, connected on first use. A server
// that crashes, hangs past its timeout or cannot be reached gives the model
// an error Result, and its session is reconnected: at once the first time,
// then after a jittered exponential backoff. Each server tool becomes a Tool
// named "server__tool" with the server's input schema; its Policy is the
// first matching config rule, else auto for a readOnlyHint tool, else ask.
// The server's secret values are scrubbed from results, errors and logs.
//
// Over HTTP the standalone SSE stream is not opened, so a change of a
// server's tool list is seen on the next reconnect; over stdio it is seen at
// once (notifications/tools/list_changed).
package mcp

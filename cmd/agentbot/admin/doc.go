// Package admin holds agentbot's operator commands other than serve, chat
// and check: agents (the agents found, as a table or JSON), sessions and
// projects (list, show, export...), backup, migrate, rotate-key,
// connections (list and revoke stored MCP connections; VaultConnections
// serves the bot's /agent connections and disconnect from the same Vault)
// and health. Package main parses their flags and settings and wires them.
package admin

// Package mcp gives agentbot agents tools served by Model Context Protocol
// servers: a config file names the servers (stdio or streamable HTTP), a
// Manager keeps one session per server, and each server tool becomes a Tool
// named "server__tool" that the engine can offer to the model.
package mcp

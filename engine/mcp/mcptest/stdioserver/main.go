// Command stdioserver is the mcptest MCP server over stdio, for tests.
package main

import (
	"context"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine/mcp/mcptest"
)

func main() {
	if err := mcptest.NewServer(true, nil).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

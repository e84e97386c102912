package mcp

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The sniffer passes every byte on unchanged and shows the lines that
// carry taskSupport, whole, however the reads split them, with the
// "data:" of a server-sent event removed; longer lines pass unseen.
func TestSnifferFindsTaskOnlyTools(t *testing.T) {
	list := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"quick","inputSchema":{"type":"object"}},` +
		`{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},` +
		`{"name":"either","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}}`
	big := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", sniffMax) + `\"taskSupport\""}]}}`
	for _, tc := range []struct{ name, in string }{
		{"stdio", list + "\n" + big + "\n"},
		{"sse", "event: message\ndata: " + list + "\n\n"},
		{"json body", list},
	} {
		c := &conn{}
		var lines int
		s := &sniffer{r: iotest.OneByteReader(strings.NewReader(tc.in)), note: func(l []byte) { lines++; c.noteTaskTools(l) }}
		out, err := io.ReadAll(s)
		if err != nil || !bytes.Equal(out, []byte(tc.in)) {
			t.Fatalf("%s: passed on %d of %d bytes (%v)", tc.name, len(out), len(tc.in), err)
		}
		_, slow := c.taskOnly.Load("slow")
		_, quick := c.taskOnly.Load("quick")
		_, either := c.taskOnly.Load("either")
		if lines != 1 || !slow || quick || either {
			t.Errorf("%s: %d lines shown; slow %v quick %v either %v", tc.name, lines, slow, quick, either)
		}
	}
}

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"unicode"

	"agentbot/engine/transcript"
)

// MaxToolDefinitions is the most tool definitions one request carries:
// OpenAI refuses more ("tools: A list of tools the model may call. ... A
// max of 128 functions are supported",
// https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools).
const MaxToolDefinitions = 128

// findToolsName is the tool a turn with too many external tools offers to
// search the ones left out.
const findToolsName = "find_tools"

// findShown bounds the tools one find_tools call returns.
const findShown = 20

// externals are the session's external tools this turn: all of them by
// name, and the ones offered to the model, in order. find_tools may change
// the offered ones while other calls run, under mu. The zero value has
// none.
type externals struct {
	mu     sync.Mutex
	byName map[string]ExternalTool
	list   []ExternalTool
}

// lookup returns the external tool a call names, if it is one.
func (x *externals) lookup(name string) (ExternalTool, bool) {
	if _, builtin := lookupTool(name); builtin {
		return ExternalTool{}, false
	}
	t, ok := x.byName[name]
	return t, ok
}

// gate is a call that waits: its index among the calls, and what it
// waits for (a transcript.Gate kind); ask is set when its tool asks for
// approval.
type gate struct {
	i    int
	kind string
	ask  bool
}

// gates returns the calls that wait: calls of an external tool whose
// person must connect first (a connect gate), or whose policy is ask.
// Built-in tools never wait.
func (x *externals) gates(ctx context.Context, calls []transcript.ToolCall) []gate {
	var out []gate
	for i, tc := range calls {
		t, ok := x.lookup(tc.Function.Name)
		if !ok {
			continue
		}
		switch {
		case t.NeedsConnection != nil && t.NeedsConnection(ctx):
			out = append(out, gate{i: i, kind: transcript.GateConnect, ask: t.ask()})
		case t.ask():
			out = append(out, gate{i: i, kind: transcript.GateApproval, ask: true})
		}
	}
	return out
}

// offer returns the external tools a turn offers: all of them when
// they fit beside the built-in tools under MaxToolDefinitions; else the
// ones called lately and the most relevant to the user's message, plus
// find_tools, which offers more from the next step on. The others can
// still be called by name.
// builtins is how many built-in tools the turn offers; log says so when
// the external tools are more than fit.
func (x *externals) offer(builtins int, input string, s *Session, log *slog.Logger, all []ExternalTool) []ExternalTool {
	room := MaxToolDefinitions - builtins
	if len(all) <= room {
		return all
	}
	room-- // find_tools
	if room <= 0 {
		return []ExternalTool{x.findTools(all, 0)}
	}
	query := input
	for i := len(s.Messages) - 1; i >= 0 && query == ""; i-- {
		if m := s.Messages[i]; m.Role == transcript.RoleUser {
			query = m.Content
		}
	}
	recent := recentCalls(s.Messages, 40)
	picked := rankTools(all, words(query), recent)[:room]
	log.Info("more external tools than a request carries; offering a choice", "session", s.ID,
		"tools", len(all), "offered", room, "limit", MaxToolDefinitions)
	return append(inOrder(all, picked), x.findTools(all, room))
}

// offered are the external tools offered now (find_tools may change them
// while other calls run).
func (x *externals) offered() []ExternalTool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.list
}

// findTools is the find_tools tool of a turn whose external tools are all.
func (x *externals) findTools(all []ExternalTool, room int) ExternalTool {
	return ExternalTool{
		Name: findToolsName, Policy: PolicyAuto,
		Description: fmt.Sprintf("Search the tools of this conversation's MCP servers: there are %d, more than can be offered at once, "+
			"so only some are. Give words for what you need to do; the best matching tools are listed and offered from your next step on.", len(all)),
		Schema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"words for what the tool should do"}},"required":["query"]}`),
		Call: func(_ context.Context, args json.RawMessage, _ ExternalCall) (ExternalReply, error) {
			var a struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Query) == "" {
				return ExternalReply{Text: `find_tools needs {"query": "words for what the tool should do"}`, IsError: true}, nil
			}
			q := words(a.Query)
			found := rankTools(all, q, nil)
			var b strings.Builder
			var hits []ExternalTool
			for _, t := range found {
				if len(hits) == findShown || score(t, q) == 0 {
					break
				}
				hits = append(hits, t)
				fmt.Fprintf(&b, "- %s: %s\n", t.Name, CutUTF8(strings.Join(strings.Fields(t.Description), " "), 200))
			}
			if len(hits) == 0 {
				return ExternalReply{Text: "no tool matches " + fmt.Sprintf("%q", a.Query) + "; try other words"}, nil
			}
			x.offerMore(hits, room)
			return ExternalReply{Text: "These tools are offered from your next step on:\n" + b.String()}, nil
		},
	}
}

// offerMore puts hits among the offered external tools, first, keeping
// room of them besides find_tools.
func (x *externals) offerMore(hits []ExternalTool, room int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	next := append([]ExternalTool(nil), hits...)
	seen := map[string]bool{}
	for _, t := range hits {
		seen[t.Name] = true
	}
	var find ExternalTool
	for _, t := range x.list {
		switch {
		case t.Name == findToolsName:
			find = t
		case !seen[t.Name]:
			seen[t.Name] = true
			next = append(next, t)
		}
	}
	if len(next) > room {
		next = next[:room]
	}
	x.list = append(next, find)
}

// rankTools sorts a copy of tools by relevance to the query words, the
// recently called first; ties keep their order.
func rankTools(tools []ExternalTool, q []string, recent map[string]int) []ExternalTool {
	out := append([]ExternalTool(nil), tools...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := recent[out[i].Name], recent[out[j].Name]
		if ri != rj {
			return ri > rj
		}
		return score(out[i], q) > score(out[j], q)
	})
	return out
}

// score is how well t matches the query words: 3 for a word of its name,
// 1 for a word of its description.
func score(t ExternalTool, q []string) int {
	name, desc := words(t.Name), words(t.Description)
	n := 0
	for _, w := range q {
		switch {
		case contains(name, w):
			n += 3
		case contains(desc, w):
			n++
		}
	}
	return n
}

func contains(ws []string, w string) bool {
	for _, x := range ws {
		if x == w || len(w) >= 4 && strings.HasPrefix(x, w) {
			return true
		}
	}
	return false
}

// words are the lower-cased words of s of three letters or more.
func words(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := f[:0]
	for _, w := range f {
		if len(w) >= 3 {
			out = append(out, w)
		}
	}
	return out
}

// recentCalls ranks the tools called in the last n messages: the later
// the call, the higher.
func recentCalls(msgs []transcript.Message, n int) map[string]int {
	out := map[string]int{}
	from := max(0, len(msgs)-n)
	for i := from; i < len(msgs); i++ {
		for _, tc := range msgs[i].ToolCalls {
			out[tc.Function.Name] = i + 1
		}
	}
	return out
}

// inOrder returns the tools of picked in the order of all.
func inOrder(all, picked []ExternalTool) []ExternalTool {
	in := map[string]bool{}
	for _, t := range picked {
		in[t.Name] = true
	}
	var out []ExternalTool
	for _, t := range all {
		if in[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

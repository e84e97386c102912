package engine

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"agentbot/engine/memlog"
)

// ToolMemlog is the name of the tool that keeps a skill's memory log.
const ToolMemlog = "memlog"

// MemlogResult is memlog's answer, as memlog.py prints it.
type MemlogResult struct {
	OK      bool   `json:"ok"`
	Memlog  string `json:"memlog"`
	Entries int    `json:"entries"`
}

// Failure is "" for a write that worked.
func (MemlogResult) Failure() string { return "" }

type memlogArgs struct {
	Command   string   `json:"command"`
	Workspace string   `json:"workspace"`
	Path      string   `json:"path"`
	Fields    []string `json:"fields"`
	Text      string   `json:"text"`
	Type      string   `json:"type"`
	By        string   `json:"by"`
	Key       string   `json:"key"`
	Value     *string  `json:"value"`
}

// memlogTool is the native memlog.py: init, append and set on a run's
// .memlog.md, with the script's exact file format.
var memlogTool = define(Tool{
	Name:        ToolMemlog,
	Description: "memlog.py, native: keep a run's append-only log {workspace}/.memlog.md in memlog.py's format. init (fields k=v; fails if it exists), append (text, type, by) or set (key, value).",
	Schema:      `{"type":"object","properties":{"command":{"type":"string","enum":["init","append","set"]},"workspace":{"type":"string"},"path":{"type":"string","description":"the log file, instead of workspace"},"fields":{"type":"array","items":{"type":"string"}},"text":{"type":"string"},"type":{"type":"string"},"by":{"type":"string"},"key":{"type":"string"},"value":{"type":"string"}},"required":["command"],"additionalProperties":false}`,
	Rule:        "`uv run …/memlog.py CMD --workspace W …` is the memlog tool with the same arguments.",
	Offered:     func(o Offer) bool { return o.Skills },
	Summary: summarize(func(r MemlogResult, _ int) string {
		return fmt.Sprintf("memlog %s (%d entries)", r.Memlog, r.Entries)
	}),
}, `{"command": "append", "workspace": "{planning_artifacts}/prds/prd-x", "type": "decision", "text": "..."}`,
	func(a memlogArgs) string { return "memlog " + a.Command },
	func(ctx context.Context, env *toolEnv, a memlogArgs) (ToolResult, error) {
		return env.memlog(ctx, a)
	})

// memlog runs one memlog command on the log under /outputs.
func (env *toolEnv) memlog(ctx context.Context, a memlogArgs) (ToolResult, error) {
	file := a.Path
	switch {
	case a.Path != "" && a.Workspace != "":
		return nil, errors.New("give workspace or path, not both")
	case a.Workspace != "":
		file = path.Join(strings.TrimRight(a.Workspace, "/"), memlog.FileName)
	case a.Path == "":
		return nil, errors.New("memlog needs workspace (the run folder) or path")
	}
	now := env.e.cfg.Now()
	transform := func(old []byte) ([]byte, error) { return memlogEdit(a, file, old, now) }
	if d := env.docs; d != nil {
		res, err := d.Edit(ctx, file, true, transform)
		if err != nil {
			return nil, err
		}
		data, _, err := env.sb.ReadFile(res.Path)
		if err != nil {
			return nil, err
		}
		return MemlogResult{OK: true, Memlog: res.Path, Entries: memlog.Entries(data)}, nil
	}
	env.editMu.Lock()
	defer env.editMu.Unlock()
	old, err := env.readOutput(file)
	if err != nil {
		return nil, err
	}
	data, err := transform(old)
	if err != nil {
		return nil, err
	}
	virtual, err := env.sb.WriteFile(file, data)
	if err != nil {
		return nil, err
	}
	if env.out != nil {
		if err := env.out.keep(ctx, virtual, data, nil, ""); err != nil {
			return nil, err
		}
	}
	return MemlogResult{OK: true, Memlog: virtual, Entries: memlog.Entries(data)}, nil
}

// memlogEdit applies one memlog command to the log's text (nil: missing).
func memlogEdit(a memlogArgs, file string, old []byte, now time.Time) ([]byte, error) {
	var data []byte
	var err error
	switch a.Command {
	case "init":
		if old != nil {
			return nil, fmt.Errorf("%s already exists; use append/set to update it", file)
		}
		fields := make([]memlog.Field, 0, len(a.Fields))
		for _, f := range a.Fields {
			fl, err := memlog.ParseField(f)
			if err != nil {
				return nil, err
			}
			fields = append(fields, fl)
		}
		data = memlog.Init(fields, now)
	case "append", "set":
		if old == nil {
			return nil, fmt.Errorf("%s does not exist; run init first", file)
		}
		if a.Command == "append" {
			if strings.TrimSpace(a.Text) == "" {
				return nil, errors.New("append needs text")
			}
			data, err = memlog.Append(old, a.Text, a.Type, a.By, now)
		} else {
			if a.Key == "" || a.Value == nil {
				return nil, errors.New("set needs key and value")
			}
			data, err = memlog.Set(old, a.Key, *a.Value, now)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
	default:
		return nil, fmt.Errorf("unknown memlog command %q; use init, append or set", a.Command)
	}
	return data, nil
}

package chat

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"agentbot/engine"
	"agentbot/engine/form"
)

// askMu keeps the questions of parallel tool calls from mixing on the
// terminal.
var askMu sync.Mutex

// Ask asks the terminal's person a tool's question (engine.Config.Ask):
// each field in turn, its default in brackets (an empty line keeps it),
// "/decline" or "/cancel" at any field ends the question so. A value
// that does not read as its field's type is asked again. The end of the
// input cancels.
func (t *Terminal) Ask(ctx context.Context, _ *engine.Session, q engine.Question) (engine.Answer, error) {
	fields, err := form.Fields(q.Schema)
	if err != nil {
		return engine.Answer{}, err
	}
	askMu.Lock()
	defer askMu.Unlock()
	fmt.Fprintf(t.out, "\n  ? %s asks: %s\n  (an empty line keeps the value in brackets; /decline or /cancel to answer no)\n", q.Source, q.Message)
	values := map[string]any{}
	for _, f := range fields {
		v, action, ok := t.askField(ctx, f)
		switch {
		case !ok:
			return engine.Answer{Action: engine.AnswerCancel}, ctx.Err()
		case action != "":
			return engine.Answer{Action: action}, nil
		case v != nil:
			values[f.Name] = v
		}
	}
	return engine.Answer{Action: engine.AnswerAccept, Values: values}, nil
}

// askField reads one field until it reads as its type; action is set when
// the person declined or cancelled, ok false at the end of the input.
func (t *Terminal) askField(ctx context.Context, f form.Field) (value any, action string, ok bool) {
	for ctx.Err() == nil {
		fmt.Fprintf(t.out, "    %s%s: ", fieldLabel(f), fieldDefault(f))
		line, ok := t.in.Next(ctx)
		if !ok {
			return nil, "", false
		}
		raw := strings.TrimSpace(line)
		if !t.interactive {
			fmt.Fprintln(t.out, raw)
		}
		switch raw {
		case "/decline":
			return nil, engine.AnswerDecline, true
		case "/cancel":
			return nil, engine.AnswerCancel, true
		case "":
			if f.Default != nil {
				return f.Default, "", true
			}
			if !f.Required {
				return nil, "", true
			}
			fmt.Fprintf(t.out, "    ! %s is required\n", f.Name)
			continue
		}
		v, err := f.Parse(raw)
		if err == nil {
			return v, "", true
		}
		fmt.Fprintf(t.out, "    ! %v\n", err)
	}
	return nil, "", false
}

// fieldLabel names a field and what it takes.
func fieldLabel(f form.Field) string {
	label := f.Name
	if f.Title != "" {
		label = f.Title
	}
	kind := f.Type
	if f.Type == "enum" {
		kind = strings.Join(f.Options, "|")
	}
	if f.Type == "boolean" {
		kind = "true|false"
	}
	s := fmt.Sprintf("%s (%s", label, kind)
	if f.Required {
		s += ", required"
	}
	return s + ")"
}

// fieldDefault shows a field's default, if any.
func fieldDefault(f form.Field) string {
	if f.Default == nil {
		return ""
	}
	return fmt.Sprintf(" [%v]", f.Default)
}

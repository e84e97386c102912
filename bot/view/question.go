package view

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine"
	"agentbot/engine/form"
)

// The action ids (before ":") of a question's buttons; their value is a
// QuestionValue.
const (
	ActionAnswer  = "ask-accept"
	ActionDecline = "ask-decline"
	ActionCancel  = "ask-cancel"
)

// QuestionValue is what a question's buttons carry: the session, the
// question's id and the person it is for.
type QuestionValue struct {
	Key    string `json:"k"`
	ID     string `json:"q"`
	Person string `json:"p"`
}

// QuestionMessage is the ephemeral message that asks the person a tool's
// question: its message, one input per field (defaults filled in), and
// Send, Decline and Cancel.
func QuestionMessage(v QuestionValue, q engine.Question, fields []form.Field) []slack.MsgOption {
	value, _ := json.Marshal(v)
	md := fmt.Sprintf("❓ `%s` asks you, in the middle of a tool call:\n%s", q.Source, slackmd.EscapeText(slackmd.Shorten(q.Message, 2500)))
	blocks := []slack.Block{slackmd.Block(md)}
	for _, f := range fields {
		blocks = append(blocks, inputBlock(v.ID, f))
	}
	send := slack.NewButtonBlockElement(ActionAnswer+":"+v.ID, string(value), slack.NewTextBlockObject(slack.PlainTextType, "Send", true, false))
	send.Style = slack.StylePrimary
	decline := slack.NewButtonBlockElement(ActionDecline+":"+v.ID, string(value), slack.NewTextBlockObject(slack.PlainTextType, "Decline", true, false))
	cancel := slack.NewButtonBlockElement(ActionCancel+":"+v.ID, string(value), slack.NewTextBlockObject(slack.PlainTextType, "Cancel", true, false))
	blocks = append(blocks, slack.NewActionBlock("ask-"+v.ID, send, decline, cancel))
	return []slack.MsgOption{slack.MsgOptionText(q.Source+" asks you a question", false), slack.MsgOptionBlocks(blocks...)}
}

// FieldBlockID is the block id of a field's input in question id's form.
func FieldBlockID(id, name string) string { return "ask-" + id + "-" + name }

// inputBlock is a field's input: a plain text input for strings and
// numbers (a number input is for modals only:
// https://docs.slack.dev/reference/block-kit/block-elements), radio
// buttons for booleans and short enums, a select for longer ones.
func inputBlock(id string, f form.Field) slack.Block {
	label := f.Title
	if label == "" {
		label = f.Name
	}
	var hint *slack.TextBlockObject
	if f.Description != "" {
		hint = slack.NewTextBlockObject(slack.PlainTextType, slackmd.Shorten(f.Description, 150), false, false)
	}
	action := "v"
	var el slack.BlockElement
	switch f.Type {
	case "boolean":
		yes := slack.NewOptionBlockObject("true", slack.NewTextBlockObject(slack.PlainTextType, "Yes", false, false), nil)
		no := slack.NewOptionBlockObject("false", slack.NewTextBlockObject(slack.PlainTextType, "No", false, false), nil)
		r := slack.NewRadioButtonsBlockElement(action, yes, no)
		if b, ok := f.Default.(bool); ok {
			r.InitialOption = map[bool]*slack.OptionBlockObject{true: yes, false: no}[b]
		}
		el = r
	case "enum":
		var opts []*slack.OptionBlockObject
		var initial *slack.OptionBlockObject
		for i, o := range f.Options {
			title := o
			if i < len(f.Titles) && f.Titles[i] != "" {
				title = f.Titles[i]
			}
			opt := slack.NewOptionBlockObject(o, slack.NewTextBlockObject(slack.PlainTextType, slackmd.Shorten(title, 75), false, false), nil)
			opts = append(opts, opt)
			if d, ok := f.Default.(string); ok && d == o {
				initial = opt
			}
		}
		sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, slack.NewTextBlockObject(slack.PlainTextType, "Choose", false, false), action, opts...)
		sel.InitialOption = initial
		el = sel
	default:
		in := slack.NewPlainTextInputBlockElement(slack.NewTextBlockObject(slack.PlainTextType, f.Type, false, false), action)
		if f.Default != nil {
			in.InitialValue = fmt.Sprint(f.Default)
		}
		el = in
	}
	b := slack.NewInputBlock(FieldBlockID(id, f.Name), slack.NewTextBlockObject(slack.PlainTextType, slackmd.Shorten(label, 150), false, false), hint, el)
	b.Optional = !f.Required
	return b
}

// FormValues reads the answer to question id's form from a click's state:
// each field's value, typed as its schema says. An error names the first
// field that is missing or does not read as its type.
func FormValues(id string, fields []form.Field, state *slack.BlockActionStates) (map[string]any, error) {
	out := map[string]any{}
	for _, f := range fields {
		raw := ""
		if state != nil {
			a := state.Values[FieldBlockID(id, f.Name)]["v"]
			raw = strings.TrimSpace(a.Value)
			if a.SelectedOption.Value != "" {
				raw = a.SelectedOption.Value
			}
		}
		if raw == "" {
			if f.Required {
				return nil, fmt.Errorf("%s is required", f.Name)
			}
			continue
		}
		v, err := f.Parse(raw)
		if err != nil {
			return nil, err
		}
		out[f.Name] = v
	}
	return out, nil
}

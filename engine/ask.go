package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Question is what a tool asks, in the middle of one of its calls, of the
// person the call acts for (an MCP server's elicitation): a message and a
// form, a JSON object schema whose properties are strings, numbers,
// integers, booleans or enums, each perhaps with a default.
type Question struct {
	// Source names who asks (the MCP server's name).
	Source string
	// Message is what is asked, in the asker's words.
	Message string
	// Schema is the form's JSON object schema.
	Schema json.RawMessage
}

// The actions of an Answer.
const (
	AnswerAccept  = "accept"  // the person filled in the form: Values holds it
	AnswerDecline = "decline" // the person said no
	AnswerCancel  = "cancel"  // the person dismissed it without choosing
)

// Answer is the person's answer to a Question.
type Answer struct {
	// Action is AnswerAccept, AnswerDecline or AnswerCancel.
	Action string
	// Values are the form's values by property name, with AnswerAccept.
	Values map[string]any
}

// ErrNobodyToAsk is the error of a question where nobody can answer (no
// Config.Ask, or a session without a person).
var ErrNobodyToAsk = errors.New("there is nobody to ask")

// asker is the Ask of one call of tool t in a turn of s: the question goes
// to Config.Ask for the turn's person, and the call's status says it
// waits for them.
func (env *toolEnv) asker(tool, callID string) func(ctx context.Context, q Question) (Answer, error) {
	return func(ctx context.Context, q Question) (Answer, error) {
		if env.e.cfg.Ask == nil || env.s.Person == "" {
			return Answer{}, ErrNobodyToAsk
		}
		if env.emit != nil {
			env.emit(Event{Kind: EventToolStart, Tool: tool, CallID: callID, Status: "waiting for your answer to " + q.Source})
		}
		return env.e.cfg.Ask(ctx, env.s, q)
	}
}

// FormField is one property of a question's form.
type FormField struct {
	Name, Title, Description string
	// Type is "string", "number", "integer", "boolean" or "enum".
	Type string
	// Options are an enum's values, and their titles.
	Options, Titles []string
	Default         any
	Required        bool
}

// maxFields bounds the fields of a form (a message holds 50 blocks).
const maxFields = 20

// FormFields reads a question's schema: one Field per property, required ones
// first, then by name. An error for a schema that is not an object of
// properties.
func FormFields(schema json.RawMessage) ([]FormField, error) {
	var s struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type        string   `json:"type"`
			Title       string   `json:"title"`
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
			EnumNames   []string `json:"enumNames"`
			OneOf       []struct {
				Const string `json:"const"`
				Title string `json:"title"`
			} `json:"oneOf"`
			Default any `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil || s.Type != "object" {
		return nil, fmt.Errorf("the form is not a JSON object schema")
	}
	if len(s.Properties) > maxFields {
		return nil, fmt.Errorf("the form has %d fields; at most %d fit in a message", len(s.Properties), maxFields)
	}
	var out []FormField
	for name, p := range s.Properties {
		f := FormField{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Default: p.Default}
		switch {
		case len(p.Enum) > 0:
			f.Type, f.Options, f.Titles = "enum", p.Enum, p.EnumNames
		case len(p.OneOf) > 0:
			f.Type = "enum"
			for _, o := range p.OneOf {
				f.Options, f.Titles = append(f.Options, o.Const), append(f.Titles, o.Title)
			}
		}
		switch f.Type {
		case "string", "number", "integer", "boolean", "enum":
		default:
			return nil, fmt.Errorf("field %s has a type a form cannot ask (%q)", name, p.Type)
		}
		for _, r := range s.Required {
			f.Required = f.Required || r == name
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Required != out[j].Required {
			return out[i].Required
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Parse reads raw (what a person typed or chose) as the field's type.
func (f FormField) Parse(raw string) (any, error) {
	switch f.Type {
	case "boolean":
		return raw == "true", nil
	case "number":
		n, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%s must be a number", f.Name)
		}
		return n, nil
	case "integer":
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s must be a whole number", f.Name)
		}
		return n, nil
	case "enum":
		for _, o := range f.Options {
			if o == raw {
				return raw, nil
			}
		}
		return nil, fmt.Errorf("%s must be one of %s", f.Name, strings.Join(f.Options, ", "))
	}
	return raw, nil
}

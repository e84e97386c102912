// Package form reads the forms tools ask people to fill in (an MCP
// server's elicitation): a JSON object schema of strings, numbers,
// integers, booleans and enums, each perhaps with a default; and what a
// person typed or chose, as each field's type.
package form

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Field is one property of a form.
type Field struct {
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

// Fields reads a question's schema: one Field per property, required ones
// first, then by name. An error for a schema that is not an object of
// properties.
func Fields(schema json.RawMessage) ([]Field, error) {
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
	var out []Field
	for name, p := range s.Properties {
		f := Field{Name: name, Title: p.Title, Description: p.Description, Type: p.Type, Default: p.Default}
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
func (f Field) Parse(raw string) (any, error) {
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

package form

import (
	"encoding/json"
	"strings"
	"testing"
)

// A schema reads as its fields, required first; values read as their
// field's type or say what is wrong; a schema a form cannot ask is refused.
func TestFields(t *testing.T) {
	fs, err := Fields(json.RawMessage(`{"type":"object","required":["title"],"properties":{
		"title":{"type":"string"},"count":{"type":"integer"},"ok":{"type":"boolean","default":true},
		"color":{"type":"string","enum":["red","blue"]},"size":{"type":"string","oneOf":[{"const":"s","title":"Small"}]}}}`))
	if err != nil || len(fs) != 5 || fs[0].Name != "title" || !fs[0].Required {
		t.Fatalf("fields = %+v, %v", fs, err)
	}
	by := map[string]Field{}
	for _, f := range fs {
		by[f.Name] = f
	}
	if v, err := by["count"].Parse("3"); err != nil || v != int64(3) {
		t.Fatalf("count 3 = %v, %v", v, err)
	}
	if _, err := by["count"].Parse("three"); err == nil || !strings.Contains(err.Error(), "whole number") {
		t.Fatalf("count three: %v", err)
	}
	if _, err := by["color"].Parse("green"); err == nil {
		t.Fatal("an enum took a value it does not list")
	}
	if v, _ := by["ok"].Parse("true"); v != true {
		t.Fatalf("ok = %v", v)
	}
	if by["size"].Type != "enum" || by["size"].Titles[0] != "Small" {
		t.Fatalf("oneOf = %+v", by["size"])
	}
	for _, bad := range []string{`not json`, `{"type":"array"}`, `{"type":"object","properties":{"f":{"type":"object"}}}`} {
		if _, err := Fields(json.RawMessage(bad)); err == nil {
			t.Errorf("%s was read as a form", bad)
		}
	}
}

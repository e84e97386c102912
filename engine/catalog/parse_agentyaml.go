package catalog

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// ParseAgentYAML parses a *.agent.yaml source (BMAD v6): agent.metadata,
// persona (principles as a string or a list), critical_actions, menu[] and
// prompts[]. A menu trigger "CP or fuzzy match on create-prd" gives Code
// "CP" and Trigger "create-prd"; a "[CP] " description label is split off.
func ParseAgentYAML(path string, data []byte) (*Agent, error) {
	root, err := decodeYAML(data)
	if err != nil {
		return nil, err
	}
	ag := mapGet(root, "agent")
	if ag == nil {
		return nil, fmt.Errorf("%w: no top-level agent key", ErrNotAgent)
	}
	if n := deref(ag); n == nil || n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("agent: want a mapping, found %s", kindName(n))
	}
	md := mapGet(ag, "metadata")
	a := &Agent{
		ID:          fileStem(path),
		Name:        scalar(mapGet(md, "name")),
		Title:       scalar(mapGet(md, "title")),
		Icon:        scalar(mapGet(md, "icon")),
		Module:      scalar(mapGet(md, "module")),
		Description: scalar(mapGet(md, "description")),
		Path:        path,
		Format:      FormatAgentYAML,
		EntryPoint:  true,
	}
	if a.Description == "" {
		a.Description = scalar(mapGet(md, "capabilities"))
	}
	p := mapGet(ag, "persona")
	a.Persona = Persona{
		Role:               text(mapGet(p, "role")),
		Identity:           text(mapGet(p, "identity")),
		CommunicationStyle: text(mapGet(p, "communication_style")),
		Principles:         text(mapGet(p, "principles")),
	}
	a.Activation = texts(mapGet(ag, "critical_actions"))
	a.Rules = texts(mapGet(ag, "rules"))
	a.Greeting = text(mapGet(ag, "greeting"))
	for _, n := range seq(mapGet(ag, "prompts")) {
		a.Prompts = append(a.Prompts, Prompt{ID: scalar(mapGet(n, "id")), Content: text(mapGet(n, "content"))})
	}
	for _, n := range seq(mapGet(ag, "menu")) {
		it := newMenuItem(scalar(mapGet(n, "trigger")), text(mapGet(n, "description")))
		for _, kv := range pairs(n) {
			it.setHandler(scalar(kv[0]), text(kv[1]))
		}
		a.Menu = append(a.Menu, it)
	}
	if err := checkAgent(a); err != nil {
		return nil, err
	}
	return a, nil
}

// seq returns a sequence's items, or nil when n is not a sequence.
func seq(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// kindName names a node's kind for error messages.
func kindName(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return "a scalar"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "something else"
}

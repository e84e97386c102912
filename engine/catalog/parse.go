package catalog

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrNotAgent means a file holds no agent definition at all: no <agent>
// element, no agent YAML. Discovery skips such files when it scans folders
// (a README or a sidecar document) and reports them when a manifest or a
// bundle names them.
var ErrNotAgent = errors.New("not an agent file")

// ErrEmptyAgent means a file has an agent definition that defines nothing
// usable: no name, persona, activation or menu.
var ErrEmptyAgent = errors.New("agent defines no name, persona, activation or menu")

// ParseAgent parses an agent file in any known format, detected from its
// name and content. path is recorded in Agent.Path and gives the default ID
// (the file name without extensions); it is not read.
func ParseAgent(path string, data []byte) (*Agent, error) {
	f, err := DetectFormat(path, data)
	if err != nil {
		return nil, err
	}
	switch f {
	case FormatAgentYAML:
		return ParseAgentYAML(path, data)
	case FormatV4:
		return ParseV4(path, data)
	case FormatXMLCmds:
		return ParseXMLCmds(path, data)
	default:
		return ParseXMLV6(path, data)
	}
}

// DetectFormat tells which agent format a file is in, from its name and
// content. A file that holds no agent is ErrNotAgent.
func DetectFormat(path string, data []byte) (Format, error) {
	base := strings.ToLower(filepath.Base(path))
	if strings.HasSuffix(base, ".agent.yaml") || strings.HasSuffix(base, ".agent.yml") {
		return FormatAgentYAML, nil
	}
	_, body := splitFrontmatter(string(data))
	if _, ok := v4Block(body); ok {
		return FormatV4, nil
	}
	if region, ok := agentRegion(body); ok {
		if hasTag(region, "cmds") || hasTag(region, "critical-actions") {
			return FormatXMLCmds, nil
		}
		return FormatXMLV6, nil
	}
	if strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml") {
		if root, err := decodeYAML(data); err == nil && mapGet(root, "agent") != nil {
			return FormatAgentYAML, nil
		}
		return "", fmt.Errorf("%w: no top-level agent key", ErrNotAgent)
	}
	return "", fmt.Errorf("%w: no <agent> element or agent YAML block", ErrNotAgent)
}

// hasTag reports whether s contains a start tag named name.
func hasTag(s, name string) bool {
	open := "<" + name
	for off := 0; ; {
		i := strings.Index(s[off:], open)
		if i < 0 {
			return false
		}
		j := off + i + len(open)
		if j == len(s) || strings.IndexByte(" \t\r\n>/", s[j]) >= 0 {
			return true
		}
		off = j
	}
}

// checkAgent refuses an agent that defines nothing a person could use.
func checkAgent(a *Agent) error {
	p := a.Persona
	if a.Name == "" && len(a.Menu) == 0 && len(a.Activation) == 0 &&
		p.Role == "" && p.Identity == "" && p.CommunicationStyle == "" && p.Principles == "" {
		return ErrEmptyAgent
	}
	return nil
}

// fileStem returns a file's name without directory and agent extensions:
// "bmad/bmm/agents/pm.md" → "pm", "pm.agent.yaml" → "pm".
func fileStem(path string) string {
	base := path
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	lower := strings.ToLower(base)
	for _, ext := range []string{".agent.yaml", ".agent.yml", ".agent.xml", ".agent.md", ".md", ".xml", ".yaml", ".yml"} {
		if strings.HasSuffix(lower, ext) {
			return base[:len(base)-len(ext)]
		}
	}
	return base
}

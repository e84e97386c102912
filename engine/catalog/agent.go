// Package catalog turns files on disk into agents a person can pick: bundle
// directories with bundle.yaml, and real BMAD installs, source trees and v4
// trees. Every agent format parses into the same Agent.
package catalog

// Format names the file format an agent was parsed from.
type Format string

// The agent formats the catalog understands.
const (
	// FormatXMLCmds is XML inside markdown with <critical-actions> and <cmds><c>
	// (BMAD v6.0.0-alpha.0 and the spec bundles).
	FormatXMLCmds Format = "xml-cmds"
	// FormatXMLV6 is a compiled v6 agent with <activation>, <menu-handlers>,
	// <rules> and <menu><item>.
	FormatXMLV6 Format = "xml-v6"
	// FormatAgentYAML is a *.agent.yaml source (BMAD v6.0.0).
	FormatAgentYAML Format = "agent-yaml"
	// FormatV4 is a v4 markdown agent with a YAML block.
	FormatV4 Format = "v4-yaml"
)

// Agent is one parsed agent, whatever its source format.
type Agent struct {
	// ID is the short, unique id people type (pm, analyst, cis/storyteller).
	ID          string
	Name        string
	Title       string
	Icon        string
	Description string
	// Source is "bundle" or "module".
	Source string
	// Module is the bundle's name or the BMAD module (bmm, cis, core).
	Module string
	// Path is the agent file on disk.
	Path   string
	Format Format
	// EntryPoint agents are offered to people; the others stay loadable.
	EntryPoint bool

	Persona Persona
	// Activation holds the activation steps or critical actions, in order.
	Activation []string
	// Handlers is the text of <menu-handlers>, when the agent has one.
	Handlers string
	Rules    []string
	Prompts  []Prompt
	// Greeting is the agent's own greeting text, when it defines one.
	Greeting string
	Menu     []MenuItem
	// Dependencies are v4 dependencies by kind (tasks, templates, ...).
	Dependencies map[string][]string

	// Home is where the agent's paths resolve.
	Home *Home
}

// Persona is who the agent is.
type Persona struct {
	Role               string
	Identity           string
	CommunicationStyle string
	Principles         string
}

// Prompt is a named prompt an action="#id" menu item can point to.
type Prompt struct {
	ID      string
	Content string
}

// MenuItem is one entry of an agent's menu.
type MenuItem struct {
	// Cmd is the command as written: "*create-prd", "CP or fuzzy match on create-prd".
	Cmd string
	// Trigger is the bare command people type, without "*": "create-prd".
	Trigger string
	// Code is the short code ("CP") when the cmd or label carries one.
	Code string
	// Description is the text shown, without a "[CP] " label prefix.
	Description      string
	Workflow         string
	Exec             string
	Tmpl             string
	Data             string
	Action           string
	ValidateWorkflow string
}

// Home is where an agent lives: the directories its path variables name and
// the configuration it reads.
type Home struct {
	// Kind is "bundle" or "bmad".
	Kind string
	// Name is the bundle name or the BMAD module.
	Name string
	// ProjectRoot is the directory {project-root} names. For a bundle it is
	// the bundle directory; for BMAD the folder holding bmad/.
	ProjectRoot string
	// BundleRoot is the directory {bundle-root} names: the bundle directory,
	// or the BMAD folder (bmad/, .bmad/, _bmad/, bmad-core/).
	BundleRoot string
	// CoreRoot is the directory {core-root} names; empty means the core
	// embedded in the binary.
	CoreRoot string
	// ConfigPath is the config.yaml the agent reads, if any.
	ConfigPath string
	// Config holds that file's scalar keys as strings.
	Config map[string]string
}

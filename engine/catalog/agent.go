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
	// FormatSkill is a skill-format agent: a SKILL.md folder with
	// customize.toml (BMAD 6.4+), an older skill folder (BMAD 6.3), or the
	// generic agent that offers a folder of Agent Skills.
	FormatSkill Format = "skill"
)

// Agent is one parsed agent, whatever its source format.
type Agent struct {
	// ID is the short, unique id people type (pm, analyst, cis/storyteller).
	ID string `json:"id"`
	// Name is the persona's name ("John"); Title its role ("Product
	// Manager"); Icon an emoji.
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	Icon  string `json:"icon,omitempty"`
	// Description says what the agent is for: bundle.yaml's description,
	// the file's frontmatter, a v4 whenToUse or agent.yaml capabilities.
	Description string `json:"description,omitempty"`
	// Source is "bundle" or "module".
	Source string `json:"source,omitempty"`
	// Module is the bundle's name or the BMAD module (bmm, cis, core).
	Module string `json:"module,omitempty"`
	// Path is the agent file on disk.
	Path string `json:"path,omitempty"`
	// Format is the file format the agent was parsed from.
	Format Format `json:"format,omitempty"`
	// EntryPoint agents are offered to people; the others stay loadable.
	EntryPoint bool `json:"entry_point,omitempty"`

	// Persona is the agent's role, identity, style and principles.
	Persona Persona `json:"persona"`
	// Activation holds the activation steps or critical actions, in order.
	Activation []string `json:"activation,omitempty"`
	// Handlers is the text of <menu-handlers>, when the agent has one.
	Handlers string `json:"handlers,omitempty"`
	// Rules are standing rules, in order. Sections the parser has no field
	// for (v4 IDE-FILE-RESOLUTION, orchestrator notes) are kept here as
	// "name: text".
	Rules []string `json:"rules,omitempty"`
	// Prompts are the agent's named prompts.
	Prompts []Prompt `json:"prompts,omitempty"`
	// Greeting is the agent's own greeting text, when it defines one.
	Greeting string `json:"greeting,omitempty"`
	// Menu is every menu item, in order, including help and exit.
	Menu []MenuItem `json:"menu,omitempty"`
	// Dependencies are v4 dependencies by kind (tasks, templates, ...).
	Dependencies map[string][]string `json:"dependencies,omitempty"`

	// Home is where the agent's paths resolve.
	Home *Home `json:"home,omitempty"`
	// MCP names the MCP servers whose tools the agent is offered, from its
	// bundle.yaml (the bundle's mcp list, then its agent entry's).
	MCP []string `json:"mcp,omitempty"`

	// The fields below are set for skill-format agents (FormatSkill).

	// SkillName is the agent's skill ("bmad-agent-pm"); people may type it
	// wherever an id is accepted.
	SkillName string `json:"skill_name,omitempty"`
	// Instructions is the agent's SKILL.md body, placeholders unresolved.
	Instructions string `json:"instructions,omitempty"`
	// Facts are the persistent facts as written: "file:GLOB", "skill:NAME"
	// or a fact verbatim.
	Facts []string `json:"facts,omitempty"`
	// Prepend and Append are the activation steps to run before and after
	// the greeting; the runtime hands them to the first model call.
	Prepend []string `json:"prepend,omitempty"`
	Append  []string `json:"append,omitempty"`
	// Fields are the merged customization table flattened to dotted names
	// ("agent.icon", "agent.principles"), for {agent.X} placeholders.
	Fields map[string]string `json:"fields,omitempty"`
	// Problem says why the agent cannot start (an invalid override); the
	// agent is still listed so people are told why.
	Problem string `json:"problem,omitempty"`
}

// Persona is who the agent is.
type Persona struct {
	// Role, Identity, CommunicationStyle and Principles are the persona's
	// texts; Principles may be "- item" lines.
	Role               string `json:"role,omitempty"`
	Identity           string `json:"identity,omitempty"`
	CommunicationStyle string `json:"communication_style,omitempty"`
	Principles         string `json:"principles,omitempty"`
}

// Prompt is a named prompt an action="#id" menu item can point to.
type Prompt struct {
	// ID is what action="#id" names; Content is the prompt text.
	ID      string `json:"id"`
	Content string `json:"content"`
}

// MenuItem is one entry of an agent's menu.
type MenuItem struct {
	// Cmd is the command as written: "*create-prd", "CP or fuzzy match on create-prd".
	Cmd string `json:"cmd"`
	// Trigger is the bare command people type, without "*": "create-prd".
	Trigger string `json:"trigger,omitempty"`
	// Code is the short code ("CP") when the cmd or label carries one.
	Code string `json:"code,omitempty"`
	// Description is the text shown, without a "[CP] " label prefix.
	Description string `json:"description,omitempty"`
	// Workflow (also from run-workflow), Exec, Tmpl, Data, Action and
	// ValidateWorkflow are the item's handlers, as written.
	Workflow         string `json:"workflow,omitempty"`
	Exec             string `json:"exec,omitempty"`
	Tmpl             string `json:"tmpl,omitempty"`
	Data             string `json:"data,omitempty"`
	Action           string `json:"action,omitempty"`
	ValidateWorkflow string `json:"validate_workflow,omitempty"`
	// Skill names the skill a skill-format item starts; Prompt is the text
	// an item runs as the user's instruction. An item has one of them.
	Skill  string `json:"skill,omitempty"`
	Prompt string `json:"prompt,omitempty"`
}

// Home is where an agent lives: the directories its path variables name and
// the configuration it reads. The agents of one bundle or module share one
// Home: treat it as read-only.
type Home struct {
	// Kind is "bundle" or "bmad".
	Kind string `json:"kind"`
	// Name is the bundle name or the BMAD module.
	Name string `json:"name,omitempty"`
	// ProjectRoot is the directory {project-root} names. For a bundle it is
	// the bundle directory; for BMAD the folder holding bmad/.
	ProjectRoot string `json:"project_root,omitempty"`
	// BundleRoot is the directory {bundle-root} names: the bundle directory,
	// or the BMAD folder (bmad/, .bmad/, _bmad/, bmad-core/).
	BundleRoot string `json:"bundle_root,omitempty"`
	// CoreRoot is the directory {core-root} names; empty means the core
	// embedded in the binary.
	CoreRoot string `json:"core_root,omitempty"`
	// ConfigPath is the config.yaml the agent reads, if any.
	ConfigPath string `json:"config_path,omitempty"`
	// Config holds that file's scalar keys as strings.
	Config map[string]string `json:"config,omitempty"`
	// OutputFolder is the project folder, relative to ProjectRoot, where
	// BMAD writes artifacts ("_bmad-output"); a session sees its own
	// outputs there.
	OutputFolder string `json:"output_folder,omitempty"`
	// Problem says why the home's configuration cannot be used; its agents
	// cannot start.
	Problem string `json:"problem,omitempty"`
}

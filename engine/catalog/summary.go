package catalog

// AgentSummary is the short view of an agent that `agentbot agents --json`
// prints.
type AgentSummary struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Icon        string `json:"icon,omitempty"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"`
	Module      string `json:"module,omitempty"`
	Path        string `json:"path"`
	Format      Format `json:"format"`
	EntryPoint  bool   `json:"entry_point"`
	Skill       string `json:"skill,omitempty"`
	Problem     string `json:"problem,omitempty"`
	// MCP names the MCP servers whose tools the agent is offered.
	MCP  []string      `json:"mcp,omitempty"`
	Menu []MenuSummary `json:"menu"`
}

// MenuSummary is one menu item in an AgentSummary: its command, its text
// and whichever handlers it carries.
type MenuSummary struct {
	Cmd              string `json:"cmd"`
	Trigger          string `json:"trigger,omitempty"`
	Code             string `json:"code,omitempty"`
	Description      string `json:"description"`
	Workflow         string `json:"workflow,omitempty"`
	Exec             string `json:"exec,omitempty"`
	Tmpl             string `json:"tmpl,omitempty"`
	Data             string `json:"data,omitempty"`
	Action           string `json:"action,omitempty"`
	ValidateWorkflow string `json:"validate_workflow,omitempty"`
	Skill            string `json:"skill,omitempty"`
	Prompt           string `json:"prompt,omitempty"`
}

// Summary returns the short view of a.
func (a *Agent) Summary() AgentSummary {
	s := AgentSummary{
		ID: a.ID, Name: a.Name, Title: a.Title, Icon: a.Icon, Description: a.Description,
		Source: a.Source, Module: a.Module, Path: a.Path, Format: a.Format, EntryPoint: a.EntryPoint,
		Skill: a.SkillName, Problem: a.Problem, MCP: a.MCP,
		Menu: make([]MenuSummary, 0, len(a.Menu)),
	}
	for _, it := range a.Menu {
		s.Menu = append(s.Menu, MenuSummary{
			Cmd: it.Cmd, Trigger: it.Trigger, Code: it.Code, Description: it.Description,
			Workflow: it.Workflow, Exec: it.Exec, Tmpl: it.Tmpl, Data: it.Data,
			Action: it.Action, ValidateWorkflow: it.ValidateWorkflow, Skill: it.Skill, Prompt: it.Prompt,
		})
	}
	return s
}

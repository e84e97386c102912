// Package vars resolves {variables} deterministically: path variables, config
// keys, references between keys of one workflow.yaml, "{config_source}:key",
// "date: system-generated" and "A || B" fallbacks. {{double}} placeholders are
// left for the model.
package vars

// Vars maps variable names, without braces, to values.
type Vars map[string]string

// UnknownError reports a variable that has no value, with the known names.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string { panic("todo") }

// Expand replaces every {name} in s. An unknown variable is an *UnknownError.
func Expand(s string, v Vars) (string, error) { panic("todo") }

// ExpandPartial replaces the variables it knows and leaves the others in
// place, returning their names.
func ExpandPartial(s string, v Vars) (string, []string) { panic("todo") }

// ParseConfig reads a config.yaml into Vars: scalar values as strings, not
// yet expanded.
func ParseConfig(data []byte) (Vars, error) { panic("todo") }

// Workflow is a workflow.yaml with its values resolved.
type Workflow struct {
	Name        string
	Description string
	// Resolved is the document re-rendered as YAML with values resolved,
	// key order kept.
	Resolved string
	// Values are the top-level scalar values after resolution.
	Values Vars
	// Instructions, Template, Validation and ConfigSource are resolved paths,
	// empty when the workflow has none (or sets them to false).
	Instructions string
	Template     string
	Validation   string
	ConfigSource string
	// Unresolved lists variables left as placeholders, for the model to ask.
	Unresolved []string
}

// ResolveWorkflow resolves a workflow.yaml. base holds the path variables,
// config keys and the session's date; readConfig loads the file a
// {config_source} names (a path already resolved).
func ResolveWorkflow(data []byte, base Vars, readConfig func(path string) (Vars, error)) (*Workflow, error) {
	panic("todo")
}

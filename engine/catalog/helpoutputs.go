package catalog

import (
	"path/filepath"
)

// HelpOutput is a row of a BMAD help table (bmad-help.csv, module-help.csv)
// that produces artifacts: bmad-help "searches resolved output paths for
// outputs patterns" to tell a team where it stands.
type HelpOutput struct {
	// Skill runs the step; Name is its display name and Phase its phase.
	Skill, Name, Phase string
	// Location is where the outputs go: a config key (planning_artifacts)
	// or a path with variables ({output_folder}/brainstorming).
	Location string
	// Pattern names the outputs ("prd", "product brief").
	Pattern string
}

// HelpOutputs reads the rows with outputs from the help tables of the
// BMAD project at root: _config/bmad-help.csv, then each module's
// module-help.csv; a row repeated in both is listed once. Missing or
// broken tables give nothing (the catalog reports them as problems).
func HelpOutputs(root string) []HelpOutput {
	var out []HelpOutput
	seen := map[[2]string]bool{}
	for _, name := range bmadDirNames {
		bmadDir := filepath.Join(root, name)
		if !isDir(bmadDir) {
			continue
		}
		for _, p := range helpTables(bmadDir, false) {
			if !isFile(p) {
				continue
			}
			rows, err := readHelpRows(p)
			if err != nil {
				continue
			}
			for _, r := range rows {
				h := HelpOutput{Skill: r.skill, Name: r.name, Phase: r.phase, Location: r.location, Pattern: r.outputs}
				key := [2]string{h.Skill, h.Pattern}
				if h.Pattern == "" || h.Skill == "" || seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, h)
			}
		}
	}
	return out
}

package project

import (
	"context"
	"fmt"
	"path"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/transcript"
	"agentbot/engine/vars"
)

// maxProjectState bounds the project's state a loaded skill gets: the
// documents that match a help table's outputs come first, then the newest
// others, then a count per folder.
const maxProjectState = 6 << 10

// State describes the session's project for a skill being loaded
// (bmad-help, or any skill that looks for earlier artifacts): its
// documents, newest first, with version, author and date, each matched
// to the help tables' outputs patterns; "" when it has no
// documents.
func (d *Docs) State(ctx context.Context, sk *catalog.Skill) string {
	pf := d.Folder
	docs, err := d.Store.Documents(ctx, pf.name)
	if err != nil {
		d.Logger.Warn("project: list documents for a skill", "project", pf.name, "err", err)
		return ""
	}
	var helps []catalog.HelpOutput
	if sk != nil && sk.Project != "" {
		helps = catalog.HelpOutputs(sk.Project)
	}
	names := map[string]string{} // each author looked up once
	author := func(v transcript.DocVersion) string {
		n, ok := names[v.Person]
		if !ok {
			n = d.name(ctx, v.Person)
			names[v.Person] = n
		}
		return v.AuthorAs(n)
	}
	return describeProject(pf.name, docs, helps, d.Session.Vars, author)
}

// describeProject writes the state of a project's documents within
// maxProjectState bytes; author names who wrote a version.
func describeProject(name string, docs []transcript.DocVersion, helps []catalog.HelpOutput, v vars.Vars, author func(transcript.DocVersion) string) string {
	var shown []transcript.DocVersion
	var matched, others []string
	patterns := outputPatterns(helps, v)
	for _, d := range docs {
		if strings.HasPrefix(d.Path, "/") {
			continue // a file people shared: under /inputs
		}
		shown = append(shown, d)
		line := docLine(d, author(d))
		if m := matchOutputs(d.Path, patterns); m != "" {
			matched = append(matched, line+" — "+m)
		} else {
			others = append(others, line)
		}
	}
	if len(shown) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Project %q: %d documents under /outputs, shared by every thread of the project (newest first: path, version, author, date UTC).\n", name, len(shown))
	left := map[string]int{}
	written := 0
	for _, group := range [][]string{matched, others} {
		for _, line := range group {
			if b.Len()+len(line)+1 > maxProjectState {
				left[path.Dir(strings.Fields(line)[0])]++
				continue
			}
			b.WriteString(line)
			b.WriteByte('\n')
			written++
		}
	}
	if written < len(shown) {
		fmt.Fprintf(&b, "… and %d more (list_files /outputs/** lists them):", len(shown)-written)
		for dir, n := range left {
			fmt.Fprintf(&b, " %s/ %d;", dir, n)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// docLine is one document: path, version, author and day.
func docLine(d transcript.DocVersion, author string) string {
	return fmt.Sprintf("%s v%d %s %s", d.Path, d.Version, author, d.Time.UTC().Format("2006-01-02"))
}

// outputPattern is a help row's outputs pattern, resolved once: its
// significant words and the folder under /outputs it names (inFolder
// false when its location is no folder of /outputs).
type outputPattern struct {
	help     catalog.HelpOutput
	words    []string
	folder   string
	inFolder bool
}

// outputPatterns resolves the help rows' patterns and locations.
func outputPatterns(helps []catalog.HelpOutput, v vars.Vars) []outputPattern {
	var out []outputPattern
	for _, h := range helps {
		p := outputPattern{help: h, words: significant(h.Pattern)}
		if len(p.words) == 0 {
			continue
		}
		p.folder, p.inFolder = outputFolder(h.Location, v)
		out = append(out, p)
	}
	return out
}

// matchOutputs names the help rows whose outputs pattern a document
// matches: under the row's location (a config key or a path, resolved),
// and naming the pattern's first significant word (prd, architecture,
// epics…), or all of them when the location is no folder of /outputs.
func matchOutputs(docPath string, patterns []outputPattern) string {
	name := strings.ToLower(path.Base(docPath))
	var out []string
	for _, p := range patterns {
		hit := false
		switch {
		case p.inFolder && (p.folder == "" || docPath == p.folder || strings.HasPrefix(docPath, p.folder+"/")):
			hit = strings.Contains(name, p.words[0])
		case !p.inFolder:
			hit = true
			for _, w := range p.words {
				hit = hit && strings.Contains(name, w)
			}
		}
		if hit {
			out = append(out, fmt.Sprintf("%s output of %s (%s)", p.help.Pattern, p.help.Skill, p.help.Phase))
		}
	}
	return strings.Join(out, "; ")
}

// outputFolder resolves a help row's location to a folder relative to
// /outputs; ok is false when it names none.
func outputFolder(loc string, v vars.Vars) (string, bool) {
	if loc == "" {
		return "", false
	}
	if !strings.Contains(loc, "{") && !strings.Contains(loc, "/") {
		loc = "{" + loc + "}" // a config key
	}
	x, err := vars.Expand(loc, v)
	if err != nil {
		return "", false
	}
	x = path.Clean(x)
	if x == "/outputs" {
		return "", true
	}
	rest, ok := strings.CutPrefix(x, "/outputs/")
	return rest, ok
}

// patternNoise are the words of an outputs pattern that name no document.
var patternNoise = map[string]bool{"and": true, "document": true, "documents": true, "report": true, "files": true, "file": true,
	"optional": true, "companion": true, "with": true, "summary": true, "html": true, "the": true, "session": true}

// significant returns the lower-case words of an outputs pattern that
// name documents.
func significant(pattern string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(pattern), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if len(w) >= 2 && !patternNoise[w] {
			out = append(out, w)
		}
	}
	return out
}

package catalog

import (
	"runtime"
	"testing"

	"agentbot/engine/fixtures"
)

// BenchmarkLoadBMADInstall loads the whole alpha.5 install (15 agents,
// manifest, module configs). It also reports the heap one Load allocates
// and keeps.
func BenchmarkLoadBMADInstall(b *testing.B) {
	root := fixtures.Dir(b, fixtures.Alpha5)
	opts := Options{BMADRoots: []string{root}}
	if c := Load(opts); len(c.Agents) != 15 || len(c.Problems) != 0 {
		b.Fatalf("load: %d agents, %+v", len(c.Agents), c.Problems)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := Load(opts)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)

	b.ReportAllocs()
	for b.Loop() {
		Load(opts)
	}
	// Reported after the loop: b.Loop resets user metrics when it starts.
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc), "total-B/load")
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)), "retained-B/load")
}

// BenchmarkParseAgent parses one compiled v6 agent (alpha.5 pm.md).
func BenchmarkParseAgent(b *testing.B) {
	path, data := readFixture(b, fixtures.Alpha5, "bmad/bmm/agents/pm.md")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseAgent(path, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadSkillsProject loads the whole 6.12 project: 29 skills, every
// customization merged (three layers each) and the central config (four
// layers). Target: under 20 ms.
func BenchmarkLoadSkillsProject(b *testing.B) {
	root := fixtures.Dir(b, fixtures.V612)
	b.ReportAllocs()
	for b.Loop() {
		c := Load(Options{BMADRoots: []string{root}})
		if len(c.Skills) != 29 || len(c.Agents) != 5 {
			b.Fatalf("%d skills, %d agents", len(c.Skills), len(c.Agents))
		}
	}
}

// BenchmarkLoadModulesProject loads the 6.12 install with bmm, bmb, cis and
// tea: 51 skills, 12 agents, the help tables checked. Target: under 20 ms.
func BenchmarkLoadModulesProject(b *testing.B) {
	root := fixtures.Dir(b, fixtures.V612M)
	b.ReportAllocs()
	for b.Loop() {
		c := Load(Options{BMADRoots: []string{root}})
		if len(c.Skills) != 51 || len(c.Agents) != 12 {
			b.Fatalf("%d skills, %d agents", len(c.Skills), len(c.Agents))
		}
	}
}

// BenchmarkLoadSkills1000 loads a generated collection of 1,000 skills in
// category folders, dot-folders and through a link. Target: under 200 ms.
func BenchmarkLoadSkills1000(b *testing.B) {
	dir := fixtures.SkillCollection(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		c := Load(Options{Skills: dir})
		if len(c.Skills) != 1000 {
			b.Fatalf("%d skills", len(c.Skills))
		}
	}
}

// BenchmarkLoadAllFixtures loads every shared fixture at once: the v4
// tree, the v6 alphas and sources, 6.2's stub skills and the three 6.12
// projects (with Game Dev Studio), 86 agents and 189 skills, ids made
// unique across them. Target: under 100 ms in all.
func BenchmarkLoadAllFixtures(b *testing.B) {
	var roots []string
	for _, name := range []string{fixtures.V4, fixtures.Alpha0, fixtures.Alpha5, fixtures.V6, fixtures.V62,
		fixtures.V612, fixtures.V612M, fixtures.V612G} {
		roots = append(roots, fixtures.Dir(b, name))
	}
	opts := Options{BMADRoots: roots}
	b.ReportAllocs()
	for b.Loop() {
		c := Load(opts)
		if len(c.Agents) != 86 || len(c.Skills) != 189 {
			b.Fatalf("%d agents, %d skills", len(c.Agents), len(c.Skills))
		}
	}
}

package admin

import (
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// Columns line up on a terminal whatever the cells hold: wide emoji, an
// emoji made wide by VS16, CJK, ASCII.
func TestWriteTableAlignsByDisplayWidth(t *testing.T) {
	var b strings.Builder
	if err := writeTable(&b, [][]string{
		{"ID", "NAME", "TITLE"},
		{"pl", "🧭 Maren", "Product Lead"},
		{"sw", "✏️ Kit", "Story Writer"},
		{"jp", "日本 Taro", "Translator"},
		{"dev", "👩‍💻 Ada", "Engineer"},
		{"x", "Plain", "Last"},
		{"y", "Empty last", ""},
	}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	col := func(l, cell string) int { return uniseg.StringWidth(l[:strings.Index(l, cell)]) }
	titles := []string{"TITLE", "Product Lead", "Story Writer", "Translator", "Engineer", "Last"}
	for i, l := range lines {
		if i == len(titles) {
			break
		}
		if got, want := col(l, titles[i]), col(lines[0], "TITLE"); got != want {
			t.Errorf("line %d: the third column starts at cell %d, want %d:\n%s", i, got, want, b.String())
		}
	}
	for i, l := range lines {
		if strings.HasSuffix(l, " ") {
			t.Errorf("line %d ends in blanks: %q", i, l)
		}
	}
	if col(lines[0], "NAME") != len("dev")+2 {
		t.Errorf("columns are not two cells apart:\n%s", b.String())
	}
}

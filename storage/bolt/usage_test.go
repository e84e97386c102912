package bolt

import (
	"testing"

	"context"
)

// Daily usage adds up per workspace and day, and survives a reopen.
func TestDailyUsage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := st.AddDailyUsage(ctx, "T1", "2026-11-22", 100); n != 100 {
		t.Fatalf("first add = %d", n)
	}
	if n, _ := st.AddDailyUsage(ctx, "T1", "2026-11-22", 50); n != 150 {
		t.Fatalf("second add = %d", n)
	}
	st.AddDailyUsage(ctx, "T2", "2026-11-22", 7)
	st.AddDailyUsage(ctx, "T1", "2026-11-23", 1)
	st.Close()
	st, _ = Open(dir)
	defer st.Close()
	for _, c := range []struct {
		team, day string
		want      int
	}{{"T1", "2026-11-22", 150}, {"T2", "2026-11-22", 7}, {"T1", "2026-11-23", 1}, {"T3", "2026-11-22", 0}} {
		if n, err := st.AddDailyUsage(ctx, c.team, c.day, 0); err != nil || n != c.want {
			t.Errorf("%s %s = %d, %v; want %d", c.team, c.day, n, err, c.want)
		}
	}
}

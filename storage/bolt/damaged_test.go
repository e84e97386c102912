package bolt

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// filledStore writes a store with some sessions and returns its file.
func filledStore(t *testing.T) (dir, file string) {
	ctx := context.Background()
	t.Helper()
	dir = t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		s, err := st.NewSession(ctx, "team/C1/"+strings.Repeat("1", i+1))
		if err != nil {
			t.Fatal(err)
		}
		s.Meta = map[string]string{"pad": strings.Repeat("x", 2000)}
		if err := st.SaveSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, DBName)
}

// A damaged file is a clear *DamagedError naming the file and how to
// recover, never a panic or a fault; an empty file is refused, not
// re-initialised; a healthy file opens.
func TestOpenDamagedStore(t *testing.T) {
	ctx := context.Background()
	damage := map[string]func(t *testing.T, file string){
		"truncated to 20 KB":     func(t *testing.T, f string) { must(t, os.Truncate(f, 20<<10)) },
		"truncated mid-page":     func(t *testing.T, f string) { must(t, os.Truncate(f, 70000)) },
		"emptied":                func(t *testing.T, f string) { must(t, os.Truncate(f, 0)) },
		"meta pages zeroed":      func(t *testing.T, f string) { overwrite(t, f, 0, make([]byte, 8192)) },
		"meta checksums flipped": func(t *testing.T, f string) { flip(t, f, 16+56); flip(t, f, 4096+16+56) },
		"random garbage": func(t *testing.T, f string) {
			b := make([]byte, 64<<10)
			for i := range b {
				b[i] = byte(rand.IntN(256))
			}
			must(t, os.WriteFile(f, b, 0o600))
		},
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			dir, file := filledStore(t)
			fn(t, file)
			before, _ := os.Stat(file)
			st, err := Open(dir)
			if err == nil {
				st.Close()
				t.Fatal("a damaged store opened")
			}
			var de *DamagedError
			if !errors.As(err, &de) || de.Path != file || !strings.Contains(err.Error(), "agentbot backup") {
				t.Fatalf("error = %v", err)
			}
			after, _ := os.Stat(file)
			if after.Size() != before.Size() {
				t.Fatalf("the damaged file was changed: %d -> %d bytes", before.Size(), after.Size())
			}
		})
	}
	dir, _ := filledStore(t)
	st, err := Open(dir)
	if err != nil {
		t.Fatalf("healthy store: %v", err)
	}
	if list, err := st.ListSessions(ctx); err != nil || len(list) != 40 {
		t.Fatalf("sessions: %d, %v", len(list), err)
	}
	st.Close()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func overwrite(t *testing.T, file string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	must(t, err)
	defer f.Close()
	_, err = f.WriteAt(b, off)
	must(t, err)
}

func flip(t *testing.T, file string, off int64) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	must(t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	must(t, err)
}

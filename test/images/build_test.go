package images

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestBuildCache: concurrent builders into an empty cache all get the same
// binary and leave no temporary file; a later build with the cache filled
// reuses the file instead of building.
func TestBuildCache(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	got := make([]binary, 3)
	errs := make([]error, 3)
	for i := range got {
		wg.Go(func() { got[i], errs[i] = buildUncached(t.Context(), PauseProgram, dir) })
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if got[i] != got[0] {
			t.Fatalf("builder %d got %+v, builder 0 %+v", i, got[i], got[0])
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || filepath.Join(dir, entries[0].Name()) != got[0].path {
		t.Fatalf("cache holds %v, want only %s", entries, got[0].path)
	}
	before, err := os.Stat(got[0].path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := buildUncached(t.Context(), PauseProgram, dir)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(again.path)
	if err != nil {
		t.Fatal(err)
	}
	if again != got[0] || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("second build %+v (mtime %v), want the cached %+v (mtime %v) reused", again, after.ModTime(), got[0], before.ModTime())
	}
}

// TestBinaryMemoised: Binary builds a program once per process.
func TestBinaryMemoised(t *testing.T) {
	a, err := Binary(t.Context(), PauseProgram)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Binary(t.Context(), PauseProgram)
	if err != nil || a != b {
		t.Fatalf("Binary again = %s, %v; want %s", b, err, a)
	}
	if _, err := Binary(t.Context(), "nope"); err == nil {
		t.Error("Binary(nope) succeeded, want an unknown program error")
	}
}

// TestPrune: a build removes the program's binaries of other sources and
// temporary files once they are old, and nothing young or of another
// program.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * staleAfter)
	files := map[string]time.Time{
		"pause-0000000000000000": old, "pause-1111111111111111": time.Now(), ".build-123": old,
		"app-0000000000000000": old, "pause-keep": old,
	}
	for name, mtime := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	prune(dir, "pause-", filepath.Join(dir, "pause-keep"))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"app-0000000000000000", "pause-1111111111111111", "pause-keep"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
}

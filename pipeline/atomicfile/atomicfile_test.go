package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "a.csv")
	if err := WriteFile(path, []byte("one")); err == nil {
		t.Fatal("a missing directory was accepted")
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if err := WriteFile(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	st1, _ := os.Stat(path)
	if err := WriteFile(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(path); !os.SameFile(st1, st2) {
		t.Error("unchanged content was rewritten")
	}
	if err := WriteFile(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Errorf("content %q", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "sub", TempPrefix+"*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestWriteFailureLeavesNothing: a failing fill leaves the old content and
// no temporary file.
func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log")
	if err := WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(f *os.File) error {
		f.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("content %q after a failed write", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, TempPrefix+"*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := Write(filepath.Join(dir, "missing", "x"), func(*os.File) error { return nil }); err == nil {
		t.Error("a missing directory was accepted")
	}
}

// RemoveStale removes a temporary file its writer left when killed (its
// lock gone) and keeps one a live writer holds, and files of other names.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.bundle")
	live, err := CreateTemp(path)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	vol, err := CreateTemp(path + ".001")
	if err != nil {
		t.Fatal(err)
	}
	vol.Close() // its writer is gone
	stale := filepath.Join(dir, TempPrefix+"b.bundle-123")
	other := filepath.Join(dir, TempPrefix+"a.bundle-123")
	for _, p := range []string{stale, other} {
		os.WriteFile(p, []byte("x"), 0o644)
	}
	removed, err := RemoveStale(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 {
		t.Errorf("removed %v, want the closed volume temp and %s", removed, stale)
	}
	for p, want := range map[string]bool{live.Name(): true, vol.Name(): false, stale: false, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", p, err == nil, want)
		}
	}
}

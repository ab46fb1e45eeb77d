package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzGetArbitraryEntry writes arbitrary bytes where an entry lives and
// reads it back. Get and Has never panic and return data only if it hashes
// to the ID asked for; anything else is a *CorruptError, quarantined with
// its bytes intact, and the next Put heals the entry. With own set the
// bytes are stored under their own ID, so they are a valid entry.
func FuzzGetArbitraryEntry(f *testing.F) {
	content := []byte("the entry's real content")
	flipped := bytes.Clone(content)
	flipped[4] ^= 0x01
	f.Add(content, false)
	f.Add(flipped, false)
	f.Add(content[:len(content)-1], false) // truncated
	f.Add([]byte{}, false)
	f.Add([]byte("hello"), true)
	f.Add([]byte{}, true)
	f.Fuzz(func(t *testing.T, data []byte, own bool) {
		s, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		want := content
		if own {
			want = data
		}
		id := Sum(want)
		p := s.Path(id)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		valid := Sum(data) == id
		if s.Has(id) != valid {
			t.Fatalf("Has = %v for %d bytes that hash to %s under %s", !valid, len(data), Sum(data), id)
		}
		got, err := s.Get(id)
		if valid {
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Get of a valid entry: %d bytes, %v", len(got), err)
			}
			return
		}
		var cerr *CorruptError
		if got != nil || !errors.As(err, &cerr) || !errors.Is(err, ErrCorrupt) || cerr.ID != id || cerr.Path != p {
			t.Fatalf("Get of bytes that do not hash to %s: %d bytes, %v; want a *CorruptError", id, len(got), err)
		}
		if q, err := os.ReadFile(cerr.Quarantine); err != nil || !bytes.Equal(q, data) {
			t.Fatalf("quarantined copy %q: %v (equal: %v)", cerr.Quarantine, err, bytes.Equal(q, data))
		}
		if _, err := s.Get(id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get after quarantine: %v, want ErrNotFound", err)
		}
		if _, err := s.Put(want); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Get(id); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Get after healing Put: %d bytes, %v", len(got), err)
		}
	})
}

package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// mustPut puts data into s, failing t on error.
func mustPut(t *testing.T, s *Store, data []byte) ID {
	t.Helper()
	id, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSumGolden pins the text form of an ID. xxh64("hello", seed 0) is
// 0x26c7827d889f6da3 (reference value from the xxHash test vectors and
// `xxhsum -H1`); changing it invalidates every stored entry.
func TestSumGolden(t *testing.T) {
	const want = "xxh64-26c7827d889f6da3"
	if got := Sum([]byte("hello")).String(); got != want {
		t.Fatalf("Sum(hello) = %s, want %s", got, want)
	}
	id, err := ParseID(want)
	if err != nil {
		t.Fatal(err)
	}
	if id != Sum([]byte("hello")) {
		t.Fatalf("ParseID(%s) = %v, want Sum(hello)", want, id)
	}
}

func TestParseIDRejectsBadText(t *testing.T) {
	for _, s := range []string{
		"",
		"xxh64-",
		"26c7827d889f6da3",             // no prefix
		"sha256-26c7827d889f6da3",      // wrong hash
		"xxh64-26C7827D889F6DA3",       // upper case
		"xxh64-26c7827d889f6da",        // 15 digits
		"xxh64-26c7827d889f6da30",      // 17 digits
		"xxh64-26c7827d889f6dag",       // not hex
		"xxh64-26c7827d889f6da3 ",      // trailing space
		" xxh64-26c7827d889f6da3",      // leading space
		"XXH64-26c7827d889f6da3",       // prefix case
		"xxh64-0x6c7827d889f6da3",      // 0x
		"xxh64-+6c7827d889f6da3",       // sign
		"xxh64-26c7827d889f6da3\x00",   // NUL
		"xxh64-\u00e926c7827d889f6da3", // non-ASCII
	} {
		if id, err := ParseID(s); err == nil {
			t.Errorf("ParseID(%q) = %v, want error", s, id)
		} else if !errors.Is(err, ErrBadID) {
			t.Errorf("ParseID(%q) error %v does not wrap ErrBadID", s, err)
		}
	}
	var zero ID
	if !zero.IsZero() || Sum(nil).IsZero() {
		t.Errorf("IsZero: zero=%v Sum(nil)=%v", zero.IsZero(), Sum(nil).IsZero())
	}
}

func TestRoundTrip(t *testing.T) {
	s := openTemp(t)
	for _, data := range [][]byte{nil, []byte("hello"), bytes.Repeat([]byte{0, 1, 2, 255}, 100000)} {
		id := mustPut(t, s, data)
		if id != Sum(data) {
			t.Fatalf("Put returned %v, want %v", id, Sum(data))
		}
		got, err := s.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("Get(%v) returned %d bytes, want %d", id, len(got), len(data))
		}
		if !s.Has(id) {
			t.Fatalf("Has(%v) = false after Put", id)
		}
		wantPath := filepath.Join(s.Root(), "cas", id.hex()[:2], id.hex())
		if s.Path(id) != wantPath {
			t.Fatalf("Path = %s, want %s", s.Path(id), wantPath)
		}
	}
	assertTmpEmpty(t, s)
}

func TestGetMissing(t *testing.T) {
	s := openTemp(t)
	id := Sum([]byte("absent"))
	_, err := s.Get(id)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get missing: %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), s.Path(id)) {
		t.Errorf("error %q does not name the path", err)
	}
	if s.Has(id) {
		t.Error("Has(missing) = true")
	}
	if err := s.Remove(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove missing: %v, want ErrNotFound", err)
	}
}

func TestPutIdempotent(t *testing.T) {
	s := openTemp(t)
	data := []byte("same bytes")
	putAndStat := func() (ID, os.FileInfo) {
		id := mustPut(t, s, data)
		fi, err := os.Stat(s.Path(id))
		if err != nil {
			t.Fatal(err)
		}
		return id, fi
	}
	id1, before := putAndStat()
	id2, after := putAndStat()
	if id1 != id2 {
		t.Fatalf("ids differ: %v %v", id1, id2)
	}
	// A second Put of valid content must not republish the file.
	if !os.SameFile(before, after) {
		t.Error("second Put replaced a valid entry")
	}
	assertTmpEmpty(t, s)
}

func TestFlippedByteQuarantinedThenHealed(t *testing.T) {
	s := openTemp(t)
	data := []byte("the quick brown fox")
	id := mustPut(t, s, data)
	p := s.Path(id)
	bad := bytes.Clone(data)
	bad[3] ^= 0x01
	if err := os.WriteFile(p, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if s.Has(id) {
		t.Fatal("Has = true for a corrupt entry")
	}
	_, err := s.Get(id)
	var cerr *CorruptError
	if !errors.As(err, &cerr) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get corrupt: %v, want *CorruptError wrapping ErrCorrupt", err)
	}
	if cerr.ID != id || cerr.Path != p || !strings.Contains(cerr.Reason, "hash mismatch") {
		t.Fatalf("CorruptError = %+v", cerr)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("corrupt entry still at %s (stat err %v)", p, err)
	}
	moved, err := os.ReadFile(cerr.Quarantine)
	if err != nil {
		t.Fatalf("quarantined copy: %v", err)
	}
	if !bytes.Equal(moved, bad) {
		t.Fatal("quarantine does not hold the corrupt bytes")
	}
	if dir := filepath.Join(s.Root(), "quarantine"); filepath.Dir(cerr.Quarantine) != dir ||
		!strings.HasPrefix(filepath.Base(cerr.Quarantine), id.hex()+".") {
		t.Fatalf("quarantine path %s, want %s/%s.<nanos>", cerr.Quarantine, dir, id.hex())
	}

	// Now a miss; the next Put heals it.
	if _, err := s.Get(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after quarantine: %v, want ErrNotFound", err)
	}
	if _, err := s.Put(data); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(id)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get after heal: %q, %v", got, err)
	}
}

func TestPutReplacesCorruptEntry(t *testing.T) {
	s := openTemp(t)
	data := []byte("payload")
	id := mustPut(t, s, data)
	if err := os.WriteFile(s.Path(id), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(data); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(id)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get after Put over corrupt entry: %q, %v", got, err)
	}
	q, _ := os.ReadDir(filepath.Join(s.Root(), "quarantine"))
	if len(q) != 1 {
		t.Fatalf("quarantine holds %d files, want the 1 replaced entry", len(q))
	}
}

func TestTruncatedDetected(t *testing.T) {
	s := openTemp(t)
	data := bytes.Repeat([]byte("0123456789"), 1000)
	id := mustPut(t, s, data)
	for _, n := range []int64{int64(len(data)) - 1, 1, 0} {
		if err := os.Truncate(s.Path(id), n); err != nil {
			t.Fatal(err)
		}
		_, err := s.Get(id)
		var cerr *CorruptError
		if !errors.As(err, &cerr) {
			t.Fatalf("truncated to %d: Get = %v, want *CorruptError", n, err)
		}
		if !strings.Contains(cerr.Reason, fmt.Sprintf("%d bytes", n)) {
			t.Errorf("reason %q does not give the size %d", cerr.Reason, n)
		}
		if _, err := s.Put(data); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConcurrentPutSameContent(t *testing.T) {
	s := openTemp(t)
	data := bytes.Repeat([]byte("concurrent"), 50000)
	const n = 8
	var wg sync.WaitGroup
	ids := make([]ID, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 20 {
				ids[i], errs[i] = s.Put(data)
				if errs[i] != nil {
					return
				}
				got, err := s.Get(ids[i])
				if err != nil || !bytes.Equal(got, data) {
					errs[i] = fmt.Errorf("get during concurrent puts: %d bytes, %v", len(got), err)
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if ids[i] != Sum(data) {
			t.Fatalf("goroutine %d: id %v", i, ids[i])
		}
	}
	assertTmpEmpty(t, s)
	if _, err := os.Stat(filepath.Join(s.Root(), "quarantine")); !os.IsNotExist(err) {
		t.Error("concurrent Puts quarantined something")
	}
}

// TestFailingWriteLeavesNoEntry simulates a full disk: the temp file's
// writes fail. Put must report the failure naming the paths and leave
// neither an entry nor a temp file.
func TestFailingWriteLeavesNoEntry(t *testing.T) {
	s := openTemp(t)
	var tmpName string
	s.create = func(dir, pattern string) (TempFile, error) {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		tmpName = f.Name()
		f.Close()
		return os.Open(tmpName) // read-only: every Write fails
	}
	data := []byte("does not fit")
	id := Sum(data)
	_, err := s.Put(data)
	if err == nil {
		t.Fatal("Put succeeded with a failing writer")
	}
	msg := err.Error()
	for _, want := range []string{"store: put", id.String(), s.Path(id), tmpName} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if _, err := os.Stat(s.Path(id)); !os.IsNotExist(err) {
		t.Errorf("entry exists after failed Put (stat err %v)", err)
	}
	if s.Has(id) {
		t.Error("Has = true after failed Put")
	}
	assertTmpEmpty(t, s)

	// Restoring the disk makes Put work again.
	s.create = osCreateTemp
	if _, err := s.Put(data); err != nil {
		t.Fatal(err)
	}
}

func TestWalkSortedAndRemove(t *testing.T) {
	s := openTemp(t)
	want := map[ID]int64{}
	for i := range 50 {
		data := []byte(fmt.Sprintf("entry %d", i))
		id := mustPut(t, s, data)
		want[id] = int64(len(data))
	}
	// Junk that is not an entry is skipped.
	if err := os.WriteFile(filepath.Join(s.Root(), "cas", "zz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []ID
	err := s.Walk(func(id ID, size int64) error {
		if size != want[id] {
			t.Errorf("%v: size %d, want %d", id, size, want[id])
		}
		got = append(got, id)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Walk visited %d entries, want %d", len(got), len(want))
	}
	for i := 1; i < len(got); i++ {
		if bytes.Compare(got[i-1][:], got[i][:]) >= 0 {
			t.Fatalf("Walk not sorted: %v then %v", got[i-1], got[i])
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Walk(func(ID, int64) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("Walk with stopping fn: err %v after %d calls", err, n)
	}
	if err := s.Remove(got[0]); err != nil {
		t.Fatal(err)
	}
	if s.Has(got[0]) {
		t.Fatal("Has after Remove")
	}
}

func assertTmpEmpty(t *testing.T, s *Store) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(s.Root(), "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("leftover temp file %s", e.Name())
	}
}

// A read-only store names a corrupt entry as corrupt, every time, and
// changes nothing: no quarantine, no Put, no Remove, no directories made.
func TestReadOnlyReportsCorruptAndChangesNothing(t *testing.T) {
	s := openTemp(t)
	data := []byte("jumps over the lazy dog")
	id := mustPut(t, s, data)
	bad := bytes.Clone(data)
	bad[0] ^= 0x20
	if err := os.WriteFile(s.Path(id), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenWith(s.Root(), Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		var cerr *CorruptError
		if _, err := ro.Get(id); !errors.As(err, &cerr) || cerr.Quarantine != "" {
			t.Fatalf("read-only Get %d of a corrupt entry: %v, want an unmoved *CorruptError", i, err)
		}
		if err := ro.Check(id); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Check %d: %v, want ErrCorrupt", i, err)
		}
	}
	if got, err := os.ReadFile(s.Path(id)); err != nil || !bytes.Equal(got, bad) {
		t.Fatalf("the corrupt entry moved or changed: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "quarantine")); !os.IsNotExist(err) {
		t.Fatalf("read-only Get made a quarantine directory (stat err %v)", err)
	}
	if _, err := ro.Put([]byte("new")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only Put: %v, want ErrReadOnly", err)
	}
	if err := ro.Remove(id); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only Remove: %v, want ErrReadOnly", err)
	}
	if err := ro.Check(Sum([]byte("absent"))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Check of an absent entry: %v, want ErrNotFound", err)
	}
	missing := filepath.Join(t.TempDir(), "nowhere")
	if _, err := OpenWith(missing, Options{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("read-only open created %s", missing)
	}
}

// PutReader and Open stream content of any size: the same IDs and bytes
// as Put and Get; content that does not hash to the ID asked for is
// refused and nothing is stored; an entry altered on disk is a
// *CorruptError at the end of reading it.
func TestStreamingPutAndOpen(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("streamed "), 100000)
	id := Sum(data)
	h := NewHash()
	h.Write(data[:5])
	h.Write(data[5:])
	if h.ID() != id {
		t.Fatalf("Hash gives %s, Sum %s", h.ID(), id)
	}
	if _, err := s.PutReader(Sum([]byte("other")), bytes.NewReader(data)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("PutReader of content with another ID: %v, want ErrCorrupt", err)
	}
	if s.Has(Sum([]byte("other"))) || s.Has(id) {
		t.Fatal("a refused PutReader stored an entry")
	}
	if n, err := s.PutReader(id, bytes.NewReader(data)); err != nil || n != int64(len(data)) {
		t.Fatalf("PutReader: %d bytes, %v", n, err)
	}
	if got, err := s.Get(id); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get after PutReader: %d bytes, %v", len(got), err)
	}
	r, size, err := s.Open(id)
	if err != nil || size != int64(len(data)) {
		t.Fatalf("Open: size %d, %v", size, err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Open read %d bytes, %v", len(got), err)
	}
	altered := bytes.Clone(data)
	altered[7] ^= 1
	if err := os.WriteFile(s.Path(id), altered, 0o644); err != nil {
		t.Fatal(err)
	}
	r, _, _ = s.Open(id)
	if _, err := io.ReadAll(r); !errors.Is(err, ErrCorrupt) {
		t.Errorf("reading an altered entry: %v, want ErrCorrupt", err)
	}
	r.Close()
	if _, _, err := s.Open(Sum([]byte("absent"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open of an absent entry: %v, want ErrNotFound", err)
	}
	if left, _ := os.ReadDir(filepath.Join(s.Root(), tmpDir)); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
}

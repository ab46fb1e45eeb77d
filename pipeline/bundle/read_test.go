package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"zorepro/pipeline/bundle/bundletest"
	"zorepro/pipeline/store"
	"zorepro/pipeline/task"
)

// smallBundle writes a bundle of two tasks (three store entries) at
// dir/b.bundle, as Export would, and returns its path.
func smallBundle(t *testing.T, dir string) string {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range []string{"manifest one", "file one", "manifest two"} {
		id, err := st.Put(bytes.Repeat([]byte(s), 1000))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id.String())
	}
	records := []Record{
		{Task: "a", Action: "xxh64-00000000000000aa", Output: ids[0], Transcript: "task a", Entries: []string{ids[0], ids[1]},
			Iters: []task.Iter{{Iteration: 1, Samples: 10, Digest: 7}}},
		{Task: "b", Action: "xxh64-00000000000000bb", Output: ids[2], Transcript: "task b", Entries: []string{ids[2]}},
	}
	path := filepath.Join(dir, "b.bundle")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	each := func(yield func(*Record) error) error {
		for i := range records {
			if err := yield(&records[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := write(context.Background(), f, st, each, Manifest{Format: Format, Profile: "smoke"}, &ExportSummary{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkRefused reads the bundle at path and wants ErrBundle with every
// one of wants in its message.
func checkRefused(t *testing.T, path string, wants ...string) {
	t.Helper()
	_, err := Read(context.Background(), path)
	if !errors.Is(err, ErrBundle) {
		t.Fatalf("read: %v, want ErrBundle", err)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("read: %v\nwant it to say %q", err, w)
		}
	}
}

// Every byte of a bundle in one file is checked: bytes appended after the
// gzip stream, a damaged gzip trailer (CRC-32 or length) and non-zero
// bytes after the tar end are refused (issue 41, defect 4).
func TestReadChecksTheWholeFile(t *testing.T) {
	dir := t.TempDir()
	path := smallBundle(t, dir)
	if _, err := Read(context.Background(), path); err != nil {
		t.Fatalf("the intact bundle: %v", err)
	}
	good := readFileT(t, path)
	for _, c := range []struct {
		name  string
		edit  func([]byte) []byte
		wants []string
	}{
		{"appended", func(b []byte) []byte { return append(b, "garbage"...) }, []string{"after the end of the bundle"}},
		{"appended gzip", func(b []byte) []byte { return append(b, gzipOf(t, []byte("more"))...) }, []string{"after the end of the bundle"}},
		{"last byte", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, []string{"b.bundle"}},
		{"crc", func(b []byte) []byte { b[len(b)-8] ^= 1; return b }, []string{"b.bundle"}},
		{"after tar end", func(b []byte) []byte { return gzipOf(t, append(gunzip(t, b), "tail"...)) }, []string{"after the end of its archive"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "b.bundle")
			if err := os.WriteFile(p, c.edit(bytes.Clone(good)), 0o644); err != nil {
				t.Fatal(err)
			}
			checkRefused(t, p, c.wants...)
		})
	}
	// Zeros after the tar end (a tar padded to its record size) are fine.
	p := filepath.Join(dir, "padded.bundle")
	os.WriteFile(p, gzipOf(t, append(gunzip(t, good), make([]byte, 10240)...)), 0o644)
	if _, err := Read(context.Background(), p); err != nil {
		t.Errorf("a bundle padded with zeros after the tar end: %v", err)
	}
}

// A truncated bundle, and an index that lists only some of the volumes,
// are refused naming the file and saying it ends early (issue 41,
// defect 6).
func TestReadNamesATruncatedBundle(t *testing.T) {
	dir := t.TempDir()
	path := smallBundle(t, dir)
	good := readFileT(t, path)
	for _, cut := range []int{len(good) / 2, len(good) - 4, 30} {
		p := filepath.Join(t.TempDir(), "cut.bundle")
		os.WriteFile(p, good[:cut], 0o644)
		checkRefused(t, p, p, "ends before the bundle does")
	}
	index := filepath.Join(dir, "v", "b.bundle")
	os.Mkdir(filepath.Dir(index), 0o755)
	vols := exportVolumes(t, index, good, int64(len(good)/6+1))
	if len(vols) < 4 {
		t.Fatalf("%d volumes", len(vols))
	}
	half := vols[:len(vols)/2]
	if err := writeIndex(index, half); err != nil {
		t.Fatal(err)
	}
	checkRefused(t, index, index, "ends before the bundle does", "volumes")
}

// A manifest that lists one task twice is refused (issue 41, defect 9).
func TestReadRefusesATaskListedTwice(t *testing.T) {
	dir := t.TempDir()
	path := smallBundle(t, dir)
	bundletest.Rewrite(t, path, path, func(name string, data []byte) []byte {
		if name != "manifest.json" {
			return data
		}
		var m Manifest
		json.Unmarshal(data, &m)
		m.Tasks = append(m.Tasks, m.Tasks[0])
		b, _ := json.Marshal(m)
		return b
	})
	checkRefused(t, path, "lists task a twice")
}

// A member far larger than memory is hashed as it streams: a bundle of a
// few MB holding 256 MiB of zeros under a content ID it does not have is
// refused having allocated a bounded amount (issue 41, defect 5), as is a
// task record of that size.
func TestReadHashesMembersAsTheyStream(t *testing.T) {
	for _, name := range []string{"cas/xxh64-0123456789abcdef", "tasks/0.gob"} {
		t.Run(strings.SplitN(name, "/", 2)[0], func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "zeros.bundle")
			f, _ := os.Create(path)
			zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
			tw := tar.NewWriter(zw)
			const size = 256 << 20
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, Format: tar.FormatPAX})
			zero := make([]byte, 1<<20)
			for i := 0; i < size/len(zero); i++ {
				tw.Write(zero)
			}
			tw.Close()
			zw.Close()
			f.Close()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Read(context.Background(), path)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrBundle) {
				t.Fatalf("read: %v, want ErrBundle", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("refusing a 256 MiB member allocated %d MiB", alloc>>20)
			}
		})
	}
}

func readFileT(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipOf(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

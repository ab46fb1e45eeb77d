package bundle

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gzipLike is n bytes that start as a gzip stream does, so that
// openBundle reads a file of them as a bundle in one file.
func gzipLike(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	b[0], b[1] = 0x1f, 0x8b
	return b
}

// exportVolumes cuts data into volumes of size bytes at path, with their
// index, as Export does.
func exportVolumes(t *testing.T, path string, data []byte, size int64) []Volume {
	t.Helper()
	vols, err := writeVolumes(path, size, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err == nil {
		err = writeIndex(path, vols)
	}
	if err != nil {
		t.Fatal(err)
	}
	return vols
}

func readAll(path string) ([]byte, error) {
	r, _, err := openBundle(path, true)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Volumes read back, through their index, as the bytes that were cut:
// a size that divides the bundle and one that does not; a later export
// with fewer volumes removes the earlier one's extra volumes; a bundle in
// one file is read as it is.
func TestVolumesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.bundle")
	for _, c := range []struct {
		n, size, volumes int
	}{{10000, 1000, 10}, {10001, 1000, 11}, {999, 1000, 1}, {4500, 2000, 3}} {
		data := gzipLike(c.n, uint64(c.n))
		vols := exportVolumes(t, path, data, int64(c.size))
		if len(vols) != c.volumes {
			t.Errorf("%d bytes in volumes of %d: %d volumes, want %d", c.n, c.size, len(vols), c.volumes)
		}
		for i, v := range vols {
			if want := filepath.Base(volumeName(path, i+1)); v.File != want || v.Bytes > int64(c.size) {
				t.Errorf("volume %d: %+v, want file %s of at most %d bytes", i+1, v, want, c.size)
			}
		}
		got, err := readAll(path)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes in volumes of %d read back as %d bytes (%v)", c.n, c.size, len(got), err)
		}
		files, _ := filepath.Glob(path + ".*")
		if len(files) != c.volumes {
			t.Errorf("after an export in %d volumes the directory holds %v", c.volumes, files)
		}
	}
	one := filepath.Join(dir, "one.bundle")
	data := gzipLike(5000, 7)
	os.WriteFile(one, data, 0o644)
	if got, err := readAll(one); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("a bundle in one file read back as %d bytes (%v)", len(got), err)
	}
}

// A missing, incomplete, longer or altered volume, and an index that is
// neither, are refused as ErrBundle naming the volume.
func TestVolumesDamaged(t *testing.T) {
	for _, c := range []struct {
		name, want string
		damage     func(path string)
	}{
		{"missing", "b.bundle.002 (2 of 4", func(p string) { os.Remove(volumeName(p, 2)) }},
		{"incomplete", "b.bundle.003 (3 of 4, listed in", func(p string) { os.Truncate(volumeName(p, 3), 500) }},
		{"longer", "b.bundle.004 (4 of 4", func(p string) {
			f, _ := os.OpenFile(volumeName(p, 4), os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte("x"))
			f.Close()
		}},
		{"altered", "b.bundle.001 (1 of 4, listed in", func(p string) {
			b, _ := os.ReadFile(volumeName(p, 1))
			b[100] ^= 1
			os.WriteFile(volumeName(p, 1), b, 0o644)
		}},
		{"swapped", "b.bundle.001 (1 of 4", func(p string) {
			a, _ := os.ReadFile(volumeName(p, 1))
			b, _ := os.ReadFile(volumeName(p, 2))
			os.WriteFile(volumeName(p, 1), b, 0o644)
			os.WriteFile(volumeName(p, 2), a, 0o644)
		}},
		{"not an index", "neither a bundle nor an index", func(p string) { os.WriteFile(p, []byte("{\"volumes\": 3}"), 0o644) }},
		{"outside", "not a plain file name", func(p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"b.bundle.002"`), []byte(`"../b.bundle.002"`), 1), 0o644)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "b.bundle")
			exportVolumes(t, path, gzipLike(4000, 3), 1000)
			c.damage(path)
			_, err := readAll(path)
			if !errors.Is(err, ErrBundle) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("read: %v, want ErrBundle naming %q", err, c.want)
			}
		})
	}
}

// A failed export leaves none of its volumes behind.
func TestVolumesFailedExport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.bundle")
	boom := errors.New("the store failed")
	_, err := writeVolumes(path, 1000, func(w io.Writer) error {
		w.Write(gzipLike(3500, 1))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("writeVolumes: %v, want the fill's error", err)
	}
	if files, _ := filepath.Glob(path + "*"); len(files) != 0 {
		t.Errorf("a failed export left %v", files)
	}
}

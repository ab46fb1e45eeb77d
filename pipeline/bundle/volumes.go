package bundle

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"zorepro/pipeline/atomicfile"
)

// IndexFormat is the version of a volume index.
const IndexFormat = 1

// MinVolumeSize is the smallest volume size the command line takes: a
// size meant in MiB but given in bytes would write thousands of files.
const MinVolumeSize = 1 << 20

// Index is what the bundle file holds when the bundle is cut into volumes:
// the volumes in order, each with its size and SHA-256. Their
// concatenation is the bundle, byte for byte what one file would hold.
type Index struct {
	Format  int      `json:"bundle_volumes_format"`
	Bytes   int64    `json:"bytes"`
	Volumes []Volume `json:"volumes"`
}

// Volume is one piece of a bundle cut into volumes.
type Volume struct {
	// File is its name, in the index's directory.
	File   string `json:"file"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// volumeName is the name of the i-th (from 1) volume of the bundle file
// path.
func volumeName(path string, i int) string {
	return fmt.Sprintf("%s.%03d", path, i)
}

// writeVolumes writes what fill writes as volumes path.001, path.002, …
// of at most size bytes each, then their index at path, and removes
// volumes of an earlier export beyond the last. Every volume is written to
// a temporary file first and they are renamed into place only when fill
// has succeeded, then the index is published: an export that fails or is
// interrupted leaves an earlier export at path as it was, and none of its
// own files.
func writeVolumes(path string, size int64, fill func(io.Writer) error) ([]Volume, error) {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(fill(pw)) }()
	in := bufio.NewReaderSize(pr, 1<<20)
	var vols []Volume
	var temps []*os.File
	fail := func(err error) ([]Volume, error) {
		pr.CloseWithError(err) // stops fill if it is still writing
		for _, f := range temps {
			f.Close()
			os.Remove(f.Name())
		}
		return nil, err
	}
	for i := 1; ; i++ {
		if _, err := in.Peek(1); err == io.EOF {
			break
		} else if err != nil {
			return fail(err)
		}
		name := volumeName(path, i)
		f, err := atomicfile.CreateTemp(name)
		if err != nil {
			return fail(err)
		}
		temps = append(temps, f)
		h := sha256.New()
		n, err := io.CopyN(io.MultiWriter(f, h), in, size)
		if err == io.EOF {
			err = nil
		}
		if err == nil {
			err = f.Chmod(0o644)
		}
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			return fail(fmt.Errorf("write %s: %w", name, err))
		}
		vols = append(vols, Volume{File: filepath.Base(name), Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	for i, f := range temps {
		if err := os.Rename(f.Name(), volumeName(path, i+1)); err != nil {
			return fail(err)
		}
		f.Close() // its lock is released once it has its name
	}
	if err := atomicfile.SyncDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := writeIndex(path, vols); err != nil {
		return nil, err
	}
	removeVolumes(path, len(vols)+1)
	return vols, nil
}

// removeVolumes removes the volumes path.NNN from the from-th on, up to
// the first that is not there: an earlier export's beyond the last.
func removeVolumes(path string, from int) {
	for i := from; ; i++ {
		if err := os.Remove(volumeName(path, i)); err != nil {
			return
		}
	}
}

// writeIndex publishes the index of vols at path.
func writeIndex(path string, vols []Volume) error {
	ix := Index{Format: IndexFormat, Volumes: vols}
	for _, v := range vols {
		ix.Bytes += v.Bytes
	}
	js, err := json.MarshalIndent(ix, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(js, '\n'))
}

// openBundle opens the bundle at path: the file itself, or, when it is a
// volume index, its volumes in order, each checked first against the
// index's size and (with hashVolumes) SHA-256. volumes is how many
// volumes the index lists (0: a bundle in one file).
func openBundle(path string, hashVolumes bool) (r io.ReadCloser, volumes int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	br := bufio.NewReader(f)
	head, _ := br.Peek(2)
	if len(head) == 1 || bytes.Equal(head, []byte{0x1f, 0x8b}) { // gzip: a bundle in one file
		return readCloser{br, f}, 0, nil
	}
	defer f.Close()
	var ix Index
	dec := json.NewDecoder(io.LimitReader(br, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ix); err != nil || ix.Format != IndexFormat || len(ix.Volumes) == 0 {
		return nil, 0, fmt.Errorf("%w: %s is neither a bundle nor an index of its volumes (%v)", ErrBundle, path, errors.Join(err, fmt.Errorf("format %d, %d volumes", ix.Format, len(ix.Volumes))))
	}
	r, err = openVolumes(path, ix, hashVolumes)
	return r, len(ix.Volumes), err
}

// openVolumes checks the volumes ix lists, in path's directory, and opens
// them as one reader. A volume that is missing, of another size than the
// index says or with another SHA-256 is an ErrBundle naming it: the
// download to repeat.
func openVolumes(path string, ix Index, hashVolumes bool) (io.ReadCloser, error) {
	dir := filepath.Dir(path)
	bad := func(i int, what string) error {
		return fmt.Errorf("%w: volume %s (%d of %d, listed in %s): %s", ErrBundle, ix.Volumes[i].File, i+1, len(ix.Volumes), path, what)
	}
	var total int64
	for i, v := range ix.Volumes {
		if v.File != filepath.Base(v.File) || v.File == ".." || strings.ContainsAny(v.File, `/\`) {
			return nil, bad(i, "not a plain file name")
		}
		fi, err := os.Stat(filepath.Join(dir, v.File))
		switch {
		case err != nil:
			return nil, bad(i, err.Error())
		case fi.Size() != v.Bytes:
			return nil, bad(i, fmt.Sprintf("%d bytes, the index says %d (an incomplete download?)", fi.Size(), v.Bytes))
		}
		total += v.Bytes
	}
	if total != ix.Bytes {
		return nil, fmt.Errorf("%w: %s: its volumes add up to %d bytes, the index says %d", ErrBundle, path, total, ix.Bytes)
	}
	vs := &volumes{}
	for i, v := range ix.Volumes {
		f, err := os.Open(filepath.Join(dir, v.File))
		if err != nil {
			vs.Close()
			return nil, bad(i, err.Error())
		}
		vs.files = append(vs.files, f)
		if !hashVolumes {
			continue
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			vs.Close()
			return nil, bad(i, err.Error())
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != v.SHA256 {
			vs.Close()
			return nil, bad(i, fmt.Sprintf("SHA-256 %s, the index says %s", got, v.SHA256))
		}
	}
	rs := make([]io.Reader, len(vs.files))
	for i, f := range vs.files {
		rs[i] = f
	}
	vs.Reader = io.MultiReader(rs...)
	return vs, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// volumes reads a bundle's open volumes in order.
type volumes struct {
	io.Reader
	files []*os.File
}

func (v *volumes) Close() error {
	var errs []error
	for _, f := range v.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"zorepro/pipeline/crashpoint"
	"zorepro/pipeline/store"
)

// Limits on the members a bundle holds in memory or spools: far above
// what a recorded task needs (the paper profile's largest record is a few
// MB), so that a damaged or hostile bundle is refused instead of filling
// memory or disk.
const (
	MaxManifest = 256 << 20
	MaxRecord   = 64 << 20
)

// Contents is a checked bundle: its manifest, and its task records spooled
// to an unlinked temporary file (memory stays bounded whatever the bundle
// holds; nothing is left on disk, however the process ends). Close
// releases the spool.
type Contents struct {
	Manifest Manifest
	path     string
	spool    *os.File
	spans    map[string]span     // member name → where its bytes are in spool
	entries  map[string][]string // task → its entries' content IDs
}

type span struct{ off, n int64 }

// Record decodes the record of a task the manifest lists.
func (c *Contents) Record(taskPath string) (*Record, error) {
	var te *TaskEntry
	for i := range c.Manifest.Tasks {
		if c.Manifest.Tasks[i].Task == taskPath {
			te = &c.Manifest.Tasks[i]
			break
		}
	}
	if te == nil {
		return nil, fmt.Errorf("%w: %s lists no task %s", ErrBundle, c.path, taskPath)
	}
	return c.decode(te)
}

// decode reads te's record from the spool and checks it against te.
func (c *Contents) decode(te *TaskEntry) (*Record, error) {
	sp, ok := c.spans[te.Record]
	if !ok {
		return nil, fmt.Errorf("%w: %s: the record %s of %s is missing", ErrBundle, c.path, te.Record, te.Task)
	}
	var r Record
	err := gob.NewDecoder(io.NewSectionReader(c.spool, sp.off, sp.n)).Decode(&r)
	if err != nil || r.Task != te.Task || r.Action != te.Action || r.Output != te.Output {
		return nil, fmt.Errorf("%w: %s: record %s of %s does not match the manifest (%v)", ErrBundle, c.path, te.Record, te.Task, err)
	}
	return &r, nil
}

// Close removes the spool.
func (c *Contents) Close() error { return c.spool.Close() }

// Read checks a bundle: every member against the manifest's SHA-256,
// every entry against its content ID (hashed as it streams), the manifest
// listing every member and every task once, each record matching its
// manifest line and naming entries the bundle holds, and every byte of
// the file (the gzip trailer, nothing after the archive's end). A damaged
// or altered bundle is an ErrBundle naming the file, and the member where
// there is one; a cancelled ctx stops it with ctx's error.
func Read(ctx context.Context, path string) (*Contents, error) {
	spool, err := os.CreateTemp("", "pipeline-bundle-*")
	if err != nil {
		return nil, err
	}
	os.Remove(spool.Name()) // unlinked: the open file is the only reference
	c := &Contents{path: path, spool: spool, spans: map[string]span{}, entries: map[string][]string{}}
	if err := c.read(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Contents) read(ctx context.Context) error {
	sums := map[string]string{}
	var manifest []byte
	var off int64
	err := members(ctx, c.path, true, func(name string, size int64, r io.Reader) error {
		if _, dup := sums[name]; dup {
			return fmt.Errorf("%w: %s: member %s appears twice", ErrBundle, c.path, name)
		}
		h := sha256.New()
		switch {
		case strings.HasPrefix(name, "cas/"):
			id, err := store.ParseID(strings.TrimPrefix(name, "cas/"))
			if err != nil {
				return fmt.Errorf("%w: %s: member %s: %v", ErrBundle, c.path, name, err)
			}
			xh := store.NewHash()
			if _, err := io.Copy(io.MultiWriter(h, xh), r); err != nil {
				return err
			}
			if xh.ID() != id {
				return fmt.Errorf("%w: %s: entry %s does not hash to its name (%s)", ErrBundle, c.path, name, xh.ID())
			}
		case strings.HasPrefix(name, "tasks/"):
			if size > MaxRecord {
				return fmt.Errorf("%w: %s: record %s is %d bytes, more than a record may be (%d)", ErrBundle, c.path, name, size, MaxRecord)
			}
			n, err := io.Copy(io.MultiWriter(h, c.spool), r)
			if err != nil {
				return err
			}
			c.spans[name] = span{off, n}
			off += n
		case name == "manifest.json":
			if size > MaxManifest {
				return fmt.Errorf("%w: %s: manifest.json is %d bytes, more than a manifest may be (%d)", ErrBundle, c.path, size, MaxManifest)
			}
			var err error
			if manifest, err = io.ReadAll(io.TeeReader(r, h)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: %s: unexpected member %s", ErrBundle, c.path, name)
		}
		sums[name] = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	if err != nil {
		return err
	}
	m := &c.Manifest
	if err := json.Unmarshal(manifest, m); err != nil || m.Format != Format {
		return fmt.Errorf("%w: %s: no manifest of format %d (%v)", ErrBundle, c.path, Format, err)
	}
	delete(sums, "manifest.json")
	for name, want := range m.Members {
		if got, ok := sums[name]; !ok {
			return fmt.Errorf("%w: %s: member %s is missing", ErrBundle, c.path, name)
		} else if got != want {
			return fmt.Errorf("%w: %s: member %s has SHA-256 %s, the manifest says %s", ErrBundle, c.path, name, got, want)
		}
	}
	for name := range sums {
		if _, ok := m.Members[name]; !ok {
			return fmt.Errorf("%w: %s: member %s is not in the manifest", ErrBundle, c.path, name)
		}
	}
	records := map[string]bool{}
	for i := range m.Tasks {
		te := &m.Tasks[i]
		if _, dup := c.entries[te.Task]; dup {
			return fmt.Errorf("%w: %s: the manifest lists task %s twice", ErrBundle, c.path, te.Task)
		}
		if records[te.Record] {
			return fmt.Errorf("%w: %s: the manifest names record %s twice", ErrBundle, c.path, te.Record)
		}
		records[te.Record] = true
		r, err := c.decode(te)
		if err != nil {
			return err
		}
		for _, id := range r.Entries {
			if _, ok := sums["cas/"+id]; !ok {
				return fmt.Errorf("%w: %s: %s's entry %s is not in the bundle", ErrBundle, c.path, r.Task, id)
			}
		}
		c.entries[te.Task] = r.Entries
	}
	return nil
}

// members calls fn for each member of the bundle at path, in order, with
// its size and a reader of its bytes, then checks the rest of the file:
// only zeros after the archive's end, the gzip trailer (CRC-32 and
// length), and nothing after the gzip stream. A read that fails (a
// truncated file, a damaged stream) is an ErrBundle naming the file and
// the member. hashVolumes: check each volume's SHA-256 first (the first
// pass; the second pass's members are checked against their content IDs
// anyway).
func members(ctx context.Context, path string, hashVolumes bool, fn func(name string, size int64, r io.Reader) error) error {
	f, volumes, err := openBundle(path, hashVolumes)
	if err != nil {
		return err
	}
	defer f.Close()
	bad := func(member string, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		where := path
		if member != "" {
			where += ": member " + member
		}
		return fmt.Errorf("%w: %s: %s", ErrBundle, where, damage(err, volumes))
	}
	br := bufio.NewReaderSize(f, 1<<20)
	zr, err := gzip.NewReader(br)
	if err != nil {
		return bad("", err)
	}
	zr.Multistream(false)
	tr := tar.NewReader(zr)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bad("", err)
		}
		if hdr.Typeflag != tar.TypeReg || filepath.Clean(hdr.Name) != hdr.Name || strings.HasPrefix(hdr.Name, "/") || strings.Contains(hdr.Name, "..") {
			return fmt.Errorf("%w: %s: member %q is not a plain file name", ErrBundle, path, hdr.Name)
		}
		mr := &memberReader{ctx: ctx, r: tr}
		if err := fn(hdr.Name, hdr.Size, mr); err != nil {
			if mr.err != nil {
				return bad(hdr.Name, mr.err)
			}
			return err
		}
		crashpoint.Hit("bundle.member")
	}
	// After the archive's end: zeros at most (a tar padded to its record
	// size), to the gzip stream's end, whose trailer the reader checks.
	zeros := make([]byte, 32<<10)
	for {
		n, err := zr.Read(zeros)
		if bytes.ContainsFunc(zeros[:n], func(r rune) bool { return r != 0 }) {
			return fmt.Errorf("%w: %s: %s", ErrBundle, path, "bytes other than zeros after the end of its archive")
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return bad("", err)
		}
	}
	if _, err := br.Peek(1); err != io.EOF {
		if err != nil {
			return bad("", err)
		}
		return fmt.Errorf("%w: %s: bytes after the end of the bundle (its gzip stream ended; appended or damaged?)", ErrBundle, path)
	}
	return nil
}

// memberReader reads a member, keeping the read error (as opposed to an
// error of the caller's fn) so that members can name the file and the
// member; it stops when ctx is cancelled.
type memberReader struct {
	ctx context.Context
	r   io.Reader
	err error
}

func (m *memberReader) Read(p []byte) (int, error) {
	if err := m.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := m.r.Read(p)
	if err != nil && err != io.EOF {
		m.err = err
	}
	return n, err
}

// damage says what a read error means for a bundle of volumes volumes (0:
// one file).
func damage(err error, volumes int) string {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		if volumes > 0 {
			return fmt.Sprintf("the last of the %d volumes its index lists ends before the bundle does (the index lists only some of them, or they are not this bundle's): %v", volumes, err)
		}
		return fmt.Sprintf("the file ends before the bundle does (truncated: an incomplete download?): %v", err)
	case errors.Is(err, gzip.ErrChecksum):
		return fmt.Sprintf("its gzip checksum or length does not match its content (damaged): %v", err)
	case errors.Is(err, gzip.ErrHeader):
		return fmt.Sprintf("not gzip data where the bundle should be (damaged): %v", err)
	}
	return fmt.Sprintf("unreadable (damaged): %v", err)
}

package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"

	"zorepro/pipeline/atomicfile"
)

// Hash computes an ID from bytes written to it, for content too large to
// hold in memory: Sum(data) equals the ID of a Hash data was written to.
type Hash struct{ d *xxhash.Digest }

// NewHash returns an empty Hash.
func NewHash() Hash { return Hash{xxhash.New()} }

// Write adds p to the hashed content; it never fails.
func (h Hash) Write(p []byte) (int, error) { return h.d.Write(p) }

// ID is the ID of the content written so far.
func (h Hash) ID() ID {
	var id ID
	binary.BigEndian.PutUint64(id[:], h.d.Sum64())
	return id
}

// PutReader stores the content r yields, which must have the ID want,
// streaming it to disk (memory stays bounded whatever its size), and
// returns its size. Content with another ID is a *CorruptError naming
// want, and nothing is stored. An intact entry already present is kept
// (r is still read to its end, so that a caller reading a stream of
// entries stays in step).
func (s *Store) PutReader(want ID, r io.Reader) (int64, error) {
	if s.readOnly {
		return 0, fmt.Errorf("%w: put %s", ErrReadOnly, want)
	}
	p := s.Path(want)
	if s.Check(want) == nil {
		n, err := io.Copy(io.Discard, r)
		return n, err
	}
	f, err := s.create(filepath.Join(s.root, tmpDir), "put-*")
	if err != nil {
		return 0, fmt.Errorf("store: put %s: %w", want, err)
	}
	tmp := f.Name()
	h := NewHash()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if err == nil && h.ID() != want {
		err = &CorruptError{ID: want, Path: tmp, Reason: fmt.Sprintf("hash mismatch: %d bytes hash to %s", n, h.ID())}
	}
	err = atomicfile.Finish(f, err)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(p), 0o755)
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err == nil {
		err = atomicfile.SyncDir(filepath.Dir(p))
	}
	if err != nil {
		os.Remove(tmp)
		var cerr *CorruptError
		if errors.As(err, &cerr) {
			return n, err
		}
		return n, fmt.Errorf("store: put %s (%s): %w", want, p, err)
	}
	return n, nil
}

// Open returns a reader of id's entry and its size, for content too large
// to hold in memory. The reader re-hashes what it reads: at the end of an
// entry whose bytes do not hash to id, Read returns a *CorruptError
// instead of io.EOF (the entry is left where it is). A missing entry is
// ErrNotFound.
func (s *Store) Open(id ID) (io.ReadCloser, int64, error) {
	p := s.Path(id)
	f, err := os.Open(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, 0, fmt.Errorf("%w: %s (%s)", ErrNotFound, id, p)
	case err != nil:
		return nil, 0, fmt.Errorf("store: get %s: %w", id, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("store: get %s: %w", id, err)
	}
	return &entryReader{f: f, id: id, h: NewHash()}, fi.Size(), nil
}

// entryReader reads an entry and checks its hash at the end.
type entryReader struct {
	f  *os.File
	id ID
	h  Hash
	n  int64
}

func (r *entryReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	if err == io.EOF && r.h.ID() != r.id {
		return n, &CorruptError{ID: r.id, Path: r.f.Name(), Reason: fmt.Sprintf("hash mismatch: %d bytes hash to %s", r.n, r.h.ID())}
	}
	if err != nil && err != io.EOF {
		err = fmt.Errorf("store: get %s: %w", r.id, err)
	}
	return n, err
}

func (r *entryReader) Close() error { return r.f.Close() }

// Adopt moves the file at path, whose content must have the ID want, into
// the store as want's entry; the file must be on the store's file system
// (a staging directory under its root). It is hashed first: a file with
// other content is a *CorruptError and is left where it is. An intact
// entry already present is kept, and the file removed.
func (s *Store) Adopt(want ID, path string) error {
	if s.readOnly {
		return fmt.Errorf("%w: adopt %s", ErrReadOnly, want)
	}
	if s.Check(want) == nil {
		return os.Remove(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store: adopt %s: %w", want, err)
	}
	h := NewHash()
	n, err := io.Copy(h, f)
	f.Close()
	if err != nil {
		return fmt.Errorf("store: adopt %s: %w", want, err)
	}
	if h.ID() != want {
		return &CorruptError{ID: want, Path: path, Reason: fmt.Sprintf("hash mismatch: %d bytes hash to %s", n, h.ID())}
	}
	p := s.Path(want)
	if err := os.Chmod(path, 0o644); err != nil {
		return fmt.Errorf("store: adopt %s: %w", want, err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("store: adopt %s: %w", want, err)
	}
	if err := os.Rename(path, p); err != nil {
		return fmt.Errorf("store: adopt %s: %w", want, err)
	}
	return atomicfile.SyncDir(filepath.Dir(p))
}

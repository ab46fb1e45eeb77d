package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"zorepro/pipeline/atomicfile"
	"zorepro/pipeline/crashpoint"
)

// Store is a content-addressed store rooted at a directory. It is safe for
// concurrent use.
type Store struct {
	root string

	// create makes the temp file an entry is written to (Options.CreateTemp).
	create func(dir, pattern string) (TempFile, error)

	readOnly bool // Options.ReadOnly
}

// Options configure OpenWith. The zero value is what Open uses.
type Options struct {
	// CreateTemp creates the temp file an entry is written to before it is
	// renamed into place, with os.CreateTemp's arguments; nil means
	// os.CreateTemp. It is a test seam: tests return files whose writes
	// fail (e.g. with ENOSPC) to simulate a full disk.
	CreateTemp func(dir, pattern string) (TempFile, error)

	// ReadOnly opens the store for inspection: nothing is created, Put and
	// Remove fail with ErrReadOnly, and Get reports a corrupt entry
	// without moving it to quarantine.
	ReadOnly bool
}

// TempFile is what Put writes an entry through: the methods of *os.File it
// uses.
type TempFile interface {
	Name() string
	Write(p []byte) (int, error)
	Chmod(mode fs.FileMode) error
	Sync() error
	Close() error
}

// Open returns the store rooted at root, creating root/cas and root/tmp
// (mode 0755) if needed.
func Open(root string) (*Store, error) { return OpenWith(root, Options{}) }

// OpenWith is Open with options.
func OpenWith(root string, opt Options) (*Store, error) {
	if opt.ReadOnly {
		return &Store{root: root, readOnly: true}, nil
	}
	for _, d := range []string{casDir, tmpDir} {
		p := filepath.Join(root, d)
		if err := os.MkdirAll(p, 0o755); err != nil {
			return nil, fmt.Errorf("store: open %s: %w", root, err)
		}
	}
	s := &Store{root: root, create: opt.CreateTemp}
	if s.create == nil {
		s.create = osCreateTemp
	}
	return s, nil
}

func osCreateTemp(dir, pattern string) (TempFile, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err // not a TempFile holding a nil *os.File
	}
	return f, nil
}

const (
	casDir        = "cas"
	tmpDir        = "tmp"
	quarantineDir = "quarantine"
)

// Root returns the directory the store was opened at.
func (s *Store) Root() string { return s.root }

// Path returns where the entry for id lives (whether or not it exists).
func (s *Store) Path(id ID) string {
	h := id.hex()
	return filepath.Join(s.root, casDir, h[:2], h)
}

// Put stores data and returns its ID. If a valid entry already exists Put
// does nothing; a corrupt one is quarantined and replaced.
func (s *Store) Put(data []byte) (ID, error) {
	id := Sum(data)
	if s.readOnly {
		return id, fmt.Errorf("%w: put %s", ErrReadOnly, id)
	}
	p := s.Path(id)
	switch _, err := s.read(id, p); {
	case err == nil:
		return id, nil
	case errors.Is(err, ErrNotFound):
	case errors.Is(err, ErrCorrupt):
		// read quarantined it (or tried to; the rename below replaces it
		// either way).
	default:
		return ID{}, err
	}
	if err := s.publish(p, data); err != nil {
		return ID{}, fmt.Errorf("store: put %s (%s): %w", id, p, err)
	}
	return id, nil
}

// publish writes data to a temp file, fsyncs it, renames it to p and fsyncs
// p's directory. On error no file is left at p by this call and the temp
// file is removed.
func (s *Store) publish(p string, data []byte) (err error) {
	f, err := s.create(filepath.Join(s.root, tmpDir), "put-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	// CreateTemp makes files 0600; entries are as readable as their 0755
	// directories.
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	dir := filepath.Dir(p)
	if err = os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	crashpoint.Hit("store.before-rename")
	if err = os.Rename(tmp, p); err != nil {
		return err
	}
	crashpoint.Hit("store.after-rename")
	return atomicfile.SyncDir(dir)
}

// Get returns the content of id. A missing entry is ErrNotFound; a corrupt
// one is a *CorruptError and has been moved to quarantine.
func (s *Store) Get(id ID) ([]byte, error) {
	return s.read(id, s.Path(id))
}

func (s *Store) read(id ID, p string) ([]byte, error) {
	data, err := load(id, p)
	var cerr *CorruptError
	if errors.As(err, &cerr) && !s.readOnly {
		return nil, s.quarantine(id, p, cerr.Reason)
	}
	return data, err
}

// load reads the entry for id at p and checks its hash: an error wrapping
// ErrNotFound, or a *CorruptError with the entry left where it is.
func load(id ID, p string) ([]byte, error) {
	data, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s (%s)", ErrNotFound, id, p)
	case err != nil:
		return nil, fmt.Errorf("store: get %s: %w", id, err)
	}
	if got := Sum(data); got != id {
		return nil, &CorruptError{ID: id, Path: p, Reason: fmt.Sprintf("hash mismatch: %d bytes hash to %s", len(data), got)}
	}
	return data, nil
}

// Check reports whether id's entry is present and intact, without side
// effects: nil, an error wrapping ErrNotFound, or a *CorruptError (the
// entry left where it is).
func (s *Store) Check(id ID) error {
	_, err := load(id, s.Path(id))
	return err
}

// quarantine moves the corrupt entry at p aside and returns the
// *CorruptError describing it.
func (s *Store) quarantine(id ID, p, reason string) error {
	cerr := &CorruptError{ID: id, Path: p, Reason: reason}
	dir := filepath.Join(s.root, quarantineDir)
	dst := filepath.Join(dir, id.hex()+"."+strconv.FormatInt(time.Now().UnixNano(), 10))
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		err = os.Rename(p, dst)
	}
	switch {
	case err == nil:
		cerr.Quarantine = dst
	case errors.Is(err, fs.ErrNotExist):
		// A concurrent Get or Put moved it first.
	default:
		cerr.Reason += "; moving it to quarantine failed: " + err.Error()
	}
	return cerr
}

// Has reports whether a valid entry for id exists. It re-hashes the entry
// and has no side effects: a corrupt entry is reported as absent but left
// for Get or Put to quarantine.
func (s *Store) Has(id ID) bool { return s.Check(id) == nil }

// Remove deletes the entry for id. A missing entry is ErrNotFound.
func (s *Store) Remove(id ID) error {
	p := s.Path(id)
	if s.readOnly {
		return fmt.Errorf("%w: remove %s", ErrReadOnly, id)
	}
	err := os.Remove(p)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s (%s)", ErrNotFound, id, p)
	}
	if err != nil {
		return fmt.Errorf("store: remove %s: %w", id, err)
	}
	return nil
}

// Walk calls fn for every entry in ascending ID order with the entry's size
// on disk. It does not re-hash, and it skips files and directories whose
// names are not entry names. An error from fn stops the walk and is
// returned unchanged.
func (s *Store) Walk(fn func(id ID, size int64) error) error {
	cas := filepath.Join(s.root, casDir)
	shards, err := os.ReadDir(cas) // sorted by name
	if err != nil {
		return fmt.Errorf("store: walk %s: %w", cas, err)
	}
	for _, sh := range shards {
		if !sh.IsDir() || !isLowerHex(sh.Name(), 2) {
			continue
		}
		dir := filepath.Join(cas, sh.Name())
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("store: walk %s: %w", dir, err)
		}
		for _, e := range ents {
			id, ok := parseHex(e.Name())
			if !ok || !e.Type().IsRegular() || id.hex()[:2] != sh.Name() {
				continue
			}
			info, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since ReadDir
			}
			if err != nil {
				return fmt.Errorf("store: walk %s: %w", filepath.Join(dir, e.Name()), err)
			}
			if err := fn(id, info.Size()); err != nil {
				return err
			}
		}
	}
	return nil
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"zorepro/pipeline/provenance"
)

// scratchFlags are where replay and verify re-execute: --scratch and
// --keep.
type scratchFlags struct {
	dir  string
	keep bool
}

func (s *scratchFlags) define(f *flagSet) {
	f.String(&s.dir, "scratch", "", "directory to re-execute into (default: a temporary directory, removed afterwards)")
	f.Bool(&s.keep, "keep", "keep the scratch directory")
}

// scratch opens the scratch area of replay and verify: --scratch, or a
// temporary directory removed afterwards unless --keep.
func (s *scratchFlags) open() (*provenance.Scratch, func(), error) {
	dir := s.dir
	temp := dir == ""
	if temp {
		d, err := os.MkdirTemp("", "pipeline-scratch-")
		if err != nil {
			return nil, nil, err
		}
		dir = d
	}
	sc, err := provenance.OpenScratch(dir)
	if err != nil {
		return nil, nil, err
	}
	return sc, func() {
		sc.Close()
		if temp && !s.keep {
			os.RemoveAll(dir)
		}
	}, nil
}

// scratchArgs checks that --scratch is outside the store: a re-execution
// writes a store and an event log of its own there, which must never land
// in the real store.
func (s *scratchFlags) check(name, storeDir string) []string {
	if s.dir == "" {
		return nil
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return filepath.Clean(p)
		}
		if r, err := filepath.EvalSymlinks(a); err == nil {
			return r
		}
		// Not there yet: resolve its nearest existing parent.
		if r, err := filepath.EvalSymlinks(filepath.Dir(a)); err == nil {
			return filepath.Join(r, filepath.Base(a))
		}
		return a
	}
	sc, st := abs(s.dir), abs(storeDir)
	if rel, err := filepath.Rel(st, sc); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return []string{fmt.Sprintf("pipeline %s: --scratch %s is inside the store %s; give a directory outside it", name, s.dir, storeDir)}
	}
	if rel, err := filepath.Rel(sc, st); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return []string{fmt.Sprintf("pipeline %s: --scratch %s holds the store %s; give a directory outside it", name, s.dir, storeDir)}
	}
	return nil
}

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Leftover is a file outside cas/: a temp file a crashed writer left in
// tmp/, or a corrupt entry moved to quarantine/.
type Leftover struct {
	Path string
	Size int64
}

// Leftovers lists the files in tmp/ and quarantine/, sorted by path. Only
// call it while no other process writes to the store (a live writer's
// temp file is listed too).
func (s *Store) Leftovers() ([]Leftover, error) {
	var out []Leftover
	for _, d := range []string{quarantineDir, tmpDir} {
		dir := filepath.Join(s.root, d)
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store: list %s: %w", dir, err)
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue // removed since ReadDir
			}
			out = append(out, Leftover{Path: filepath.Join(dir, e.Name()), Size: info.Size()})
		}
	}
	return out, nil
}

// RemoveLeftover deletes one file Leftovers listed.
func (s *Store) RemoveLeftover(l Leftover) error {
	if err := os.Remove(l.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: remove %s: %w", l.Path, err)
	}
	return nil
}

package atomicfile

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// TempPrefix starts the name of every temporary file WriteFile and Write
// create, so that leftovers of a killed writer can be found and removed.
const TempPrefix = ".tmp-"

// WriteFile publishes data at path (mode 0644); path's directory must
// exist. If path already holds exactly data it is left untouched. Errors
// name the path.
func WriteFile(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return Write(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// Closer is what Finish needs of a file (*os.File, or a stand-in that
// injects faults).
type Closer interface {
	Chmod(mode fs.FileMode) error
	Sync() error
	Close() error
}

// Finish ends writing a temporary file that is about to take its final
// name: unless err (the writing's error) is already set, it makes f mode
// 0644 and syncs it; it closes f in every case, and returns the first
// error.
func Finish(f Closer, err error) error {
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Write publishes at path (mode 0644) what fill writes into a temporary
// file in path's directory, which must exist. On error nothing is left at
// path by this call and the temporary file is removed. Errors name the
// path.
func Write(path string, fill func(f *os.File) error) error {
	dir := filepath.Dir(path)
	f, err := CreateTemp(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	err = Finish(f, fill(f))
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = SyncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// SyncDir fsyncs a directory, so that a rename or link into it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// CreateTemp creates a temporary file for path in path's directory, named
// TempPrefix+base(path)+"-…", and holds an exclusive advisory lock on it
// until it is closed: RemoveStale then tells a live writer's file from
// one a killed writer left.
func CreateTemp(path string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// RemoveStale removes the temporary files of path and of the names that
// extend it (path.001, …) that no live writer holds: those a killed
// CreateTemp caller left. It returns the names removed.
func RemoveStale(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), TempPrefix+base) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, err := os.Open(p)
		if err != nil {
			continue // gone since ReadDir
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			if err := os.Remove(p); err == nil {
				removed = append(removed, p)
			}
		}
		f.Close()
	}
	return removed, nil
}

package file

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"zorepro/pipeline/atomicfile"
	"zorepro/pipeline/remote"
)

// Dir is a remote in a directory.
type Dir struct {
	root string
}

var _ remote.Backend = (*Dir)(nil)

// Open returns the remote in the directory root, creating it if needed.
func Open(root string) (*Dir, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("remote file://%s: %w", root, err)
	}
	return &Dir{root: root}, nil
}

func (d *Dir) String() string { return "file://" + d.root }

// path is the file of key, refusing a key that would leave the root.
func (d *Dir) path(key string) (string, error) {
	if key == "" || path.Clean(key) != key || strings.HasPrefix(key, "/") || strings.HasPrefix(key, "../") || key == ".." {
		return "", fmt.Errorf("%w: key %q is not a plain path", remote.ErrBadRemote, key)
	}
	return filepath.Join(d.root, filepath.FromSlash(key)), nil
}

func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %v", remote.ErrNotFound, err)
	}
	return err
}

func (d *Dir) Get(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	return f, notFound(err)
}

func (d *Dir) Head(_ context.Context, key string) (int64, error) {
	p, err := d.path(key)
	if err != nil {
		return 0, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0, notFound(err)
	}
	return fi.Size(), nil
}

func (d *Dir) Create(ctx context.Context, key string, r io.ReadSeeker, size int64) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err == nil {
		return fmt.Errorf("%w: %s", remote.ErrExists, key)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := atomicfile.CreateTemp(p)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	n, err := io.Copy(f, remote.ContextReader{Ctx: ctx, R: r})
	if err == nil && n != size {
		err = fmt.Errorf("remote %s: %s: read %d bytes, want %d", d, key, n, size)
	}
	if err := atomicfile.Finish(f, err); err != nil {
		return err
	}
	if err := os.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", remote.ErrExists, key)
		}
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(p))
}

func (d *Dir) Load(_ context.Context, key string) ([]byte, string, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, "", notFound(err)
	}
	return b, version(b), nil
}

func version(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func (d *Dir) Swap(ctx context.Context, key string, data []byte, ver string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	cur, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ver != "" {
			return fmt.Errorf("%w: %s was removed", remote.ErrConflict, key)
		}
	case err != nil:
		return err
	case ver == "" || version(cur) != ver:
		return fmt.Errorf("%w: %s", remote.ErrConflict, key)
	case bytes.Equal(cur, data):
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(p, data)
}

// lock takes the directory's exclusive lock, waiting for it until ctx
// is done.
func (d *Dir) lock(ctx context.Context) (func(), error) {
	f, err := os.Open(d.root)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", d.root, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (d *Dir) List(ctx context.Context, prefix string, fn func(key string, size int64, modified time.Time) error) error {
	return filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(d.root, p)
		key := filepath.ToSlash(rel)
		if e.IsDir() {
			if key != "." && !strings.HasPrefix(key+"/", prefix) && !strings.HasPrefix(prefix, key+"/") {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), atomicfile.TempPrefix) || !strings.HasPrefix(key, prefix) {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		return fn(key, fi.Size(), fi.ModTime())
	})
}

func (d *Dir) Delete(_ context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

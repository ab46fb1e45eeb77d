package slurm

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cespare/xxhash/v2"

	"zorepro/pipeline/atomicfile"
)

// freeze copies a file into dir under a name made of its content's hash
// and ext, unless that copy exists, and returns the copy's path and hash.
// Jobs run such copies, so that rebuilding the binary or editing the dag
// file while a run lasts affects only the next run.
func freeze(file, dir, prefix, ext string, mode os.FileMode) (path, sum string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	h := xxhash.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", fmt.Errorf("reading %s: %w", file, err)
	}
	sum = fmt.Sprintf("%016x", h.Sum64())
	path = filepath.Join(dir, prefix+sum+ext)
	if _, err := os.Stat(path); err == nil {
		return path, sum, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", "", err
	}
	err = atomicfile.Write(path, func(out *os.File) error {
		_, err := io.Copy(out, f)
		return err
	})
	if err == nil {
		err = os.Chmod(path, mode)
	}
	if err != nil {
		return "", "", fmt.Errorf("copying %s into the store: %w", file, err)
	}
	// The file may have changed while it was copied: the copy must be
	// what its name says.
	if got, err := fileSum(path); err != nil || got != sum {
		os.Remove(path)
		return "", "", fmt.Errorf("%s changed while it was copied into the store; run again", file)
	}
	return path, sum, nil
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := xxhash.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("%016x", h.Sum64()), nil
}

// pruneCopies removes the copies in dir that no build in keep uses (a
// build's name holds the hashes of its binary and dag copies).
func pruneCopies(dir string, keep []string) {
	for _, n := range names(dir) {
		used := false
		for _, k := range keep {
			if sum := strings.TrimSuffix(strings.TrimPrefix(n, "pipeline-"), ".yaml"); strings.Contains(k, sum) {
				used = true
			}
		}
		if !used {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

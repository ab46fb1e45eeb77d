package main

import (
	"os"
	"path/filepath"

	"zorepro/pipeline/atomicfile"
	"zorepro/pipeline/codeid"
	"zorepro/pipeline/dag"
)

// checkedDir remembers the dag files this build checked under every
// profile and found free of problems (dag.Options.Checked), as empty files
// named STAMP-SHA256 in a directory of the user's cache. The stamp names
// the build's whole code, the checks included, so another build checks
// again; a file that cannot be written only means checking again.
type checkedDir struct{ dir, stamp string }

// dagChecked returns the memory of checked dag files, or nil (every load
// checks every profile) for a build without a stamp or a user without a
// cache directory.
func dagChecked() dag.Checked {
	if codeid.Stamp == "" {
		return nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	return checkedDir{filepath.Join(base, "zorepro", "dag-checked"), codeid.Stamp}
}

func (c checkedDir) name(digest string) string { return filepath.Join(c.dir, c.stamp+"-"+digest) }

// Has implements dag.Checked.
func (c checkedDir) Has(digest string) bool {
	_, err := os.Stat(c.name(digest))
	return err == nil
}

// Add implements dag.Checked.
func (c checkedDir) Add(digest string) {
	if os.MkdirAll(c.dir, 0o755) == nil {
		_ = atomicfile.WriteFile(c.name(digest), nil)
	}
}

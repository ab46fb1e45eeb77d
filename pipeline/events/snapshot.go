package events

import (
	"fmt"
	"os"

	"zorepro/pipeline/atomicfile"

	bolt "go.etcd.io/bbolt"
)

// SnapshotPath is where a log's snapshot is kept: beside it, with a
// ".snapshot" suffix.
func SnapshotPath(path string) string { return path + ".snapshot" }

// Snapshot writes a consistent copy of the log, as of the latest commit,
// to SnapshotPath(l.Path()): into a temp file in one read transaction
// (concurrent commits go on meanwhile), fsynced, then renamed over the
// previous snapshot, so that a reader always finds a complete one. The
// writing process holds the log's exclusive lock, so read-only commands of
// other processes read the snapshot instead (OpenSnapshot).
func (l *Log) Snapshot() error {
	dst := SnapshotPath(l.path)
	err := atomicfile.Write(dst, func(f *os.File) error {
		return l.view(func(tx *bolt.Tx) error {
			_, err := tx.WriteTo(f)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("events: snapshot: %w", err)
	}
	return nil
}

// OpenSnapshot opens the snapshot of the log at path read-only. It
// returns an error wrapping fs.ErrNotExist when there is none.
func OpenSnapshot(path string, opt Options) (*Log, error) {
	snap := SnapshotPath(path)
	if _, err := os.Stat(snap); err != nil {
		return nil, fmt.Errorf("events: no snapshot of %s: %w", path, err)
	}
	opt.ReadOnly = true
	l, err := Open(snap, opt)
	if err != nil {
		return nil, err
	}
	l.snapshotOf = path
	return l, nil
}

// SnapshotOf returns the log a snapshot was taken of ("" for a log opened
// directly).
func (l *Log) SnapshotOf() string { return l.snapshotOf }

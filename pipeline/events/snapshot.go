package events

import (
	"errors"
	"fmt"
	"io/fs"
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
// returns an error wrapping fs.ErrNotExist when there is none. Follow
// moves it on to newer states of the log.
func OpenSnapshot(path string, opt Options) (*Log, error) {
	snap := SnapshotPath(path)
	info, err := os.Stat(snap)
	if err != nil {
		return nil, fmt.Errorf("events: no snapshot of %s: %w", path, err)
	}
	opt.ReadOnly = true
	l, err := Open(snap, opt)
	if err != nil {
		return nil, err
	}
	l.snapshotOf, l.follow = path, following{source: info}
	return l, nil
}

// SnapshotOf returns the log a snapshot was taken of ("" for a log opened
// directly).
func (l *Log) SnapshotOf() string { return l.snapshotOf }

// RemoveSnapshot removes the log's snapshot, if there is one. A run
// removes the previous run's snapshot when it starts and its own when it
// ends, so that a snapshot is always of a run in progress.
func (l *Log) RemoveSnapshot() error {
	err := os.Remove(SnapshotPath(l.path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("events: remove snapshot: %w", err)
	}
	return nil
}

// InProgress returns the latest run the log records if that run has not
// ended (its latest run event is RunStarted): for a snapshot, the run it
// is a snapshot of.
func (l *Log) InProgress() (run uint64, ok bool, err error) {
	runs, err := l.Runs()
	if err != nil || len(runs) == 0 {
		return 0, false, err
	}
	last := runs[len(runs)-1]
	return last.Run, last.State == RunStarted, nil
}

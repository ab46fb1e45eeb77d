package events

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// following is what a Log opened by OpenSnapshot or OpenCopy reads now:
// the file it opened and, when that is a private copy of the log itself,
// the copy's path.
type following struct {
	source os.FileInfo // the snapshot, or the log the copy was taken of
	copy   string      // a private copy Follow took, removed when replaced
}

// sameState reports whether info is the file f last moved to, unchanged.
func (f following) sameState(info os.FileInfo) bool {
	return f.source != nil && os.SameFile(f.source, info) &&
		f.source.ModTime().Equal(info.ModTime()) && f.source.Size() == info.Size()
}

func (f *following) removeCopy() error {
	if f.copy == "" {
		return nil
	}
	err := os.Remove(f.copy)
	f.copy = ""
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("events: remove the private copy: %w", err)
	}
	return nil
}

// followLock is how long Follow waits for the log itself when the run has
// removed its snapshot: a run that holds it has not ended.
const followLock = 20 * time.Millisecond

// OpenCopy opens a private copy of the log at path, taken in one read
// transaction under a shared lock that is released at once (the copy is a
// temporary file that Close removes): a long-lived reader of a store at
// rest, such as `pipeline serve`, that never holds the lock a later run
// needs. It fails as Open does when the log is locked, damaged or of
// another schema. Follow moves it on to newer states of the log.
func OpenCopy(path string, opt Options) (*Log, error) {
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	l := &Log{path: path, readOnly: true, snapshotOf: path}
	if _, err := l.copyFrom(timeout); err != nil {
		return nil, err
	}
	return l, nil
}

// Follow moves a log opened by OpenSnapshot or OpenCopy on to the newest
// state of the log it was taken of, and reports whether it moved. While a
// run holds that log, the newest state is the run's latest snapshot (a run
// replaces it every --snapshot-interval). A log no run holds is its own
// newest state, whatever snapshot a killed run left beside it: Follow
// copies it in one read transaction into a private temporary file and
// reads the copy (the log's lock is held for the copy only, so a later run
// can start; Close removes the copy), and copies it again only when the
// log changes. A run that holds the log without a snapshot yet leaves the
// log as it was. Reads in
// progress finish on the state they began with. On a log not opened by
// OpenSnapshot or OpenCopy, Follow does nothing.
func (l *Log) Follow() (bool, error) {
	if l.snapshotOf == "" {
		return false, nil
	}
	l.followMu.Lock()
	defer l.followMu.Unlock()
	// A log no run holds is its own newest state (a snapshot beside it is
	// a killed run's leftover, older than the log).
	moved, err := l.copyFrom(followLock)
	if !errors.Is(err, ErrLocked) {
		return moved, err
	}
	// A run holds it: its latest snapshot, once it has taken one.
	snap := SnapshotPath(l.snapshotOf)
	info, err := os.Stat(snap)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("events: follow %s: %w", l.snapshotOf, err)
	case l.following().sameState(info):
		return false, nil
	}
	db, err := openChecked(snap, defaultTimeout)
	if err != nil {
		return false, err
	}
	return true, l.swap(db, info, "")
}

// copyFrom moves the log on to a private copy of the log it was taken of,
// if that changed since the last copy, waiting up to timeout for its lock
// (an error wrapping ErrLocked if a run holds it).
func (l *Log) copyFrom(timeout time.Duration) (bool, error) {
	info, err := os.Stat(l.snapshotOf)
	if err != nil {
		return false, fmt.Errorf("events: follow %s: %w", l.snapshotOf, err)
	}
	if l.following().sameState(info) {
		return false, nil
	}
	orig, err := openChecked(l.snapshotOf, timeout)
	if err != nil {
		return false, err
	}
	copyPath, err := copyLog(orig, l.snapshotOf)
	if cerr := orig.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("events: close %s: %w", l.snapshotOf, cerr)
	}
	if err != nil {
		return false, err
	}
	db, err := openChecked(copyPath, defaultTimeout)
	if err != nil {
		os.Remove(copyPath)
		return false, err
	}
	return true, l.swap(db, info, copyPath)
}

// AtRest reports whether no run held the log when this Log read it: it
// was opened read-only on the log itself (a run's lock would have refused
// that), or reads a private copy of a log no run held (OpenCopy, and
// Follow once the run has ended). A run's own log, or a run's snapshot,
// is not at rest.
func (l *Log) AtRest() bool {
	return l.readOnly && (l.snapshotOf == "" || l.following().copy != "")
}

// Latest is the log's latest run (0 if none), whether it is in progress,
// and whether it was killed: a run that recorded only its start is in
// progress on a log a run holds, and was killed (or ended with its
// session) on a log at rest.
func (l *Log) Latest() (run uint64, inProgress, killed bool, err error) {
	run, started, err := l.InProgress()
	rest := l.AtRest() // read once: Follow may move the log between two reads
	return run, started && !rest, started && rest, err
}

func (l *Log) following() following {
	l.dbMu.RLock()
	defer l.dbMu.RUnlock()
	return l.follow
}

// AsOf returns when the state the log shows was written, for a log that
// reads a running run's snapshot (OpenSnapshot, or Follow moved it on to
// one): the snapshot's modification time, up to --snapshot-interval
// behind the run. It returns the zero time for a log whose state is the
// log's own (opened directly, or a private copy of a log at rest).
func (l *Log) AsOf() time.Time {
	f := l.following()
	if l.snapshotOf == "" || f.source == nil || f.copy != "" {
		return time.Time{}
	}
	return f.source.ModTime()
}

// openChecked opens a log file read-only, waiting up to timeout for its
// lock, and checks it as Open does.
func openChecked(path string, timeout time.Duration) (*bolt.DB, error) {
	db, err := openBolt(path, true, timeout, time.Now().Add(timeout))
	if err != nil {
		return nil, err
	}
	if err := check(db, path); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// copyLog writes db, as of one read transaction, to a new temporary file
// and returns its path.
func copyLog(db *bolt.DB, path string) (string, error) {
	f, err := os.CreateTemp("", "pipeline-events-copy-*.db")
	if err != nil {
		return "", fmt.Errorf("events: copy %s: %w", path, err)
	}
	err = viewDB(db, func(tx *bolt.Tx) error {
		_, err := tx.WriteTo(f)
		return err
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("events: copy %s: %w", path, err)
	}
	return f.Name(), nil
}

// swap makes db the log's database, once the reads in progress on the old
// one have finished, and closes the old one and its copy.
func (l *Log) swap(db *bolt.DB, source os.FileInfo, copyPath string) error {
	l.dbMu.Lock()
	old, oldFollow := l.db, l.follow
	l.db, l.follow = db, following{source: source, copy: copyPath}
	l.dbMu.Unlock()
	var err error
	if old != nil {
		if err = old.Close(); err != nil {
			err = fmt.Errorf("events: close %s: %w", l.path, err)
		}
	}
	return errors.Join(err, oldFollow.removeCopy())
}

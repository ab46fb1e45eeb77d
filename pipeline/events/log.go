package events

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"zorepro/pipeline/atomicfile"
	"zorepro/pipeline/crashpoint"
	"zorepro/pipeline/task"
)

// SchemaVersion is the layout version described in doc.go; bump it by hand
// when the layout changes.
const SchemaVersion = 2

// Bucket names.
var (
	bucketMeta        = []byte("meta")
	bucketLog         = []byte("log")
	bucketIter        = []byte("iter")
	bucketTasks       = []byte("tasks")
	bucketTaskPaths   = []byte("taskpaths")
	bucketTaskEvents  = []byte("taskevents")
	bucketRunEvents   = []byte("runevents")
	bucketActions     = []byte("actions")
	bucketCheckpoints = []byte("checkpoints")
	bucketTranscripts = []byte("transcripts")
	bucketLastState   = []byte("laststate")
	bucketRuns        = []byte("runs")

	allBuckets = [][]byte{
		bucketMeta, bucketLog, bucketIter, bucketTasks, bucketTaskPaths,
		bucketTaskEvents, bucketRunEvents, bucketActions, bucketCheckpoints,
		bucketTranscripts, bucketLastState, bucketRuns,
	}

	keySchema = []byte("schema")
)

// Options configure Open.
type Options struct {
	// Timeout bounds the wait for the file lock; zero means 1s.
	Timeout time.Duration
	// ReadOnly opens the log for reading only (shared lock, no writes).
	ReadOnly bool
	// BeforeCommit, if set, is called at the start of every write
	// transaction, and an error from it fails the commit. It is a test
	// seam: tests outside this package use it to simulate a full disk.
	BeforeCommit func() error
}

const defaultTimeout = time.Second

// Log is an open event log. Its methods are safe for concurrent use.
type Log struct {
	// dbMu guards db, which Follow replaces; every transaction holds it
	// for reading.
	dbMu       sync.RWMutex
	db         *bolt.DB
	path       string
	readOnly   bool
	snapshotOf string // set by OpenSnapshot

	followMu sync.Mutex // one Follow at a time
	follow   following  // what Follow last moved to; guarded by dbMu

	commits atomic.Uint64 // committed write transactions, for tests

	// beforeCommit, if set by a test, runs at the start of every write
	// transaction; an error from it fails the commit.
	beforeCommit func(*bolt.Tx) error

	mu     sync.Mutex
	writer *Writer // the open Writer, if any
}

// Open opens the event log at path, creating a new one if no file exists
// there (unless opt.ReadOnly). It never modifies an existing file that is
// not a valid log; see doc.go.
func Open(path string, opt Options) (*Log, error) {
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	deadline := time.Now().Add(timeout)
	if !opt.ReadOnly {
		if err := createIfMissing(path, timeout); err != nil {
			return nil, err
		}
	}
	// Validate under a read-only handle first: a read-write bbolt open
	// reads the freelist page, which faults if the file is truncated.
	db, err := openBolt(path, true, timeout, deadline)
	if err != nil {
		return nil, err
	}
	if err := check(db, path); err != nil {
		db.Close()
		return nil, err
	}
	if !opt.ReadOnly {
		db.Close()
		if db, err = openBolt(path, false, timeout, deadline); err != nil {
			return nil, err
		}
		if err := check(db, path); err != nil {
			db.Close()
			return nil, err
		}
	}
	l := &Log{db: db, path: path, readOnly: opt.ReadOnly}
	if opt.BeforeCommit != nil {
		l.beforeCommit = func(*bolt.Tx) error { return opt.BeforeCommit() }
	}
	return l, nil
}

// createIfMissing builds a complete empty log under a temporary name and
// hard-links it to path, so that path never holds a half-made log. If path
// exists (or appears meanwhile) it is left alone.
func createIfMissing(path string, timeout time.Duration) error {
	if _, err := os.Lstat(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil // exists, or the open below reports why it cannot be read
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("events: create %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = f.Chmod(0o644)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = initLog(tmp, timeout)
	}
	if err == nil {
		err = os.Link(tmp, path)
		if errors.Is(err, fs.ErrExist) {
			return nil // another process created it first
		}
	}
	if err == nil {
		err = atomicfile.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("events: create %s: %w", path, err)
	}
	return nil
}

func initLog(tmp string, timeout time.Duration) error {
	db, err := bolt.Open(tmp, 0o644, &bolt.Options{Timeout: timeout})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchema, u32(SchemaVersion))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// openBolt opens an existing file (never creating it) and maps bbolt's
// errors, panics and memory faults to ErrLocked and ErrCorruptLog.
func openBolt(path string, readOnly bool, timeout time.Duration, deadline time.Time) (db *bolt.DB, err error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("events: open %s: %w", path, err)
	}
	if info.Size() == 0 {
		return nil, corruptError(path, "the file is empty", nil)
	}
	var file *os.File
	opts := &bolt.Options{
		// bbolt treats 0 as "wait forever"; never pass it.
		Timeout:  max(time.Until(deadline), time.Millisecond),
		ReadOnly: readOnly,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag&^os.O_CREATE, perm)
			file = f
			return f, err
		},
	}
	func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if r := recover(); r != nil {
				if file != nil {
					file.Close() // releases the lock; the mapping leaks
				}
				db, err = nil, corruptError(path, fmt.Sprintf("bbolt failed reading it: %v", r), nil)
			}
		}()
		db, err = bolt.Open(path, 0o644, opts)
	}()
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, ErrCorruptLog):
		return nil, err
	case errors.Is(err, berrors.ErrTimeout):
		return nil, &openError{
			msg: fmt.Sprintf("events: %s is locked by another pipeline process (waited %s); "+
				"wait for it to finish or stop it", path, timeout),
			kind:  ErrLocked,
			cause: err,
		}
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, berrors.ErrVersionMismatch),
		// bbolt has no sentinel for a file shorter than its two meta
		// pages; TestOpenCorrupt ("one page") pins this text.
		strings.HasPrefix(err.Error(), "file size too small"):
		return nil, corruptError(path, "bbolt cannot read it ("+err.Error()+")", err)
	default:
		return nil, fmt.Errorf("events: open %s: %w", path, err)
	}
}

// check verifies, before any page other than the meta pages is read, that
// the file holds every page bbolt will address, then the schema and buckets.
func check(db *bolt.DB, path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("events: open %s: %w", path, err)
	}
	err = viewDB(db, func(tx *bolt.Tx) error {
		if tx.Size() > info.Size() {
			return corruptError(path, fmt.Sprintf("the file is %d bytes but its pages extend to %d bytes (truncated)",
				info.Size(), tx.Size()), nil)
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return corruptError(path, "it is a bbolt database without a meta bucket, not a pipeline event log", nil)
		}
		v := meta.Get(keySchema)
		if len(v) != 4 {
			return corruptError(path, fmt.Sprintf("its schema version is %d bytes, want 4", len(v)), nil)
		}
		if got := binary.BigEndian.Uint32(v); got != SchemaVersion {
			return &openError{
				msg: fmt.Sprintf("events: %s has schema version %d but this binary reads version %d; "+
					"the file was not modified. Use a pipeline binary built for schema %d, or move the file "+
					"aside to start a new log (artifacts in the store are kept)", path, got, SchemaVersion, got),
				kind: ErrSchema,
			}
		}
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				return corruptError(path, fmt.Sprintf("bucket %q is missing", name), nil)
			}
		}
		return nil
	})
	var oe *openError
	if err != nil && !errors.As(err, &oe) {
		// A bbolt panic or fault on a damaged page.
		return corruptError(path, strings.TrimPrefix(err.Error(), ErrCorruptLog.Error()+": "), err)
	}
	return err
}

func corruptError(path, reason string, cause error) error {
	return &openError{
		msg: fmt.Sprintf("events: %s is not a valid event log: %s. The file was not modified. "+
			"To recover, restore it from a backup, or move it aside (e.g. mv %s %s.corrupt) and run again "+
			"to start a new log: the artifacts in the store are kept, and tasks rerun since their records were in this file",
			path, reason, path, path),
		kind:  ErrCorruptLog,
		cause: cause,
	}
}

// viewDB runs fn in a read transaction, turning a bbolt panic or memory
// fault on a damaged page into ErrCorruptLog.
func viewDB(db *bolt.DB, fn func(*bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: reading failed: %v", ErrCorruptLog, r)
		}
	}()
	return db.View(fn)
}

// view runs fn in one read transaction (one consistent snapshot) and wraps
// its error with the log's path; damage is reported as by Open, saying how
// to recover.
func (l *Log) view(fn func(*bolt.Tx) error) error {
	l.dbMu.RLock()
	err := viewDB(l.db, fn)
	l.dbMu.RUnlock()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrCorruptLog):
		return corruptError(l.path, strings.TrimPrefix(err.Error(), ErrCorruptLog.Error()+": "), err)
	default:
		return fmt.Errorf("events: read %s: %w", l.path, err)
	}
}

// update runs fn in one write transaction and counts the commit. Callers
// wrap its error with the path.
func (l *Log) update(fn func(*wtx) error) (err error) {
	if l.readOnly {
		return ErrReadOnly
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: writing failed: %v", ErrCorruptLog, r)
		}
	}()
	l.dbMu.RLock()
	defer l.dbMu.RUnlock()
	err = l.db.Update(func(tx *bolt.Tx) error {
		if l.beforeCommit != nil {
			if err := l.beforeCommit(tx); err != nil {
				return err
			}
		}
		if err := fn(newWtx(tx)); err != nil {
			return err
		}
		crashpoint.Hit("events.before-commit")
		return nil
	})
	if err == nil {
		l.commits.Add(1)
		crashpoint.Hit("events.after-commit")
	}
	return err
}

// Path returns the file the log was opened from.
func (l *Log) Path() string { return l.path }

// Close closes the open Writer, if any (flushing it), then the file. It
// returns the Writer's error, if any, joined with the file's.
func (l *Log) Close() error {
	l.mu.Lock()
	w := l.writer
	l.mu.Unlock()
	var werr error
	if w != nil {
		werr = w.Close()
	}
	l.dbMu.Lock()
	defer l.dbMu.Unlock()
	if err := l.db.Close(); err != nil {
		return errors.Join(werr, fmt.Errorf("events: close %s: %w", l.path, err))
	}
	return errors.Join(werr, l.follow.removeCopy())
}

// BeginRun allocates a run ID and commits its "run"/"started" event with
// data (free-form JSON, may be nil) and the time in unix nanoseconds. It
// commits synchronously, outside any Writer's batches.
func (l *Log) BeginRun(data json.RawMessage, unixNanos int64) (run uint64, err error) {
	ev := Event{Type: TypeRun, State: RunStarted, Time: unixNanos, Data: data}
	if err := validate(&ev); err != nil {
		return 0, err
	}
	err = l.update(func(w *wtx) error {
		var err error
		if run, err = w.runs.NextSequence(); err != nil {
			return err
		}
		ev.Run = run
		return w.apply(&ev)
	})
	if err != nil {
		return 0, fmt.Errorf("events: begin run in %s: %w", l.path, err)
	}
	return run, nil
}

// wtx is one write transaction with its buckets looked up once.
type wtx struct {
	log, iter, tasks, taskPaths, taskEvents, runEvents *bolt.Bucket
	actions, checkpoints, transcripts, lastState, runs *bolt.Bucket

	taskIDs map[string]uint32 // looked up or allocated in this transaction
}

func newWtx(tx *bolt.Tx) *wtx {
	return &wtx{
		log:         tx.Bucket(bucketLog),
		iter:        tx.Bucket(bucketIter),
		tasks:       tx.Bucket(bucketTasks),
		taskPaths:   tx.Bucket(bucketTaskPaths),
		taskEvents:  tx.Bucket(bucketTaskEvents),
		runEvents:   tx.Bucket(bucketRunEvents),
		actions:     tx.Bucket(bucketActions),
		checkpoints: tx.Bucket(bucketCheckpoints),
		transcripts: tx.Bucket(bucketTranscripts),
		lastState:   tx.Bucket(bucketLastState),
		runs:        tx.Bucket(bucketRuns),
		taskIDs:     map[string]uint32{},
	}
}

// taskID returns the ID of a task path, allocating one if needed. The empty
// path is 0.
func (w *wtx) taskID(task string) (uint32, error) {
	if task == "" {
		return 0, nil
	}
	if id, ok := w.taskIDs[task]; ok {
		return id, nil
	}
	var id uint32
	if v := w.tasks.Get([]byte(task)); v != nil {
		if len(v) != 4 {
			return 0, fmt.Errorf("%w: task %q has a %d-byte id", ErrCorruptLog, task, len(v))
		}
		id = binary.BigEndian.Uint32(v)
	} else {
		n, err := w.tasks.NextSequence()
		if err != nil {
			return 0, err
		}
		if n > 1<<32-1 {
			return 0, fmt.Errorf("events: task ids exhausted at %q", task)
		}
		id = uint32(n)
		if err := w.tasks.Put([]byte(task), u32(id)); err != nil {
			return 0, err
		}
		if err := w.taskPaths.Put(u32(id), []byte(task)); err != nil {
			return 0, err
		}
	}
	w.taskIDs[task] = id
	return id, nil
}

// apply assigns ev its seq and stores it with every index it changes.
func (w *wtx) apply(ev *Event) error {
	seq, err := w.log.NextSequence()
	if err != nil {
		return err
	}
	ev.Seq = seq
	tid, err := w.taskID(ev.Task)
	if err != nil {
		return err
	}
	if ev.Type == TypeIter {
		its := ev.Iters
		if ev.Iter != nil {
			its = []task.Iter{*ev.Iter}
		}
		return w.iter.Put(iterKey(tid, ev.Run, its[0].Iteration), appendBlock(nil, its))
	}
	val, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("events: encode %s event of task %q: %w", ev.Type, ev.Task, err)
	}
	if err := w.log.Put(u64(seq), val); err != nil {
		return err
	}
	if tid != 0 {
		if err := w.taskEvents.Put(pairKey(u32(tid), seq), nil); err != nil {
			return err
		}
	}
	if ev.Run != 0 {
		if err := w.runEvents.Put(pairKey(u64(ev.Run), seq), nil); err != nil {
			return err
		}
	}
	switch ev.Type {
	case TypeRun:
		if ev.Run != 0 {
			return w.runs.Put(u64(ev.Run), val)
		}
	case TypeState:
		return w.applyState(ev)
	case TypeCheckpoint:
		if ev.Action != "" && ev.Checkpoint != nil {
			return putJSON(w.checkpoints, ev.Action, CheckpointRecord{
				Task: ev.Task, Run: ev.Run, Content: ev.Checkpoint.Content,
				Iteration: ev.Checkpoint.Iteration, Seq: ev.Seq,
			})
		}
	case TypeTranscript:
		if ev.Task != "" {
			return w.applyTranscript(ev)
		}
	}
	return nil
}

func (w *wtx) applyState(ev *Event) error {
	if ev.Task != "" {
		err := putJSON(w.lastState, ev.Task, StateRecord{
			Task: ev.Task, Run: ev.Run, State: ev.State, Action: ev.Action,
			Output: ev.Output, Error: ev.Error, Seq: ev.Seq, Time: ev.Time,
		})
		if err != nil {
			return err
		}
	}
	if ev.State == StateDone && ev.Action != "" && ev.Output != "" {
		return putJSON(w.actions, ev.Action, ActionRecord{Task: ev.Task, Run: ev.Run, Output: ev.Output, Seq: ev.Seq})
	}
	return nil
}

func (w *wtx) applyTranscript(ev *Event) error {
	var pair transcriptPair
	if v := w.transcripts.Get([]byte(ev.Task)); v != nil {
		if err := json.Unmarshal(v, &pair); err != nil {
			return fmt.Errorf("%w: transcripts of %q: %v", ErrCorruptLog, ev.Task, err)
		}
	}
	pair.Previous = pair.Latest
	pair.Latest = TranscriptRecord{Task: ev.Task, Run: ev.Run, Action: ev.Action, Transcript: ev.Transcript, Seq: ev.Seq}
	return putJSON(w.transcripts, ev.Task, pair)
}

func putJSON(b *bolt.Bucket, key string, v any) error {
	val, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put([]byte(key), val)
}

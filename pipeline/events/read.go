package events

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"zorepro/pipeline/task"

	bolt "go.etcd.io/bbolt"
)

// Events returns every non-iter event of task in seq order.
func (l *Log) Events(task string) ([]Event, error) {
	var evs []Event
	err := l.view(func(tx *bolt.Tx) error {
		tid, ok, err := lookupTask(tx, task)
		if err != nil || !ok {
			return err
		}
		evs, err = indexedEvents(tx, bucketTaskEvents, u32(tid))
		return err
	})
	return evs, err
}

// RunEvents returns every non-iter event of run in seq order.
func (l *Log) RunEvents(run uint64) ([]Event, error) {
	var evs []Event
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		evs, err = indexedEvents(tx, bucketRunEvents, u64(run))
		return err
	})
	return evs, err
}

// RunEventsAfter returns the non-iter events of run whose seq is above
// after, in seq order: what a reader that has seen run's events up to
// after still has to read.
func (l *Log) RunEventsAfter(run, after uint64) ([]Event, error) {
	var evs []Event
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		evs, err = indexedEventsFrom(tx, bucketRunEvents, u64(run), after+1)
		return err
	})
	return evs, err
}

// RunStart returns the event that started run (its Data is what the run
// recorded about itself: arguments, profile, dag file); ok is false for a
// run the log does not hold.
func (l *Log) RunStart(run uint64) (ev Event, ok bool, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		evs, err := indexedEvents(tx, bucketRunEvents, u64(run), 1)
		if err != nil || len(evs) == 0 {
			return err
		}
		if evs[0].Type != TypeRun || evs[0].State != RunStarted {
			return fmt.Errorf("%w: run %d begins with a %s/%s event", ErrCorruptLog, run, evs[0].Type, evs[0].State)
		}
		ev, ok = evs[0], true
		return nil
	})
	return ev, ok, err
}

// indexedEvents reads the events whose seqs follow prefix in an index
// bucket (taskevents or runevents), at most limit of them (0: all).
func indexedEvents(tx *bolt.Tx, index, prefix []byte, limit ...int) ([]Event, error) {
	return indexedEventsFrom(tx, index, prefix, 0, limit...)
}

// indexedEventsFrom is indexedEvents from the seq from on.
func indexedEventsFrom(tx *bolt.Tx, index, prefix []byte, from uint64, limit ...int) ([]Event, error) {
	logb := tx.Bucket(bucketLog)
	var evs []Event
	c := tx.Bucket(index).Cursor()
	start := binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), from)
	for k, _ := c.Seek(start); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) != len(prefix)+8 {
			return nil, fmt.Errorf("%w: %s key of %d bytes", ErrCorruptLog, index, len(k))
		}
		seq := k[len(prefix):]
		v := logb.Get(seq)
		if v == nil {
			return nil, fmt.Errorf("%w: %s lists seq %d, which is not in the log", ErrCorruptLog, index, binary.BigEndian.Uint64(seq))
		}
		var ev Event
		if err := json.Unmarshal(v, &ev); err != nil {
			return nil, fmt.Errorf("%w: event %d: %v", ErrCorruptLog, binary.BigEndian.Uint64(seq), err)
		}
		if ev.Seq != binary.BigEndian.Uint64(seq) {
			return nil, fmt.Errorf("%w: event %d holds seq %d", ErrCorruptLog, binary.BigEndian.Uint64(seq), ev.Seq)
		}
		evs = append(evs, ev)
		if len(limit) > 0 && len(evs) == limit[0] {
			break
		}
	}
	return evs, nil
}

// lookupTask returns the ID of a task path; ok is false for a task never
// logged. The empty path is ID 0.
func lookupTask(tx *bolt.Tx, task string) (id uint32, ok bool, err error) {
	if task == "" {
		return 0, true, nil
	}
	v := tx.Bucket(bucketTasks).Get([]byte(task))
	if v == nil {
		return 0, false, nil
	}
	if len(v) != 4 {
		return 0, false, fmt.Errorf("%w: task %q has a %d-byte id", ErrCorruptLog, task, len(v))
	}
	return binary.BigEndian.Uint32(v), true, nil
}

// Iterations returns the iterations of task in run in iteration order.
func (l *Log) Iterations(path string, run uint64) ([]task.Iter, error) {
	var its []task.Iter
	err := l.view(func(tx *bolt.Tx) error {
		tid, ok, err := lookupTask(tx, path)
		if err != nil || !ok {
			return err
		}
		prefix := binary.BigEndian.AppendUint64(u32(tid), run)
		c := tx.Bucket(bucketIter).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != 20 {
				return fmt.Errorf("%w: iter key of %d bytes", ErrCorruptLog, len(k))
			}
			block, err := decodeBlock(int64(binary.BigEndian.Uint64(k[12:])), v)
			if err != nil {
				return fmt.Errorf("path %q run %d: %w", path, run, err)
			}
			its = append(its, block...)
		}
		return nil
	})
	return its, err
}

// LastIteration returns the latest iteration of task in run (ok false
// when it has none), reading only the last block: what a progress display
// asks for many times a second, without decoding a long run's thousands.
func (l *Log) LastIteration(path string, run uint64) (it task.Iter, ok bool, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		tid, known, err := lookupTask(tx, path)
		if err != nil || !known {
			return err
		}
		prefix := binary.BigEndian.AppendUint64(u32(tid), run)
		end := binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), math.MaxUint64)
		c := tx.Bucket(bucketIter).Cursor()
		k, v := c.Seek(end)
		switch {
		case k == nil:
			k, v = c.Last()
		case !bytes.Equal(k, end):
			k, v = c.Prev()
		}
		if k == nil || !bytes.HasPrefix(k, prefix) {
			return nil
		}
		if len(k) != 20 {
			return fmt.Errorf("%w: iter key of %d bytes", ErrCorruptLog, len(k))
		}
		block, err := decodeBlock(int64(binary.BigEndian.Uint64(k[12:])), v)
		if err != nil {
			return fmt.Errorf("path %q run %d: %w", path, run, err)
		}
		if len(block) > 0 {
			it, ok = block[len(block)-1], true
		}
		return nil
	})
	return it, ok, err
}

// IterRuns returns, in ascending order, the runs with iterations of task.
func (l *Log) IterRuns(task string) ([]uint64, error) {
	var runs []uint64
	err := l.view(func(tx *bolt.Tx) error {
		tid, ok, err := lookupTask(tx, task)
		if err != nil || !ok {
			return err
		}
		prefix := u32(tid)
		c := tx.Bucket(bucketIter).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); {
			if len(k) != 20 {
				return fmt.Errorf("%w: iter key of %d bytes", ErrCorruptLog, len(k))
			}
			run := binary.BigEndian.Uint64(k[4:12])
			runs = append(runs, run)
			if run == math.MaxUint64 {
				break
			}
			k, _ = c.Seek(binary.BigEndian.AppendUint64(u32(tid), run+1)) // skip to the next run
		}
		return nil
	})
	return runs, err
}

// Action returns the record of the run that produced action's output; ok
// is false if no "done" state event with that action and an output exists.
func (l *Log) Action(action string) (rec ActionRecord, ok bool, err error) {
	ok, err = l.getJSON(bucketActions, action, &rec)
	return rec, ok, err
}

// Checkpoint returns the latest checkpoint of action.
func (l *Log) Checkpoint(action string) (rec CheckpointRecord, ok bool, err error) {
	ok, err = l.getJSON(bucketCheckpoints, action, &rec)
	return rec, ok, err
}

// Transcripts returns the latest and the previous transcript of task, so
// that callers can diff them; previous is zero if there was only one.
func (l *Log) Transcripts(task string) (latest, previous TranscriptRecord, ok bool, err error) {
	var pair transcriptPair
	ok, err = l.getJSON(bucketTranscripts, task, &pair)
	return pair.Latest, pair.Previous, ok, err
}

func (l *Log) getJSON(bucket []byte, key string, v any) (ok bool, err error) {
	if key == "" {
		return false, nil
	}
	err = l.view(func(tx *bolt.Tx) error {
		val := tx.Bucket(bucket).Get([]byte(key))
		if val == nil {
			return nil
		}
		ok = true
		if err := json.Unmarshal(val, v); err != nil {
			return fmt.Errorf("%w: %s[%q]: %v", ErrCorruptLog, bucket, key, err)
		}
		return nil
	})
	return ok, err
}

// LastState returns one task's last state (ok false for a task never
// logged): one read of the "laststate" index, not all of it.
func (l *Log) LastState(task string) (rec StateRecord, ok bool, err error) {
	ok, err = l.getJSON(bucketLastState, task, &rec)
	rec.Task = task
	return rec, ok, err
}

// LastStates returns every task's last state, sorted by task path.
func (l *Log) LastStates() ([]StateRecord, error) {
	var recs []StateRecord
	err := l.view(func(tx *bolt.Tx) error {
		return forEachJSON(tx, bucketLastState, func(k []byte, r StateRecord) error {
			r.Task = string(k)
			recs = append(recs, r)
			return nil
		})
	})
	return recs, err
}

// Runs returns the latest "run" event of every run, by ascending run ID.
func (l *Log) Runs() ([]Event, error) {
	var evs []Event
	err := l.view(func(tx *bolt.Tx) error {
		return forEachJSON(tx, bucketRuns, func(k []byte, ev Event) error {
			if len(k) != 8 || ev.Run != binary.BigEndian.Uint64(k) {
				return fmt.Errorf("%w: runs[%x] holds run %d", ErrCorruptLog, k, ev.Run)
			}
			evs = append(evs, ev)
			return nil
		})
	})
	return evs, err
}

// Stats returns the number of stored non-iter events and of stored
// iterations (blocks are counted by their iterations).
func (l *Log) Stats() (events, iters uint64, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		events = uint64(tx.Bucket(bucketLog).Stats().KeyN)
		return tx.Bucket(bucketIter).ForEach(func(k, v []byte) error {
			if len(k) != 20 {
				return fmt.Errorf("%w: iter key of %d bytes", ErrCorruptLog, len(k))
			}
			block, err := decodeBlock(int64(binary.BigEndian.Uint64(k[12:])), v)
			iters += uint64(len(block))
			return err
		})
	})
	return events, iters, err
}

// Scan calls fn with every non-iter event in seq order, inside one read
// transaction (so fn must not use the Log).
func (l *Log) Scan(fn func(Event) error) error {
	return l.view(func(tx *bolt.Tx) error {
		return forEachJSON(tx, bucketLog, func(_ []byte, ev Event) error { return fn(ev) })
	})
}

// forEachJSON decodes every value of bucket, in key order, and calls fn
// with its key and value; a value that does not decode is ErrCorruptLog,
// naming the bucket and key.
func forEachJSON[T any](tx *bolt.Tx, bucket []byte, fn func(k []byte, v T) error) error {
	return tx.Bucket(bucket).ForEach(func(k, v []byte) error {
		var x T
		if err := json.Unmarshal(v, &x); err != nil {
			if !printable(k) {
				return fmt.Errorf("%w: %s[%x]: %v", ErrCorruptLog, bucket, k, err)
			}
			return fmt.Errorf("%w: %s[%q]: %v", ErrCorruptLog, bucket, k, err)
		}
		return fn(k, x)
	})
}

// printable reports whether a key is text (a task path) rather than a
// binary sequence number.
func printable(k []byte) bool {
	for _, c := range k {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

package events

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// openTest opens a new log in a temp dir. At cleanup it checks bbolt's
// consistency and that every derived bucket equals a replay of the log,
// then closes the log.
func openTest(t testing.TB) *Log {
	t.Helper()
	l, _ := openTestAt(t)
	return l
}

// openTestAt is openTest that also returns the log's path.
func openTestAt(t testing.TB) (*Log, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.db")
	l, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		verify(t, l)
		l.Close()
	})
	return l, path
}

// beginRun begins a run in l (BeginRun), failing t on error.
func beginRun(t testing.TB, l *Log, cmd json.RawMessage, at int64) uint64 {
	t.Helper()
	run, err := l.BeginRun(cmd, at)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// verify (skipped once the database is closed) runs bbolt's consistency check and recomputes every derived
// bucket from the "log" bucket, comparing it with what is stored.
func verify(t testing.TB, l *Log) {
	t.Helper()
	err := l.db.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return fmt.Errorf("bbolt check: %v", errs)
		}
		want, err := replayIndexes(t, tx)
		if err != nil {
			return err
		}
		for _, name := range []string{"taskevents", "runevents", "runs", "laststate", "actions", "checkpoints", "transcripts"} {
			got := map[string][]byte{}
			tx.Bucket([]byte(name)).ForEach(func(k, v []byte) error {
				got[string(k)] = append([]byte(nil), v...)
				return nil
			})
			if len(got) != len(want[name]) {
				return fmt.Errorf("bucket %s has %d keys, replay gives %d", name, len(got), len(want[name]))
			}
			for k, w := range want[name] {
				if g, ok := got[k]; !ok || !bytes.Equal(g, w) {
					return fmt.Errorf("bucket %s key %q = %s, replay gives %s", name, k, g, w)
				}
			}
		}
		return checkTaskMapsAndIters(tx)
	})
	if err != nil && !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		t.Errorf("verify %s: %v", l.path, err)
	}
}

// replayIndexes recomputes every index bucket from the log bucket alone:
// what the current state must be, as a pure function of the log.
func replayIndexes(t testing.TB, tx *bolt.Tx) (map[string]map[string][]byte, error) {
	want := map[string]map[string][]byte{}
	for _, b := range allBuckets {
		want[string(b)] = map[string][]byte{}
	}
	put := func(bucket string, key []byte, v any) {
		if raw, ok := v.([]byte); ok || v == nil {
			want[bucket][string(key)] = raw
			return
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want[bucket][string(key)] = raw
	}
	tasks := tx.Bucket(bucketTasks)
	pairs := map[string]transcriptPair{}
	var lastSeq uint64
	err := tx.Bucket(bucketLog).ForEach(func(k, v []byte) error {
		var ev Event
		if err := json.Unmarshal(v, &ev); err != nil {
			return err
		}
		if ev.Seq != binary.BigEndian.Uint64(k) || ev.Seq <= lastSeq {
			return fmt.Errorf("log key %x holds seq %d after %d", k, ev.Seq, lastSeq)
		}
		lastSeq = ev.Seq
		if ev.Task != "" {
			id := tasks.Get([]byte(ev.Task))
			if id == nil {
				return fmt.Errorf("task %q has no id", ev.Task)
			}
			put("taskevents", pairKey(id, ev.Seq), nil)
		}
		if ev.Run != 0 {
			put("runevents", pairKey(u64(ev.Run), ev.Seq), nil)
		}
		switch ev.Type {
		case TypeRun:
			if ev.Run != 0 {
				put("runs", u64(ev.Run), append([]byte(nil), v...))
			}
		case TypeState:
			if ev.Task != "" {
				put("laststate", []byte(ev.Task), StateRecord{ev.Task, ev.Run, ev.State, ev.Action, ev.Output, ev.Error, ev.Seq, ev.Time})
			}
			if ev.State == StateDone && ev.Action != "" && ev.Output != "" {
				put("actions", []byte(ev.Action), ActionRecord{ev.Task, ev.Run, ev.Output, ev.Seq})
			}
		case TypeCheckpoint:
			if ev.Action != "" && ev.Checkpoint != nil {
				put("checkpoints", []byte(ev.Action), CheckpointRecord{ev.Task, ev.Run, ev.Checkpoint.Content, ev.Checkpoint.Iteration, ev.Seq})
			}
		case TypeTranscript:
			if ev.Task != "" {
				p := pairs[ev.Task]
				p.Previous, p.Latest = p.Latest, TranscriptRecord{ev.Task, ev.Run, ev.Action, ev.Transcript, ev.Seq}
				pairs[ev.Task] = p
				put("transcripts", []byte(ev.Task), p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if seq := tx.Bucket(bucketLog).Sequence(); seq < lastSeq {
		return nil, fmt.Errorf("log sequence %d below last stored seq %d", seq, lastSeq)
	}
	return want, nil
}

// checkTaskMapsAndIters checks that tasks and taskpaths are inverse maps
// and that every iteration record decodes.
func checkTaskMapsAndIters(tx *bolt.Tx) error {
	tasks := tx.Bucket(bucketTasks)
	n := 0
	err := tasks.ForEach(func(k, v []byte) error {
		n++
		if p := tx.Bucket(bucketTaskPaths).Get(v); !bytes.Equal(p, k) {
			return fmt.Errorf("tasks[%q] = %x but taskpaths[%x] = %q", k, v, v, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if m := tx.Bucket(bucketTaskPaths).Stats().KeyN; m != n {
		return fmt.Errorf("tasks has %d keys, taskpaths %d", n, m)
	}
	return tx.Bucket(bucketIter).ForEach(func(k, v []byte) error {
		if len(k) != 20 {
			return fmt.Errorf("iter key %x", k)
		}
		_, err := decodeBlock(int64(binary.BigEndian.Uint64(k[12:])), v)
		return err
	})
}

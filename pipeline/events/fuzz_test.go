package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"zorepro/pipeline/task"

	bolt "go.etcd.io/bbolt"
)

// fuzzTasks are the tasks of the log fuzzLog builds; the fuzzers read them.
var fuzzTasks = []string{"a", "b/seed=1"}

// fuzzLog fills l with a little of everything: two runs, every derived
// index, iteration blocks.
func fuzzLog(t testing.TB, l *Log) {
	t.Helper()
	for run := uint64(1); run <= 2; run++ {
		if _, err := l.BeginRun(json.RawMessage(`{"profile":"smoke"}`), int64(run)); err != nil {
			t.Fatal(err)
		}
	}
	w := l.NewWriter(WriterOptions{})
	for _, path := range fuzzTasks {
		w.Append(Event{Type: TypeTranscript, Run: 1, Task: path, Action: "act-" + path, Transcript: "kind walk\npath " + path})
		w.Append(Event{Type: TypeState, Run: 1, Task: path, State: StateStarted, Action: "act-" + path})
		w.Append(Event{Type: TypeIter, Run: 1, Task: path, Iters: []task.Iter{{Iteration: 1, Samples: 4, Metrics: []task.Metric{{Name: "x", Value: 0.5}}}, {Iteration: 2, Samples: 8}}})
		w.Append(Event{Type: TypeCheckpoint, Run: 1, Task: path, Action: "act-" + path, Checkpoint: &Checkpoint{Content: "xxh64-0123456789abcdef", Iteration: 2}})
		w.Append(Event{Type: TypeState, Run: 1, Task: path, State: StateDone, Action: "act-" + path, Output: "xxh64-fedcba9876543210"})
	}
	w.Append(Event{Type: TypeRun, Run: 1, State: RunFinished, Data: json.RawMessage(`{"executed":2}`)})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// readEverything calls every reading method of l (for the fuzzTasks and
// extra) and fails the test if one returns an error that is not
// ErrCorruptLog or returns events out of seq order.
func readEverything(t *testing.T, l *Log, extra ...string) {
	t.Helper()
	check := func(what string, err error) {
		t.Helper()
		if err != nil && !errors.Is(err, ErrCorruptLog) {
			t.Fatalf("%s: %v, want nil or ErrCorruptLog", what, err)
		}
	}
	ordered := func(what string, evs []Event, key func(Event) uint64) {
		t.Helper()
		for i := 1; i < len(evs); i++ {
			if key(evs[i]) <= key(evs[i-1]) {
				t.Fatalf("%s: out of order: %+v then %+v", what, evs[i-1], evs[i])
			}
		}
	}
	seq := func(ev Event) uint64 { return ev.Seq }
	_, _, err := l.Stats()
	check("Stats", err)
	_, err = l.LastStates()
	check("LastStates", err)
	runs, err := l.Runs()
	check("Runs", err)
	ordered("Runs", runs, func(ev Event) uint64 { return ev.Run })
	for run := uint64(0); run <= 3; run++ {
		evs, err := l.RunEvents(run)
		check("RunEvents", err)
		ordered("RunEvents", evs, seq)
	}
	for _, task := range append(append([]string(nil), fuzzTasks...), extra...) {
		evs, err := l.Events(task)
		check("Events", err)
		ordered("Events", evs, seq)
		iterRuns, err := l.IterRuns(task)
		check("IterRuns", err)
		for _, run := range append(iterRuns, 1) {
			its, err := l.Iterations(task, run)
			check("Iterations", err)
			for i := 1; i < len(its); i++ {
				if its[i].Iteration <= its[i-1].Iteration {
					t.Fatalf("Iterations(%q, %d) out of order: %+v", task, run, its)
				}
			}
		}
		_, _, _, err = l.Transcripts(task)
		check("Transcripts", err)
		_, _, err = l.Action(task)
		check("Action", err)
		_, _, err = l.Action("act-" + task)
		check("Action", err)
		_, _, err = l.Checkpoint("act-" + task)
		check("Checkpoint", err)
	}
}

// FuzzStoredRecord stores an arbitrary key and value in one bucket of a
// valid log, as a damaged page or a foreign write could, and reads
// everything back: no read panics, and every read returns its value or an
// error wrapping ErrCorruptLog.
func FuzzStoredRecord(f *testing.F) {
	bucketIndex := map[string]uint8{}
	for i, b := range allBuckets {
		bucketIndex[string(b)] = uint8(i)
	}
	f.Add(bucketIndex["laststate"], []byte("a"), []byte(`{"task":"a","run":1,"state":"done","seq":`))
	f.Add(bucketIndex["actions"], []byte("act-a"), []byte(`[1,2]`))
	f.Add(bucketIndex["checkpoints"], []byte("act-a"), []byte(`{"task":"a","iteration":-1}`))
	f.Add(bucketIndex["transcripts"], []byte("b/seed=1"), []byte(`{"latest":{"seq":"x"}}`))
	f.Add(bucketIndex["runs"], u64(2), []byte(`{"seq":3,"type":"run","run":7}`))
	f.Add(bucketIndex["runs"], []byte("short"), []byte(`{"seq":3,"type":"run","run":1}`))
	f.Add(bucketIndex["log"], u64(3), []byte(`{"seq":99,"type":"state","task":"a"}`))
	f.Add(bucketIndex["taskevents"], append(u32(1), 0, 0, 0, 0, 0, 0, 1, 0), []byte{})
	f.Add(bucketIndex["tasks"], []byte("a"), []byte{0, 0, 9})
	f.Add(bucketIndex["iter"], iterKey(1, 1, 1), []byte{0x00, 0x08, 1, 2, 3})
	f.Add(bucketIndex["iter"], []byte{0, 0, 0, 1, 0, 0}, []byte{0})

	l := openTest(f)
	fuzzLog(f, l)
	l.db.NoSync = true // the mutations are undone after each input
	f.Fuzz(func(t *testing.T, bucket uint8, key, value []byte) {
		name := allBuckets[int(bucket)%len(allBuckets)]
		if len(key) == 0 || len(key) > bolt.MaxKeySize || len(value) > bolt.MaxValueSize {
			return
		}
		var old []byte
		err := l.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(name)
			old = bytes.Clone(b.Get(key)) // nil if absent
			return b.Put(key, value)
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			err := l.db.Update(func(tx *bolt.Tx) error {
				if old == nil {
					return tx.Bucket(name).Delete(key)
				}
				return tx.Bucket(name).Put(key, old)
			})
			if err != nil {
				t.Fatal(err)
			}
		}()
		// Read the task the key names, or whose ID starts it.
		extra := []string{string(key)}
		if len(key) >= 4 {
			l.db.View(func(tx *bolt.Tx) error {
				if p := tx.Bucket(bucketTaskPaths).Get(key[:4]); p != nil {
					extra = append(extra, string(p))
				}
				return nil
			})
		}
		readEverything(t, l, extra...)
	})
}

// FuzzOpenFile writes arbitrary bytes as the log file and opens it: Open
// never panics, and either succeeds or returns an error wrapping
// ErrCorruptLog (or ErrSchema, for an intact log of another schema
// version). A failed Open, and any read-only use, leaves the file's bytes
// unchanged and creates no other file; the reads of an opened log return
// values or ErrCorruptLog.
func FuzzOpenFile(f *testing.F) {
	src := filepath.Join(f.TempDir(), "events.db")
	l, err := Open(src, Options{})
	if err != nil {
		f.Fatal(err)
	}
	fuzzLog(f, l)
	pageSize := l.db.Info().PageSize
	if err := l.Close(); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(src)
	if err != nil {
		f.Fatal(err)
	}
	flip := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0x40
		return b
	}
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte("not a database\n"))
	f.Add(good[:pageSize])        // one meta page
	f.Add(good[:len(good)/2])     // truncated
	f.Add(flip(16 + 56))          // one torn meta page: still a valid log
	f.Add(flip(2*pageSize + 20))  // a damaged data page
	f.Add(flip(len(good) - 4000)) // another
	opt := Options{Timeout: 100 * time.Millisecond}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "events.db")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		unchanged := func(what string) {
			t.Helper()
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s changed the file (%d bytes -> %d, %v)", what, len(data), len(got), err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Fatalf("%s left %d files in the directory, want only events.db", what, len(ents))
			}
		}
		for _, ro := range []bool{true, false} {
			opt.ReadOnly = ro
			l, err := Open(path, opt)
			if err != nil {
				if !errors.Is(err, ErrCorruptLog) && !errors.Is(err, ErrSchema) {
					t.Fatalf("Open(ReadOnly=%v): %v, want ErrCorruptLog or ErrSchema", ro, err)
				}
				unchanged("a failed Open")
				continue
			}
			readEverything(t, l)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if ro {
				unchanged("a read-only Open")
			}
		}
	})
}

package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"zorepro/pipeline/task"

	bolt "go.etcd.io/bbolt"
)

func TestOpenCreatesCompleteLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "events.db")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != path {
		t.Errorf("Path = %s, want %s", l.Path(), path)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "events.db" {
		t.Fatalf("dir holds %v, want only events.db (no temp files)", ents)
	}
	// Reopening read-only finds every bucket and the schema version.
	l, err = Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if ev, it, err := l.Stats(); err != nil || ev != 0 || it != 0 {
		t.Fatalf("Stats of a new log = %d, %d, %v", ev, it, err)
	}
}

func TestOpenReadOnlyMissingFileCreatesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	_, err := Open(path, Options{ReadOnly: true})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open read-only of a missing file: %v, want ErrNotExist naming the path", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("read-only Open created the file")
	}
}

// TestOpenLocked checks that a second Open in this process blocks on the
// flock (it is per open file description) and fails with ErrLocked within
// the timeout, leaving the first Log usable and the file unchanged.
func TestOpenLocked(t *testing.T) {
	l := openTest(t)
	if _, err := l.BeginRun(nil, 1); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, l.path)

	for _, tc := range []struct {
		opt    Options
		waited string
	}{
		{Options{Timeout: 200 * time.Millisecond}, "200ms"},
		{Options{Timeout: 200 * time.Millisecond, ReadOnly: true}, "200ms"},
		{Options{}, "1s"}, // the default
	} {
		start := time.Now()
		l2, err := Open(l.path, tc.opt)
		elapsed := time.Since(start)
		if err == nil {
			l2.Close()
			t.Fatalf("second Open(%+v) succeeded while the log is open", tc.opt)
		}
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("second Open(%+v): %v, want ErrLocked", tc.opt, err)
		}
		want := fmt.Sprintf("events: %s is locked by another pipeline process (waited %s); wait for it to finish or stop it", l.path, tc.waited)
		if err.Error() != want {
			t.Errorf("message\n got: %s\nwant: %s", err, want)
		}
		limit := tc.opt.Timeout
		if limit == 0 {
			limit = time.Second
		}
		if elapsed > limit+500*time.Millisecond {
			t.Errorf("Open(%+v) took %v", tc.opt, elapsed)
		}
	}
	if !bytes.Equal(readFile(t, l.path), before) {
		t.Fatal("a failed Open changed the file")
	}
	// The first Log still works.
	w := l.NewWriter(WriterOptions{})
	w.Append(Event{Type: TypeNote, Task: "a"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if evs, err := l.Events("a"); err != nil || len(evs) != 1 {
		t.Fatalf("first log after failed Opens: %v, %v", evs, err)
	}
	// Read-only opens share the lock.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r1, err := Open(l.path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := Open(l.path, Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("second read-only Open: %v", err)
	}
	r2.Close()
}

// corruptFixture writes a real log to damage and returns its path, its
// bytes, the bytes bbolt addresses (pgid × page size) and the page size.
func corruptFixture(t *testing.T) (src string, good []byte, used, pageSize int64) {
	t.Helper()
	src = filepath.Join(t.TempDir(), "events.db")
	l, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := l.NewWriter(WriterOptions{})
	for i := range 3000 {
		w.Append(Event{Type: TypeNote, Task: fmt.Sprintf("task/%d", i%7), Data: json.RawMessage(fmt.Sprintf(`{"i":%d,"pad":"%0100d"}`, i, i))})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	l.db.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil })
	pageSize = int64(l.db.Info().PageSize)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	good = readFile(t, src)
	if used < 8*pageSize {
		t.Fatalf("test log too small: %d bytes used", used)
	}
	return src, good, used, pageSize
}

// flipBytes returns a copy of b with the bytes at offsets inverted.
func flipBytes(b []byte, offsets ...int64) []byte {
	b = append([]byte(nil), b...)
	for _, o := range offsets {
		b[o] ^= 0xff
	}
	return b
}

// corruptions are damaged copies of a good log, by name.
func corruptions(good []byte, used, pageSize int64) map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	garbage := make([]byte, 64<<10)
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	// A valid first meta page followed by garbage.
	metaThenGarbage := append(append([]byte(nil), good[:pageSize]...), garbage[:3*pageSize]...)
	// Intact meta pages over zeroed data pages.
	zeroedPages := append([]byte(nil), good...)
	clear(zeroedPages[2*pageSize : used])
	return map[string][]byte{
		"zeroed data pages": zeroedPages,
		"empty":             {},
		"text":              []byte("hello, I am not a database\n"),
		"garbage":           garbage,
		"one page":          good[:pageSize],
		"meta page only":    good[:pageSize+100],
		"two pages":         good[:2*pageSize],
		"half":              good[:used/2],
		"missing last page": good[:used-pageSize],
		"meta then garbage": metaThenGarbage,
		// Both meta pages damaged: a flipped checksum byte (page header
		// 16 + offset 56), a flipped version byte (16 + 4).
		"bad meta checksums": flipBytes(good, 16+56, pageSize+16+56),
		"bad meta versions":  flipBytes(good, 16+4, pageSize+16+4),
	}
}

func TestOpenCorrupt(t *testing.T) {
	src, good, used, pageSize := corruptFixture(t)
	for name, content := range corruptions(good, used, pageSize) {
		t.Run(name, func(t *testing.T) {
			for _, ro := range []bool{false, true} {
				path := filepath.Join(t.TempDir(), "events.db")
				if err := os.WriteFile(path, content, 0o644); err != nil {
					t.Fatal(err)
				}
				l, err := Open(path, Options{ReadOnly: ro, Timeout: 100 * time.Millisecond})
				if err == nil {
					l.Close()
					t.Fatalf("Open(ReadOnly=%v) of a damaged file succeeded", ro)
				}
				if !errors.Is(err, ErrCorruptLog) {
					t.Fatalf("Open(ReadOnly=%v): %v, want ErrCorruptLog", ro, err)
				}
				msg := err.Error()
				t.Logf("ReadOnly=%v: %v", ro, err)
				for _, want := range []string{path, "not modified", "move it aside", "artifacts in the store are kept"} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q does not contain %q", msg, want)
					}
				}
				if got := readFile(t, path); !bytes.Equal(got, content) {
					t.Fatalf("Open changed the damaged file (%d bytes -> %d)", len(content), len(got))
				}
			}
		})
	}

	// One torn meta page is what a crash mid-commit leaves; bbolt falls
	// back to the other, so it is not corruption.
	for i, off := range []int64{16 + 56, pageSize + 16 + 56} {
		path := filepath.Join(t.TempDir(), "events.db")
		if err := os.WriteFile(path, flipBytes(good, off), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("Open with meta page %d torn: %v", i, err)
		}
		if _, _, err := l.Stats(); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}

	checkDamageUnderOpenLog(t, good, used, pageSize)

	// The undamaged copy still opens and reads.
	l, err := Open(src, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if n, _, err := l.Stats(); err != nil || n != 3000 {
		t.Fatalf("Stats of the good log = %d, %v", n, err)
	}
}

// checkDamageUnderOpenLog damages the data pages under an open read-only
// log: reads report ErrCorruptLog instead of crashing.
func checkDamageUnderOpenLog(t *testing.T, good []byte, used, pageSize int64) {
	t.Helper()
	damaged := filepath.Join(t.TempDir(), "events.db")
	if err := os.WriteFile(damaged, good, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(damaged, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.OpenFile(damaged, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, used-2*pageSize), 2*pageSize); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for name, read := range map[string]func() error{
		"Events":      func() error { _, err := r.Events("task/1"); return err },
		"LastStates":  func() error { _, err := r.LastStates(); return err },
		"Stats":       func() error { _, _, err := r.Stats(); return err },
		"Iterations":  func() error { _, err := r.Iterations("task/1", 1); return err },
		"Transcripts": func() error { _, _, _, err := r.Transcripts("task/1"); return err },
	} {
		if err := read(); !errors.Is(err, ErrCorruptLog) || !strings.Contains(err.Error(), damaged) ||
			!strings.Contains(err.Error(), "move it aside") {
			t.Errorf("%s on damaged pages: %v, want ErrCorruptLog naming the file and how to recover", name, err)
		}
	}
}

func TestOpenNotAnEventLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("something")); return err })
	db.Close()
	before := readFile(t, path)
	_, err = Open(path, Options{})
	if !errors.Is(err, ErrCorruptLog) || !strings.Contains(err.Error(), "meta bucket") {
		t.Fatalf("Open of a foreign bbolt file: %v, want ErrCorruptLog about the meta bucket", err)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("Open changed a foreign bbolt file")
	}
}

func TestOpenSchemaMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, u32(SchemaVersion+1)) })
	db.Close()
	before := readFile(t, path)
	_, err = Open(path, Options{})
	if !errors.Is(err, ErrSchema) {
		t.Fatalf("Open: %v, want ErrSchema", err)
	}
	want := fmt.Sprintf("%s has schema version %d but this binary reads version %d", path, SchemaVersion+1, SchemaVersion)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("message %q does not contain %q", err, want)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("Open changed the file")
	}
}

func TestReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := beginRun(t, l, json.RawMessage(`{"cmd":"test"}`), 5)
	l.Close()

	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before := readFile(t, path)
	if _, err := r.BeginRun(nil, 0); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("BeginRun on a read-only log: %v", err)
	}
	w := r.NewWriter(WriterOptions{})
	w.Append(Event{Type: TypeNote})
	if err := w.Close(); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Writer on a read-only log: Close = %v", err)
	}
	runs, err := r.Runs()
	if err != nil || len(runs) != 1 || runs[0].Run != run {
		t.Fatalf("Runs on a read-only log = %+v, %v", runs, err)
	}
	if !bytes.Equal(readFile(t, path), before) {
		t.Fatal("read-only use changed the file")
	}
}

// allTypes returns one event of every type for run, with every field used.
func allTypes(run uint64) []Event {
	return []Event{
		{Type: TypeState, Run: run, Task: "train/mnist", Time: 11, State: StateStarted, Action: "xxh64-aaaaaaaaaaaaaaaa"},
		{Type: TypeTranscript, Run: run, Task: "train/mnist", Action: "xxh64-aaaaaaaaaaaaaaaa", Transcript: "kind train\nseed 1\n"},
		{Type: TypeStreams, Run: run, Task: "train/mnist", Data: json.RawMessage(`[{"scope":"train/mnist","name":"batch","arity":1}]`)},
		{Type: TypeIter, Run: run, Task: "train/mnist", Iter: &task.Iter{Iteration: 0, Samples: 64, Digest: 0xdeadbeefcafef00d, Metrics: []task.Metric{{Name: "loss", Value: 2.5}, {Name: "acc", Value: 0.1}}}},
		{Type: TypeCheckpoint, Run: run, Task: "train/mnist", Action: "xxh64-aaaaaaaaaaaaaaaa", Checkpoint: &Checkpoint{Content: "xxh64-cccccccccccccccc", Iteration: 1}},
		{Type: TypeState, Run: run, Task: "train/mnist", Time: 12, State: StateDone, Action: "xxh64-aaaaaaaaaaaaaaaa", Output: "xxh64-bbbbbbbbbbbbbbbb"},
		{Type: TypeNote, Run: run, Task: "train/mnist", Error: "a warning", Data: json.RawMessage(`"free text"`)},
		{Type: TypeState, Run: run, Task: "eval/mnist", State: StateFailed, Error: "boom"},
		{Type: TypeRun, Run: run, State: RunFinished, Time: 99},
	}
}

func TestRoundTripEveryType(t *testing.T) {
	l := openTest(t)
	run := beginRun(t, l, json.RawMessage(`{"argv":["pipeline","run"]}`), 10)
	w := l.NewWriter(WriterOptions{})
	evs := allTypes(run)
	for _, ev := range evs {
		w.Append(ev)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Expected: seqs follow append order; BeginRun's event is seq 1 and the
	// iter event takes a seq without appearing.
	var want []Event
	want = append(want, Event{Seq: 1, Type: TypeRun, Run: run, State: RunStarted, Time: 10, Data: json.RawMessage(`{"argv":["pipeline","run"]}`)})
	for i, ev := range evs {
		ev.Seq = uint64(i + 2)
		if ev.Type != TypeIter {
			want = append(want, ev)
		}
	}
	got, err := l.RunEvents(run)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RunEvents:\n got %s\nwant %s", js(got), js(want))
	}
	// RunEventsAfter reads on from a seq: from 0 all, from the third
	// event's seq the rest, from the last nothing.
	for _, after := range []int{-1, 2, len(want) - 1} {
		from := uint64(0)
		if after >= 0 {
			from = want[after].Seq
		}
		got, err := l.RunEventsAfter(run, from)
		if rest := want[after+1:]; err != nil || len(got) != len(rest) || len(rest) > 0 && !reflect.DeepEqual(got, rest) {
			t.Errorf("RunEventsAfter(%d): %d events, want %d (%v)", from, len(got), len(rest), err)
		}
	}
	var wantTask []Event
	for _, ev := range want {
		if ev.Task == "train/mnist" {
			wantTask = append(wantTask, ev)
		}
	}
	if got, err := l.Events("train/mnist"); err != nil || !reflect.DeepEqual(got, wantTask) {
		t.Fatalf("Events(train/mnist):\n got %s\nwant %s (%v)", js(got), js(wantTask), err)
	}
	if got, err := l.Events("no/such/task"); err != nil || got != nil {
		t.Fatalf("Events of an unknown task = %v, %v", got, err)
	}
	its, err := l.Iterations("train/mnist", run)
	if err != nil || len(its) != 1 || !reflect.DeepEqual(its[0], *evs[3].Iter) {
		t.Fatalf("Iterations = %+v, %v", its, err)
	}
	if ne, ni, err := l.Stats(); err != nil || ne != uint64(len(want)) || ni != 1 {
		t.Fatalf("Stats = %d, %d, %v; want %d, 1", ne, ni, err, len(want))
	}
}

// TestIterMetricsBitExact stores values whose bits JSON or a careless
// encoding would change.
func TestIterMetricsBitExact(t *testing.T) {
	l := openTest(t)
	values := []float64{
		math.Float64frombits(0x7ff8000000000abc), // quiet NaN with a payload
		math.Float64frombits(0x7ff0000000000001), // signalling NaN
		math.Float64frombits(0xfff8000000000000), // negative NaN
		math.Copysign(0, -1),
		0,
		math.Inf(1),
		math.Inf(-1),
		math.SmallestNonzeroFloat64,
		-math.MaxFloat64,
		0.1,
	}
	w := l.NewWriter(WriterOptions{})
	for i, v := range values {
		w.Append(Event{Type: TypeIter, Task: "t", Run: 3, Iter: &task.Iter{
			Iteration: int64(i), Samples: -int64(i) * 1000, Digest: math.MaxUint64 - uint64(i),
			Metrics: []task.Metric{{Name: "v", Value: v}, {Name: "", Value: -v}, {Name: strings.Repeat("é", i), Value: v}},
		}})
	}
	w.Append(Event{Type: TypeIter, Task: "t", Run: 3, Iter: &task.Iter{Iteration: math.MaxInt64}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	its, err := l.Iterations("t", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != len(values)+1 {
		t.Fatalf("%d iterations, want %d", len(its), len(values)+1)
	}
	for i, v := range values {
		it := its[i]
		if it.Iteration != int64(i) || it.Samples != -int64(i)*1000 || it.Digest != math.MaxUint64-uint64(i) || len(it.Metrics) != 3 {
			t.Fatalf("iteration %d = %+v", i, it)
		}
		for j, want := range []float64{v, -v, v} {
			if got := it.Metrics[j].Value; math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("iteration %d metric %d: bits %#x, want %#x", i, j, math.Float64bits(got), math.Float64bits(want))
			}
		}
		if it.Metrics[2].Name != strings.Repeat("é", i) {
			t.Errorf("iteration %d name %q", i, it.Metrics[2].Name)
		}
	}
	if last := its[len(values)]; last.Iteration != math.MaxInt64 || last.Metrics != nil {
		t.Errorf("last iteration = %+v", last)
	}
}

func TestIterRunsAndTasks(t *testing.T) {
	l := openTest(t)
	w := l.NewWriter(WriterOptions{MaxBatch: 3})
	for _, run := range []uint64{7, 2, 9, 2, 1 << 40, math.MaxUint64} {
		for i := range 4 {
			w.Append(Event{Type: TypeIter, Task: "a", Run: run, Iter: &task.Iter{Iteration: int64(3 - i)}})
		}
	}
	w.Append(Event{Type: TypeIter, Task: "b", Run: 5, Iter: &task.Iter{Iteration: 1}})
	w.Append(Event{Type: TypeIter, Task: "", Run: 4, Iter: &task.Iter{Iteration: 1}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for task, want := range map[string][]uint64{
		"a": {2, 7, 9, 1 << 40, math.MaxUint64}, "b": {5}, "": {4}, "none": nil,
	} {
		if got, err := l.IterRuns(task); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("IterRuns(%q) = %v, %v; want %v", task, got, err, want)
		}
	}
	// Repeated (task, run, iteration) keeps one record; order is by iteration.
	its, err := l.Iterations("a", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 4 {
		t.Fatalf("Iterations(a, 2) = %d records, want 4", len(its))
	}
	for i, it := range its {
		if it.Iteration != int64(i) {
			t.Fatalf("Iterations out of order: %+v", its)
		}
	}
	if _, ni, _ := l.Stats(); ni != 5*4+2 {
		t.Errorf("Stats iters = %d, want 22", ni)
	}
}

func TestDerivedIndexes(t *testing.T) {
	l := openTest(t)
	run1 := beginRun(t, l, nil, 100)
	w := l.NewWriter(WriterOptions{MaxBatch: 2})
	app := func(ev Event) { w.Append(ev) }
	app(Event{Type: TypeState, Run: run1, Task: "a", State: StateStarted, Action: "A1"})
	app(Event{Type: TypeTranscript, Run: run1, Task: "a", Action: "A1", Transcript: "t1"})
	app(Event{Type: TypeState, Run: run1, Task: "a", State: StateDone, Action: "A1", Output: "O1", Time: 101})
	app(Event{Type: TypeCheckpoint, Run: run1, Task: "a", Action: "A1", Checkpoint: &Checkpoint{"C1", 10}})
	app(Event{Type: TypeCheckpoint, Run: run1, Task: "a", Action: "A1", Checkpoint: &Checkpoint{"C2", 20}})
	app(Event{Type: TypeCheckpoint, Run: run1, Task: "a", Action: "A2", Checkpoint: &Checkpoint{"C3", 5}})
	app(Event{Type: TypeState, Run: run1, Task: "b", State: StateDone, Action: "B1"}) // no output: not an action record
	app(Event{Type: TypeState, Run: run1, Task: "c", State: StateFailed, Action: "C1", Error: "boom"})
	app(Event{Type: TypeRun, Run: run1, State: RunFinished, Time: 150})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := l.Transcripts("a"); !ok || err != nil {
		t.Fatalf("Transcripts(a) after one: ok=%v %v", ok, err)
	}
	if latest, prev, _, _ := l.Transcripts("a"); latest.Transcript != "t1" || prev != (TranscriptRecord{}) {
		t.Fatalf("one transcript: latest %+v previous %+v", latest, prev)
	}
	run2 := beginRun(t, l, json.RawMessage(`{"resume":1}`), 200)
	app(Event{Type: TypeTranscript, Run: run2, Task: "a", Action: "A1b", Transcript: "t2"})
	app(Event{Type: TypeTranscript, Run: run2, Task: "a", Action: "A1c", Transcript: "t3"})
	app(Event{Type: TypeState, Run: run2, Task: "a", State: StateCached, Action: "A1", Output: "O-other"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	rec, ok, err := l.Action("A1")
	if err != nil || !ok || rec.Task != "a" || rec.Run != run1 || rec.Output != "O1" || rec.Seq == 0 {
		t.Errorf("Action(A1) = %+v, %v, %v", rec, ok, err)
	}
	for _, a := range []string{"B1", "C1", "nope", ""} {
		if _, ok, err := l.Action(a); ok || err != nil {
			t.Errorf("Action(%q) ok=%v err=%v, want a miss", a, ok, err)
		}
	}
	cp, ok, err := l.Checkpoint("A1")
	if err != nil || !ok || cp != (CheckpointRecord{Task: "a", Run: run1, Content: "C2", Iteration: 20, Seq: cp.Seq}) {
		t.Errorf("Checkpoint(A1) = %+v, %v, %v", cp, ok, err)
	}
	if cp2, ok, _ := l.Checkpoint("A2"); !ok || cp2.Content != "C3" || cp2.Seq <= cp.Seq {
		t.Errorf("Checkpoint(A2) = %+v", cp2)
	}
	latest, prev, ok, err := l.Transcripts("a")
	if err != nil || !ok ||
		latest != (TranscriptRecord{Task: "a", Run: run2, Action: "A1c", Transcript: "t3", Seq: latest.Seq}) ||
		prev != (TranscriptRecord{Task: "a", Run: run2, Action: "A1b", Transcript: "t2", Seq: latest.Seq - 1}) {
		t.Errorf("Transcripts(a) = %+v / %+v, %v, %v", latest, prev, ok, err)
	}
	if _, _, ok, err := l.Transcripts("b"); ok || err != nil {
		t.Errorf("Transcripts(b) ok=%v err=%v", ok, err)
	}
	states, err := l.LastStates()
	if err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, s := range states {
		summary = append(summary, fmt.Sprintf("%s run%d %s %s %s %s", s.Task, s.Run, s.State, s.Action, s.Output, s.Error))
	}
	wantStates := []string{
		fmt.Sprintf("a run%d cached A1 O-other ", run2),
		fmt.Sprintf("b run%d done B1  ", run1),
		fmt.Sprintf("c run%d failed C1  boom", run1),
	}
	if !reflect.DeepEqual(summary, wantStates) {
		t.Errorf("LastStates = %q, want %q", summary, wantStates)
	}
	runs, err := l.Runs()
	if err != nil || len(runs) != 2 ||
		runs[0].Run != run1 || runs[0].State != RunFinished || runs[0].Time != 150 ||
		runs[1].Run != run2 || runs[1].State != RunStarted || string(runs[1].Data) != `{"resume":1}` {
		t.Errorf("Runs = %s, %v", js(runs), err)
	}
	if run2 != run1+1 {
		t.Errorf("run ids %d, %d are not consecutive", run1, run2)
	}
}

// TestReopenContinues checks that seqs, run IDs and task IDs continue
// after a close and reopen.
func TestReopenContinues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	var lastSeq, lastRun uint64
	for round := range 3 {
		l, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		run := beginRun(t, l, nil, 0)
		if run <= lastRun {
			t.Fatalf("round %d: run %d after %d", round, run, lastRun)
		}
		lastRun = run
		w := l.NewWriter(WriterOptions{})
		w.Append(Event{Type: TypeIter, Task: "x", Run: run, Iter: &task.Iter{Iteration: 1}})
		w.Append(Event{Type: TypeNote, Task: "x", Run: run})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		evs, err := l.Events("x")
		if err != nil || len(evs) != round+1 {
			t.Fatalf("round %d: Events = %v, %v", round, evs, err)
		}
		if s := evs[round].Seq; s <= lastSeq {
			t.Fatalf("round %d: seq %d after %d", round, s, lastSeq)
		}
		lastSeq = evs[round].Seq
		if runs, err := l.IterRuns("x"); err != nil || len(runs) != round+1 {
			t.Fatalf("round %d: IterRuns = %v, %v (task id changed?)", round, runs, err)
		}
		verify(t, l)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRunStart: the first event of a run is its start, with its data; a
// run the log does not hold is not found.
func TestRunStart(t *testing.T) {
	l := openTest(t)
	run := beginRun(t, l, json.RawMessage(`{"profile":"smoke"}`), 10)
	w := l.NewWriter(WriterOptions{})
	w.Append(Event{Type: TypeState, Run: run, Task: "a", State: StateStarted})
	w.Append(Event{Type: TypeRun, Run: run, State: RunFinished, Data: json.RawMessage(`{"executed":1}`)})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ev, ok, err := l.RunStart(run)
	if err != nil || !ok || ev.State != RunStarted || string(ev.Data) != `{"profile":"smoke"}` {
		t.Fatalf("RunStart = %+v, %v, %v", ev, ok, err)
	}
	if _, ok, err := l.RunStart(run + 1); ok || err != nil {
		t.Fatalf("an unknown run: %v, %v", ok, err)
	}
}

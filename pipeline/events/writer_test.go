package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"zorepro/pipeline/task"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

func iterEvent(path string, run uint64, i int) Event {
	return Event{Type: TypeIter, Task: path, Run: run, Iter: &task.Iter{
		Iteration: int64(i), Samples: int64(i) * 32, Digest: uint64(i) * 0x9e3779b97f4a7c15,
		Metrics: []task.Metric{{Name: "loss", Value: 1 / float64(i+1)}, {Name: "return", Value: float64(i)}},
	}}
}

// TestWriterBatches counts write transactions: 10,000 appends with the
// default options must take about ten, not ten thousand.
func TestWriterBatches(t *testing.T) {
	l := openTest(t)
	w := l.NewWriter(WriterOptions{})
	before := l.commits.Load()
	const n = 10000
	for i := range n {
		w.Append(iterEvent("train", 1, i))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	txs := l.commits.Load() - before
	t.Logf("%d appends took %d transactions", n, txs)
	if txs > 20 {
		t.Fatalf("%d appends took %d transactions, want <= 20", n, txs)
	}
	if txs < n/defaultMaxBatch {
		t.Fatalf("%d transactions for %d events exceeds MaxBatch %d", txs, n, defaultMaxBatch)
	}
	if its, err := l.Iterations("train", 1); err != nil || len(its) != n {
		t.Fatalf("Iterations = %d, %v", len(its), err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// MaxBatch bounds a batch: 1000 events at MaxBatch 100 take >= 10.
	w = l.NewWriter(WriterOptions{MaxBatch: 100})
	before = l.commits.Load()
	for i := range 1000 {
		w.Append(iterEvent("train", 2, i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if txs := l.commits.Load() - before; txs < 10 {
		t.Fatalf("MaxBatch 100: 1000 events in %d transactions", txs)
	}
}

// TestWriterOrder interleaves iter and note events across many small
// batches and checks that seqs follow Append order exactly.
func TestWriterOrder(t *testing.T) {
	l := openTest(t)
	run := beginRun(t, l, nil, 0)
	w := l.NewWriter(WriterOptions{MaxBatch: 7, QueueLen: 3})
	const n = 1000
	for i := range n {
		w.Append(Event{Type: TypeNote, Task: "t", Run: run, Data: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
		w.Append(iterEvent("t", run, i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	evs, err := l.Events("t")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != n {
		t.Fatalf("%d events, want %d", len(evs), n)
	}
	for i, ev := range evs {
		// BeginRun took seq 1; note i is appended at 2+2i, its iter at 3+2i.
		if want := uint64(2 + 2*i); ev.Seq != want || string(ev.Data) != fmt.Sprintf(`{"i":%d}`, i) {
			t.Fatalf("event %d: seq %d data %s, want seq %d", i, ev.Seq, ev.Data, want)
		}
	}
	its, err := l.Iterations("t", run)
	if err != nil || len(its) != n {
		t.Fatalf("Iterations = %d, %v", len(its), err)
	}
}

// TestWriterConcurrentAppenders checks that each appender's events keep
// their order when several goroutines share a Writer.
func TestWriterConcurrentAppenders(t *testing.T) {
	l := openTest(t)
	w := l.NewWriter(WriterOptions{MaxBatch: 50, QueueLen: 16})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				w.Append(Event{Type: TypeNote, Task: fmt.Sprintf("g%d", g), Data: json.RawMessage(fmt.Sprint(i))})
				if i%100 == 99 {
					if err := w.Flush(); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for g := range 4 {
		evs, err := l.Events(fmt.Sprintf("g%d", g))
		if err != nil || len(evs) != 300 {
			t.Fatalf("g%d: %d events, %v", g, len(evs), err)
		}
		for i, ev := range evs {
			if string(ev.Data) != fmt.Sprint(i) || (i > 0 && ev.Seq <= evs[i-1].Seq) {
				t.Fatalf("g%d event %d: %s seq %d", g, i, ev.Data, ev.Seq)
			}
		}
	}
}

// TestWriterFlush uses a batch size and delay that never trigger, so only
// Flush (and Close) can commit.
func TestWriterFlush(t *testing.T) {
	l := openTest(t)
	w := l.NewWriter(WriterOptions{MaxBatch: 1 << 20, MaxDelay: time.Hour})
	if err := w.Flush(); err != nil {
		t.Fatalf("Flush of nothing: %v", err)
	}
	for i := range 10 {
		w.Append(Event{Type: TypeNote, Task: "f", Data: json.RawMessage(fmt.Sprint(i))})
	}
	if evs, _ := l.Events("f"); len(evs) != 0 {
		t.Fatalf("%d events committed before Flush", len(evs))
	}
	before := l.commits.Load()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if evs, _ := l.Events("f"); len(evs) != 10 {
		t.Fatalf("%d events committed after Flush, want 10", len(evs))
	}
	if txs := l.commits.Load() - before; txs != 1 {
		t.Fatalf("Flush took %d transactions, want 1", txs)
	}
	w.Append(Event{Type: TypeNote, Task: "f"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if evs, _ := l.Events("f"); len(evs) != 11 {
		t.Fatalf("%d events after Close, want 11", len(evs))
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Flush(); err != nil {
		t.Fatalf("Flush after Close: %v", err)
	}
	w.Append(Event{Type: TypeNote, Task: "f"})
	if err := w.Err(); !errors.Is(err, ErrWriterClosed) {
		t.Fatalf("Append after Close: Err = %v, want ErrWriterClosed", err)
	}
	// The Log accepts a new Writer once the old one is closed.
	w2 := l.NewWriter(WriterOptions{})
	w2.Append(Event{Type: TypeNote, Task: "f"})
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWriterMaxDelay checks that a lone event is committed without Flush.
func TestWriterMaxDelay(t *testing.T) {
	l := openTest(t)
	w := l.NewWriter(WriterOptions{MaxDelay: 10 * time.Millisecond})
	defer w.Close()
	w.Append(Event{Type: TypeNote, Task: "d"})
	deadline := time.Now().Add(5 * time.Second)
	for {
		evs, err := l.Events("d")
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("event not committed 5s after Append with MaxDelay 10ms")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWriterStickyCommitError injects a failing commit ("disk full") and
// checks that the error names the file, is sticky, and that later events
// are dropped rather than committed out of order.
func TestWriterStickyCommitError(t *testing.T) {
	l := openTest(t)
	w := l.NewWriter(WriterOptions{MaxBatch: 10})
	for i := range 25 {
		w.Append(iterEvent("ok", 1, i))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	diskFull := errors.New("no space left on device (injected)")
	var fail sync.Mutex // guards failing
	failing := true
	l.beforeCommit = func(*bolt.Tx) error {
		fail.Lock()
		defer fail.Unlock()
		if failing {
			return diskFull
		}
		return nil
	}
	for i := range 5 {
		w.Append(iterEvent("lost", 1, i))
	}
	err := w.Flush()
	if !errors.Is(err, diskFull) {
		t.Fatalf("Flush after a failing commit: %v, want the injected error", err)
	}
	for _, want := range []string{"events: commit of 5 events to " + l.path, "drops all later events", diskFull.Error()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	// The disk recovers, but the writer stays failed: events after a lost
	// batch would leave a hole in the log.
	fail.Lock()
	failing = false
	fail.Unlock()
	before := l.commits.Load()
	for i := range 50 {
		w.Append(iterEvent("dropped", 1, i))
	}
	if err2 := w.Flush(); err2 != err {
		t.Fatalf("second Flush = %v, want the same sticky error", err2)
	}
	if w.Err() != err {
		t.Fatalf("Err = %v, want the sticky error", w.Err())
	}
	if err2 := w.Close(); err2 != err {
		t.Fatalf("Close = %v, want the sticky error", err2)
	}
	if l.commits.Load() != before {
		t.Fatal("the failed writer committed more events")
	}
	for task, want := range map[string]int{"ok": 25, "lost": 0, "dropped": 0} {
		if its, err := l.Iterations(task, 1); err != nil || len(its) != want {
			t.Errorf("task %s: %d iterations, %v; want %d", task, len(its), err, want)
		}
	}
}

// TestWriterClosedDB closes the database under a running writer.
func TestWriterClosedDB(t *testing.T) {
	l := openTest(t)
	w := l.NewWriter(WriterOptions{})
	w.Append(Event{Type: TypeNote, Task: "x"})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.db.Close(); err != nil {
		t.Fatal(err)
	}
	w.Append(Event{Type: TypeNote, Task: "x"})
	err := w.Flush()
	if !errors.Is(err, berrors.ErrDatabaseNotOpen) || !strings.Contains(err.Error(), l.path) {
		t.Fatalf("Flush on a closed database: %v", err)
	}
	if err2 := w.Close(); err2 != err {
		t.Fatalf("Close = %v, want %v", err2, err)
	}
}

func TestAppendInvalidPanics(t *testing.T) {
	l := openTest(t)
	w := l.NewWriter(WriterOptions{})
	defer w.Close()
	for name, ev := range map[string]Event{
		"unknown type":       {Type: "bogus"},
		"empty type":         {},
		"iter without Iter":  {Type: TypeIter, Task: "t"},
		"negative iteration": {Type: TypeIter, Iter: &task.Iter{Iteration: -1}},
		"Iter on a note":     {Type: TypeNote, Iter: &task.Iter{}},
		"invalid data":       {Type: TypeNote, Data: json.RawMessage(`{"a":`)},
	} {
		func() {
			defer func() {
				r := recover()
				err, ok := r.(error)
				if !ok || !errors.Is(err, ErrInvalidEvent) {
					t.Errorf("%s: Append panicked with %v, want ErrInvalidEvent", name, r)
				}
			}()
			w.Append(ev)
		}()
	}
	if _, err := l.BeginRun(json.RawMessage(`nope`), 0); !errors.Is(err, ErrInvalidEvent) {
		t.Errorf("BeginRun with invalid data: %v", err)
	}
	if err := w.Flush(); err != nil {
		t.Fatalf("invalid events broke the writer: %v", err)
	}
}

func TestSecondWriterPanics(t *testing.T) {
	l := openTest(t)
	w := l.NewWriter(WriterOptions{})
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("second NewWriter did not panic")
			}
		}()
		l.NewWriter(WriterOptions{})
	}()
	w.Append(Event{Type: TypeNote, Task: "still"})
	// Log.Close closes (and flushes) the open writer.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(l.path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if evs, err := r.Events("still"); err != nil || len(evs) != 1 {
		t.Fatalf("event appended before Log.Close: %v, %v", evs, err)
	}
}

// TestWriterOnError checks that the first commit error is passed to
// WriterOptions.OnError once, as Err reports it, and that later dropped
// events do not call it again.
func TestWriterOnError(t *testing.T) {
	l := openTest(t)
	var calls []error
	var mu sync.Mutex
	w := l.NewWriter(WriterOptions{OnError: func(err error) {
		mu.Lock()
		calls = append(calls, err)
		mu.Unlock()
	}})
	w.Append(Event{Type: TypeNote, Task: "ok"})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	diskFull := errors.New("no space left on device (injected)")
	l.beforeCommit = func(*bolt.Tx) error { return diskFull }
	for range 3 {
		w.Append(Event{Type: TypeNote, Task: "lost"})
		w.Flush()
	}
	err := w.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 || calls[0] != err || !errors.Is(err, diskFull) {
		t.Fatalf("OnError called with %v; Close = %v; want one call with the sticky error", calls, err)
	}
}

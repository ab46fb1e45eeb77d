package events

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"testing"
	"time"

	"zorepro/pipeline/task"
)

// snapshotNow takes a snapshot of l (at path) and opens it.
func snapshotNow(t *testing.T, l *Log, path string) *Log {
	t.Helper()
	if err := l.Snapshot(); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSnapshot(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A snapshot taken while a writer commits is a complete, readable log
// holding a prefix of what was committed; the last one holds everything.
func TestSnapshotDuringWritesIsConsistent(t *testing.T) {
	l, path := openTestAt(t)
	if _, err := OpenSnapshot(path, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("snapshot before any was taken: %v", err)
	}
	run := beginRun(t, l, nil, 1)
	w := l.NewWriter(WriterOptions{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := int64(1); i <= 2000; i++ {
			w.Append(Event{Type: TypeIter, Run: run, Task: "t", Iter: &task.Iter{Iteration: i, Samples: i}})
		}
	}()
	for i := 0; i < 5; i++ {
		s := snapshotNow(t, l, path)
		its, err := s.Iterations("t", run)
		if err != nil {
			t.Fatal(err)
		}
		for j, it := range its {
			if it.Iteration != int64(j+1) {
				t.Fatalf("snapshot %d: iteration %d at %d", i, it.Iteration, j)
			}
		}
		if s.SnapshotOf() != path {
			t.Errorf("SnapshotOf = %q", s.SnapshotOf())
		}
		s.Close()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s := snapshotNow(t, l, path)
	defer s.Close()
	if its, err := s.Iterations("t", run); err != nil || len(its) != 2000 {
		t.Fatalf("final snapshot: %d iterations, %v", len(its), err)
	}
	if _, err := s.BeginRun(nil, 2); !errors.Is(err, ErrReadOnly) {
		t.Errorf("a snapshot accepted a write: %v", err)
	}
}

// A snapshot says whether it is of a run in progress; RemoveSnapshot
// removes it and is a no-op when there is none.
func TestSnapshotInProgressAndRemove(t *testing.T) {
	l, path := openTestAt(t)
	if err := l.RemoveSnapshot(); err != nil {
		t.Fatalf("removing a snapshot that does not exist: %v", err)
	}
	run := beginRun(t, l, nil, 1)
	check := func(want bool) {
		t.Helper()
		s := snapshotNow(t, l, path)
		defer s.Close()
		if got, ok, err := s.InProgress(); err != nil || got != run || ok != want {
			t.Fatalf("InProgress = %d, %v, %v; want %d, %v", got, ok, err, run, want)
		}
	}
	check(true)
	w := l.NewWriter(WriterOptions{})
	w.Append(Event{Type: TypeRun, Run: run, State: RunFinished, Time: 2})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	check(false)
	if err := l.RemoveSnapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSnapshot(path, Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("snapshot after RemoveSnapshot: %v", err)
	}
}

// Follow moves a snapshot reader on to the run's newer snapshots, keeps it
// while the run holds the log without one, then reads a private copy of
// the log once the run has released it (without keeping its lock: a
// later run opens it), and removes the copy on Close. Readers running
// while it swaps never fail.
func TestFollow(t *testing.T) {
	l, path := openTestAt(t)
	run := beginRun(t, l, nil, 1)
	w := l.NewWriter(WriterOptions{})
	iterate := func(i int64) {
		t.Helper()
		w.Append(Event{Type: TypeIter, Run: run, Task: "t", Iter: &task.Iter{Iteration: i, Samples: 10 * i}})
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	iterate(1)
	s := snapshotNow(t, l, path)
	defer s.Close()
	lastIter := func(want int64) {
		t.Helper()
		it, ok, err := s.LastIteration("t", run)
		if err != nil || !ok || it.Iteration != want {
			t.Fatalf("LastIteration = %+v, %v, %v; want iteration %d", it, ok, err, want)
		}
	}
	follow := func(want bool) {
		t.Helper()
		if moved, err := s.Follow(); err != nil || moved != want {
			t.Fatalf("Follow = %v, %v; want %v", moved, err, want)
		}
	}
	follow(false)
	lastIter(1)
	if s.AtRest() {
		t.Fatal("a run's snapshot says its log is at rest")
	}
	// A snapshot's state is as of when it was written.
	asOf := func(want time.Time) {
		t.Helper()
		if got := s.AsOf(); !got.Equal(want) {
			t.Fatalf("AsOf = %v, want %v", got, want)
		}
	}
	snapTime := func() time.Time {
		t.Helper()
		info, err := os.Stat(SnapshotPath(path))
		if err != nil {
			t.Fatal(err)
		}
		return info.ModTime()
	}
	first := snapTime()
	asOf(first)
	if first.IsZero() {
		t.Fatal("a snapshot's time is zero")
	}

	// Readers on another goroutine while the run snapshots and Follow swaps.
	stop, failed := make(chan struct{}), make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, ok, err := s.LastIteration("t", run); err != nil || !ok {
				failed <- fmt.Errorf("LastIteration during Follow: %v, %v", ok, err)
				return
			}
		}
	}()
	for i := int64(2); i <= 20; i++ {
		iterate(i)
		follow(false) // committed, but no newer snapshot yet
		if err := l.Snapshot(); err != nil {
			t.Fatal(err)
		}
		follow(true)
		lastIter(i)
		asOf(snapTime())
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-failed:
		t.Fatal(err)
	default:
	}

	// The run ends: its last events, the snapshot removed, the log still
	// held until the process closes it.
	w.Append(Event{Type: TypeRun, Run: run, State: RunFinished, Time: 2})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.RemoveSnapshot(); err != nil {
		t.Fatal(err)
	}
	follow(false)
	if _, ok, err := s.InProgress(); err != nil || !ok {
		t.Fatalf("InProgress before the run released the log = %v, %v; want the last snapshot's true", ok, err)
	}
	verify(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	follow(true)
	if _, ok, err := s.InProgress(); err != nil || ok {
		t.Fatalf("InProgress after the run ended = %v, %v; want false", ok, err)
	}
	copy1 := s.following().copy
	if _, err := os.Stat(copy1); err != nil {
		t.Fatalf("the private copy: %v", err)
	}
	asOf(time.Time{}) // a copy of the log at rest is its state now
	follow(false)     // the log did not change

	// A later run opens the log (Follow keeps no lock), and Follow reads it
	// once that run has ended.
	l2, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("a later run opening the log Follow copied: %v", err)
	}
	run2 := beginRun(t, l2, nil, 3)
	follow(false) // held, no snapshot
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	follow(true)
	if got, ok, err := s.InProgress(); err != nil || got != run2 || !ok {
		t.Fatalf("InProgress = %d, %v, %v; want %d, true", got, ok, err, run2)
	}
	copy2 := s.following().copy
	if _, err := os.Stat(copy1); !errors.Is(err, fs.ErrNotExist) || copy2 == copy1 {
		t.Fatalf("the first copy after the second (%s): %v", copy2, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(copy2); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the copy after Close: %v", err)
	}

	// A log opened directly never moves.
	l3, err := Open(path, Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l3.Close()
	if moved, err := l3.Follow(); moved || err != nil {
		t.Fatalf("Follow on a log opened directly = %v, %v", moved, err)
	}
	if !l3.AsOf().IsZero() {
		t.Fatalf("a log opened directly is as of %v, want now (zero)", l3.AsOf())
	}
}

// OpenCopy reads a private copy of a log at rest and releases its lock at
// once: a run opens the log while the copy is read, and Follow moves the
// copy on to that run's snapshot. A log a run holds is refused as Open
// refuses it.
func TestOpenCopy(t *testing.T) {
	l, path := openTestAt(t)
	run := beginRun(t, l, nil, 1)
	if _, err := OpenCopy(path, Options{Timeout: 20 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("OpenCopy of a log a run holds: %v; want ErrLocked", err)
	}
	if l.AtRest() {
		t.Fatal("the log a run holds, opened directly, says it is at rest")
	}
	c := closeThenCopy(t, l, path)
	defer c.Close()
	if got, ok, err := c.InProgress(); err != nil || got != run || !ok {
		t.Fatalf("the copy's InProgress = %d, %v, %v; want %d, true", got, ok, err, run)
	}
	// The run recorded only its start and no run holds the log: at rest,
	// so that run was killed.
	if !c.AtRest() {
		t.Fatal("a copy of a log no run holds does not say it is at rest")
	}
	if moved, err := c.Follow(); moved || err != nil {
		t.Fatalf("Follow of an unchanged log = %v, %v", moved, err)
	}
	l2, err := Open(path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("a run opening the log while a copy of it is read: %v", err)
	}
	defer l2.Close()
	run2 := beginRun(t, l2, nil, 2)
	if moved, err := c.Follow(); moved || err != nil {
		t.Fatalf("Follow while the run holds the log without a snapshot = %v, %v", moved, err)
	}
	if err := l2.Snapshot(); err != nil {
		t.Fatal(err)
	}
	copyPath := c.following().copy
	if moved, err := c.Follow(); !moved || err != nil {
		t.Fatalf("Follow after the run's snapshot = %v, %v", moved, err)
	}
	if got, ok, err := c.InProgress(); err != nil || got != run2 || !ok || c.AtRest() {
		t.Fatalf("InProgress after Follow = %d, %v, %v (at rest %v); want %d, true, on a run's snapshot, not at rest", got, ok, err, c.AtRest(), run2)
	}
	if _, err := os.Stat(copyPath); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the copy after moving to the snapshot: %v", err)
	}
}

// A snapshot a killed run left beside a log at rest is older than the
// log: Follow stays on the log's copy.
func TestFollowIgnoresAKilledRunsSnapshot(t *testing.T) {
	l, path := openTestAt(t)
	run := beginRun(t, l, nil, 1)
	w := l.NewWriter(WriterOptions{})
	for i := int64(1); i <= 2; i++ {
		w.Append(Event{Type: TypeIter, Run: run, Task: "t", Iter: &task.Iter{Iteration: i, Samples: i}})
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if err := l.Snapshot(); err != nil { // the killed run's last snapshot
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c := closeThenCopy(t, l, path)
	defer c.Close()
	if moved, err := c.Follow(); moved || err != nil {
		t.Fatalf("Follow beside a killed run's snapshot = %v, %v; want to stay on the log's copy", moved, err)
	}
	if it, ok, err := c.LastIteration("t", run); err != nil || !ok || it.Iteration != 2 {
		t.Fatalf("LastIteration = %+v, %v, %v; want the log's iteration 2", it, ok, err)
	}
}

// closeThenCopy checks and closes l, then opens a private copy of the log
// at path.
func closeThenCopy(t *testing.T, l *Log, path string) *Log {
	t.Helper()
	verify(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := OpenCopy(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

package events

import (
	"errors"
	"io/fs"
	"sync"
	"testing"

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

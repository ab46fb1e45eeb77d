package pipeline_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/store"
)

// fullDisk is a store temp file whose writes fail with ENOSPC while full is
// set, as on a full disk.
type fullDisk struct {
	*os.File
	full *atomic.Bool
}

func (f *fullDisk) Write(p []byte) (int, error) {
	if f.full.Load() {
		return 0, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

// runEvents returns the events of run, and every task's last state, from
// the log under storeDir.
func runEvents(t *testing.T, storeDir string, run uint64) ([]events.Event, []events.StateRecord) {
	t.Helper()
	var states []events.StateRecord
	evs := pipelinetest.ReadLog(t, storeDir, func(l *events.Log) ([]events.Event, error) {
		evs, err := l.RunEvents(run)
		if err == nil {
			states, err = l.LastStates()
		}
		return evs, err
	})
	return evs, states
}

func mustContain(t *testing.T, msg string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not contain %q", msg, w)
		}
	}
}

// notStarted checks that none of tasks appears in any list of res.
func notStarted(t *testing.T, res *pipeline.Result, tasks ...string) {
	t.Helper()
	for _, task := range tasks {
		for _, l := range [][]string{res.Executed, res.Cached, res.Failed, res.Skipped, res.Interrupted} {
			if slices.Contains(l, task) {
				t.Errorf("%s was started after the write failure: %+v", task, res)
			}
		}
	}
}

// TestStoreWriteFailureStopsRunThenResumes fills the disk under the store
// in the middle of a task. The run stops at once (no further task starts),
// reports the file and the OS error, keeps everything written before, and
// once space is back a rerun resumes from the last checkpoint and ends with
// the outputs of an uninterrupted run.
func TestStoreWriteFailureStopsRunThenResumes(t *testing.T) {
	want := referenceOutputs(t, "")
	h := newHarness(t)
	storeDir := filepath.Join(h.dir, "store")
	var full atomic.Bool
	h.storeOpt.CreateTemp = func(dir, pattern string) (store.TempFile, error) {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		return &fullDisk{File: f, full: &full}, nil
	}
	st, err := store.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	var written []store.ID // entries stored before the disk filled
	h.walk.gate = func(path string, it int64) {
		if path == "b/seed=2" && it == 7 {
			st.Walk(func(id store.ID, _ int64) error { written = append(written, id); return nil })
			full.Store(true)
		}
	}
	// One worker runs a, b/seed=1, then b/seed=2; c and d would follow.
	res, err := h.run(context.Background(), "", 1, storeDir)
	if !errors.Is(err, pipeline.ErrWriteFailed) {
		t.Fatalf("err = %v, want ErrWriteFailed", err)
	}
	t.Logf("user sees: pipeline: %s", strings.TrimPrefix(err.Error(), "pipeline: "))
	mustContain(t, err.Error(), filepath.Join(storeDir, "tmp", "put-"), "no space left on device",
		"progress up to the last successful write is kept", "run again to resume")
	eq(t, "executed", res.Executed, []string{"a", "b/seed=1"})
	eq(t, "failed", res.Failed, []string{"b/seed=2"})
	notStarted(t, res, "c/seed=1", "c/seed=2", "d/seed=9")

	// The store is resumable: no temp files, nothing written before lost.
	if tmp, _ := os.ReadDir(filepath.Join(storeDir, "tmp")); len(tmp) != 0 {
		t.Errorf("temp files left in the store: %v", tmp)
	}
	if len(written) == 0 {
		t.Fatal("nothing was written before the disk filled")
	}
	failedRun := res.Run
	evs, _ := runEvents(t, storeDir, failedRun)
	var lastCkpt int64
	state := ""
	for _, ev := range evs {
		if ev.Task == "b/seed=2" && ev.Type == events.TypeCheckpoint {
			lastCkpt = ev.Checkpoint.Iteration
		}
		if ev.Type == events.TypeRun {
			state = ev.State
		}
	}
	if lastCkpt != 6 || state != events.RunInterrupted {
		t.Errorf("failed run recorded: last checkpoint of b/seed=2 at %d, run state %q; want 6, %q", lastCkpt, state, events.RunInterrupted)
	}

	full.Store(false)
	h.walk.gate = nil
	res = h.mustRun("", 1)
	eq(t, "executed after space is back", res.Executed, []string{"b/seed=2", "c/seed=1", "c/seed=2", "d/seed=9"})
	sameOutputs(t, finalOutputs(t, storeDir), want)
	for _, id := range written {
		if !st.Has(id) {
			t.Errorf("entry %s written before the failure is gone", id)
		}
	}
	after, _ := runEvents(t, storeDir, failedRun)
	if !reflect.DeepEqual(after, evs) {
		t.Errorf("events of the failed run changed:\nbefore %+v\nafter  %+v", evs, after)
	}
	resumed, _ := runEvents(t, storeDir, res.Run)
	from := ""
	for _, ev := range resumed {
		if ev.Task == "b/seed=2" && ev.State == events.StateResumed {
			from = string(ev.Data)
		}
	}
	if !strings.Contains(from, `"iteration":6`) {
		t.Errorf("b/seed=2 did not resume from its checkpoint at iteration 6 (resumed event data %q)", from)
	}
}

// TestEventLogCommitFailureStopsRunThenResumes makes the event log's
// commits fail (a full disk under events.db) while a task runs. The
// running task is stopped promptly rather than left to compute what cannot
// be recorded, no further task starts, the error names the file and the
// OS error, earlier runs' records are intact, and a rerun after the fault
// ends with the outputs of an uninterrupted run.
func TestEventLogCommitFailureStopsRunThenResumes(t *testing.T) {
	want := referenceOutputs(t, "other")
	h := newHarness(t)
	storeDir := filepath.Join(h.dir, "store")
	dbPath := filepath.Join(storeDir, "events.db")
	first := h.mustRun("", 1)
	firstEvents, _ := runEvents(t, storeDir, first.Run)

	var failing atomic.Bool
	h.logOpt.BeforeCommit = func() error {
		if failing.Load() {
			return &fs.PathError{Op: "write", Path: dbPath, Err: syscall.ENOSPC}
		}
		return nil
	}
	h.walk.gate = func(path string, it int64) {
		if path == "b/seed=2" && it == 7 {
			failing.Store(true)
		}
	}
	// b/seed=2 then waits (up to 10s) for the run to stop it.
	h.walk.hold = func(path string, it int64) bool { return path == "b/seed=2" && it == 7 }
	start := time.Now()
	// "other" reruns b and d; one worker runs a (cached), b/seed=1,
	// b/seed=2, then c (cached) and d.
	res, err := h.run(context.Background(), "other", 1, storeDir)
	if !errors.Is(err, pipeline.ErrWriteFailed) {
		t.Fatalf("err = %v, want ErrWriteFailed", err)
	}
	t.Logf("user sees: pipeline: %s", strings.TrimPrefix(err.Error(), "pipeline: "))
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the run took %v: the held task was not stopped by the failed commit", d)
	}
	mustContain(t, err.Error(), "events: commit of", dbPath, "no space left on device",
		"progress up to the last successful write is kept", "run again to resume")
	eq(t, "interrupted", res.Interrupted, []string{"b/seed=2"})
	notStarted(t, res, "c/seed=1", "c/seed=2", "d/seed=9")

	failing.Store(false)
	h.walk.gate, h.walk.hold = nil, nil
	if after, _ := runEvents(t, storeDir, first.Run); !reflect.DeepEqual(after, firstEvents) {
		t.Errorf("events of the earlier run changed:\nbefore %+v\nafter  %+v", firstEvents, after)
	}
	h.mustRun("other", 1)
	sameOutputs(t, finalOutputs(t, storeDir), want)
}

package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/store"
)

// finalOutputs returns every task's output ID as recorded by the last
// state of each task in the log under storeDir.
func finalOutputs(t *testing.T, storeDir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for task, s := range outputsOf(t, storeDir) {
		f := strings.Fields(s)
		if len(f) != 2 {
			t.Fatalf("%s: last state %q has no output", task, s)
		}
		out[task] = f[1]
	}
	return out
}

// openStore opens the harness's store and returns it with every task's
// recorded output ID.
func (h *harness) openStore() (*store.Store, map[string]string) {
	h.t.Helper()
	dir := filepath.Join(h.dir, "store")
	st, err := store.Open(dir)
	if err != nil {
		h.t.Fatal(err)
	}
	return st, finalOutputs(h.t, dir)
}

// referenceOutputs runs profile on a fresh store and returns its outputs.
func referenceOutputs(t *testing.T, profile string) map[string]string {
	t.Helper()
	ref := newHarness(t)
	ref.mustRun(profile, 2)
	return finalOutputs(t, filepath.Join(ref.dir, "store"))
}

func sameOutputs(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d tasks have outputs, want %d: %v", len(got), len(want), got)
	}
	for task, w := range want {
		if got[task] != w {
			t.Errorf("%s: output %s, want %s (as in an uncorrupted run)", task, got[task], w)
		}
	}
}

// flipByte flips one bit of the file at path, keeping its size.
func flipByte(t *testing.T, path string, off int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off%len(b)] ^= 0x01
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// entryOf returns the ID of the named entry of an output manifest.
func entryOf(t *testing.T, st *store.Store, output, name string) store.ID {
	t.Helper()
	id, err := store.ParseID(output)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := st.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(manifest), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == name {
			e, err := store.ParseID(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
	}
	t.Fatalf("output %s has no entry %q:\n%s", output, name, manifest)
	return store.ID{}
}

func quarantined(t *testing.T, storeDir string, id store.ID) bool {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(storeDir, "quarantine"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), strings.TrimPrefix(id.String(), "xxh64-")+".") {
			return true
		}
	}
	return false
}

// TestCorruptArtifactIsRecomputed flips a byte in each kind of stored
// artifact after a complete run. The next run detects it on read,
// recomputes exactly the task that owns it (an upstream that reproduces
// the same bytes invalidates nothing downstream), quarantines the damaged
// file, heals the entry, and ends with the outputs of an uncorrupted run.
func TestCorruptArtifactIsRecomputed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		profile  string // of the second run
		artifact func(t *testing.T, st *store.Store, outputs map[string]string) store.ID
		executed []string
	}{{
		name: "output entry of an upstream task",
		artifact: func(t *testing.T, st *store.Store, o map[string]string) store.ID {
			return entryOf(t, st, o["a"], "data")
		},
		executed: []string{"a"},
	}, {
		name: "output entry of a leaf task",
		artifact: func(t *testing.T, st *store.Store, o map[string]string) store.ID {
			return entryOf(t, st, o["c/seed=2"], "data")
		},
		executed: []string{"c/seed=2"},
	}, {
		name: "output manifest",
		artifact: func(t *testing.T, st *store.Store, o map[string]string) store.ID {
			id, _ := store.ParseID(o["b/seed=1"])
			return id
		},
		executed: []string{"b/seed=1"},
	}, {
		// b's steps change, so b and d run and read a's output as input:
		// they must read the recomputed bytes, not the damaged ones.
		name:    "upstream output read as input by tasks that rerun",
		profile: "other",
		artifact: func(t *testing.T, st *store.Store, o map[string]string) store.ID {
			return entryOf(t, st, o["a"], "data")
		},
		executed: []string{"a", "b/seed=1", "b/seed=2", "d/seed=9"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			want := referenceOutputs(t, tc.profile)
			h := newHarness(t)
			h.mustRun("", 2)
			storeDir := filepath.Join(h.dir, "store")
			st, outs := h.openStore()
			id := tc.artifact(t, st, outs)
			good, err := st.Get(id)
			if err != nil {
				t.Fatal(err)
			}
			flipByte(t, st.Path(id), len(good)/2)

			res := h.mustRun(tc.profile, 2)
			eq(t, "executed", res.Executed, tc.executed)
			var cached []string
			for _, task := range allTasks {
				if !slices.Contains(tc.executed, task) {
					cached = append(cached, task)
				}
			}
			eq(t, "cached", res.Cached, cached)
			sameOutputs(t, finalOutputs(t, storeDir), want)
			if got, err := st.Get(id); err != nil || !bytes.Equal(got, good) {
				t.Errorf("entry %s not healed: %q, %v", id, got, err)
			}
			if !quarantined(t, storeDir, id) {
				t.Errorf("damaged entry %s not in quarantine", id)
			}
		})
	}
}

// TestCorruptCheckpointRestartsTask damages the checkpoint an interrupted
// task would resume from: the task starts over instead of resuming from
// bad state, and its output is that of an uninterrupted run.
func TestCorruptCheckpointRestartsTask(t *testing.T) {
	want := referenceOutputs(t, "")
	h := newHarness(t)
	storeDir := filepath.Join(h.dir, "store")
	ctx, cancel := context.WithCancel(context.Background())
	h.walk.gate = func(path string, it int64) {
		if path == "b/seed=2" && it == 7 {
			cancel()
		}
	}
	if _, err := h.run(ctx, "", 2, storeDir); !errors.Is(err, pipeline.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	h.walk.gate = nil

	evs := pipelinetest.ReadLog(t, storeDir, func(l *events.Log) ([]events.Event, error) { return l.Events("b/seed=2") })
	var ckpt *events.Checkpoint
	for _, ev := range evs {
		if ev.Type == events.TypeCheckpoint {
			ckpt = ev.Checkpoint
		}
	}
	if ckpt == nil || ckpt.Iteration != 7 {
		t.Fatalf("latest checkpoint of b/seed=2: %+v, want one at iteration 7", ckpt)
	}
	st, err := store.Open(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	id, err := store.ParseID(ckpt.Content)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, st.Path(id), 3)

	res := h.mustRun("", 2)
	if !slices.Contains(res.Executed, "b/seed=2") {
		t.Fatalf("b/seed=2 not executed: %+v", res)
	}
	sameOutputs(t, finalOutputs(t, storeDir), want)
	if !quarantined(t, storeDir, id) {
		t.Errorf("damaged checkpoint %s not in quarantine", id)
	}
	log, err := events.Open(filepath.Join(storeDir, "events.db"), events.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	evs, _ = log.Events("b/seed=2")
	for _, ev := range evs {
		if ev.Run == res.Run && ev.State == events.StateResumed {
			t.Errorf("b/seed=2 resumed from a damaged checkpoint: %s", ev.Data)
		}
	}
	runs, _ := log.IterRuns("b/seed=2")
	if its, _ := log.Iterations("b/seed=2", res.Run); len(runs) != 2 || len(its) == 0 || its[0].Iteration != 1 {
		t.Errorf("b/seed=2 after a damaged checkpoint: iteration runs %v, first iteration of the rerun %+v; want a restart at 1", runs, its)
	}
}

// TestInputCorruptedMidRun damages an upstream output after the run
// verified it and before a downstream task reads it as input. The
// downstream task must not run on the damaged bytes: the same run
// recomputes the upstream task and retries the downstream one, ending with
// the outputs of an uncorrupted run.
func TestInputCorruptedMidRun(t *testing.T) {
	want := referenceOutputs(t, "other")
	h := newHarness(t)
	h.mustRun("", 1)
	storeDir := filepath.Join(h.dir, "store")
	st, outs := h.openStore()
	data := entryOf(t, st, outs["a"], "data")
	// With one worker the "other" profile runs a (cached), then b/seed=1,
	// then b/seed=2: damage a's output while b/seed=1 runs.
	h.walk.gate = func(path string, it int64) {
		if path == "b/seed=1" && it == 3 {
			flipByte(t, st.Path(data), 0)
		}
	}
	res, err := h.run(context.Background(), "other", 1, storeDir)
	if err != nil {
		t.Fatalf("run with an input damaged mid-run: %v (%+v)", err, res)
	}
	// b/seed=2 found a's output damaged: a was recomputed and b/seed=2
	// retried, all within this run.
	eq(t, "executed", res.Executed, []string{"a", "b/seed=1", "b/seed=2", "d/seed=9"})
	eq(t, "failed", res.Failed, nil)
	if got, err := st.Get(data); err != nil || len(got) == 0 {
		t.Errorf("a's entry was not healed: %v", err)
	}
	h.walk.gate = nil
	eq(t, "executed by the next run", h.mustRun("other", 1).Executed, nil)
	sameOutputs(t, finalOutputs(t, storeDir), want)
}

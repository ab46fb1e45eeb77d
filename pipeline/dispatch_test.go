package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/store"
)

// workers is a Dispatcher that runs each attempt as a worker does
// (Engine.Work, from the spec file alone) on a goroutine of this process;
// after hook, if set, may damage what the worker left, as a killed job or a
// broken file system would, and says how the "job" ended.
type workers struct {
	h     *harness
	after func(a pipeline.Attempt, spec *pipeline.Spec) pipeline.Ended

	mu    sync.Mutex
	specs []*pipeline.Spec // every attempt dispatched, in dispatch order per task
}

func (w *workers) Dispatch(ctx context.Context, a pipeline.Attempt) (pipeline.Ended, error) {
	spec, err := pipeline.ReadSpec(a.Spec)
	if err != nil {
		return pipeline.Ended{}, err
	}
	w.mu.Lock()
	w.specs = append(w.specs, spec)
	w.mu.Unlock()
	if spec.Attempt != a.Name || spec.Task != a.Task {
		return pipeline.Ended{}, fmt.Errorf("spec names %s/%s, attempt %s/%s", spec.Task, spec.Attempt, a.Task, a.Name)
	}
	plan, err := dag.Load(spec.DAG, spec.Profile, w.h.kinds())
	if err != nil {
		return pipeline.Ended{}, err
	}
	st, err := store.Open(spec.Store)
	if err != nil {
		return pipeline.Ended{}, err
	}
	e := &pipeline.Engine{Plan: plan, Store: st, Code: w.h.code, Platform: pipeline.Platform{GoVersion: "go-test", GOARCH: "test"},
		Opt: pipeline.Options{Jobs: 2, CheckpointInterval: spec.CheckpointInterval}}
	state := "COMPLETED"
	if err := e.Work(ctx, spec); err != nil {
		state = "FAILED"
	}
	if w.after != nil {
		return w.after(a, spec), nil
	}
	return pipeline.Ended{State: state, Log: "log-of-" + a.Name}, nil
}

func (w *workers) attempts(task string) []*pipeline.Spec {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*pipeline.Spec
	for _, s := range w.specs {
		if s.Task == task {
			out = append(out, s)
		}
	}
	return out
}

// withLocalRun returns a harness whose store "local" holds a local run, and
// the path of a store for the run under test.
func withLocalRun(t *testing.T) (h *harness, local, remote string) {
	h = newHarness(t)
	local, remote = filepath.Join(h.dir, "local"), filepath.Join(h.dir, "remote")
	if _, err := h.run(context.Background(), "", 2, local); err != nil {
		t.Fatal(err)
	}
	return h, local, remote
}

// Tasks run by workers from their spec files produce the outputs a local
// run does, and a second run dispatches nothing.
func TestDispatchedRunMatchesLocal(t *testing.T) {
	h, local, remote := withLocalRun(t)
	w := &workers{h: h}
	h.dispatch = w
	res, err := h.run(context.Background(), "", 3, remote)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "executed", res.Executed, allTasks)
	if a, b := outputsOf(t, local), outputsOf(t, remote); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("outputs differ between local and dispatched runs:\n%v\n%v", a, b)
	}
	if n := len(w.specs); n != len(allTasks) {
		t.Errorf("%d attempts dispatched, want %d", n, len(allTasks))
	}
	res, err = h.run(context.Background(), "", 3, remote)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "cached on the second run", res.Cached, allTasks)
	if n := len(w.specs); n != len(allTasks) {
		t.Errorf("the second run dispatched %d attempts", n-len(allTasks))
	}
	left, _ := filepath.Glob(filepath.Join(remote, "attempts", "*", "*"))
	if len(left) > 0 {
		t.Errorf("attempt files left after merging: %v", left)
	}
	// The worker's iterations are in the log, as a local run records them.
	checkIters(t, local, remote, "b/seed=1")
}

func checkIters(t *testing.T, storeA, storeB, task string) {
	t.Helper()
	iters := func(dir string) string {
		return pipelinetest.ReadLog(t, dir, func(log *events.Log) (string, error) {
			runs, err := log.IterRuns(task)
			var b strings.Builder
			for _, run := range runs {
				its, ierr := log.Iterations(task, run)
				err = errors.Join(err, ierr)
				for _, it := range its {
					fmt.Fprintf(&b, "%d %d %v;", it.Iteration, it.Samples, it.Metrics)
				}
			}
			return b.String(), err
		})
	}
	if a, b := iters(storeA), iters(storeB); a != b || a == "" {
		t.Errorf("%s: iterations differ:\n%s\n%s", task, a, b)
	}
}

// cutAfterCheckpoint truncates an attempt file just after the frame of its
// k-th checkpoint event, as a worker SIGKILLed there leaves it.
func cutAfterCheckpoint(t *testing.T, path string, k int) {
	t.Helper()
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for n := len(full) - 1; n > 0; n-- {
		if err := os.WriteFile(path, full[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := events.ReadAttempt(path)
		if err != nil {
			t.Fatal(err)
		}
		cks := 0
		for _, ev := range a.Events {
			if ev.Type == events.TypeCheckpoint {
				cks++
			}
		}
		if cks == k && a.Events[len(a.Events)-1].Type == events.TypeCheckpoint {
			return
		}
	}
	t.Fatalf("%s has fewer than %d checkpoints", path, k)
}

// A job killed mid-task (its attempt file cut after a checkpoint) is
// resubmitted and resumes from that checkpoint, with the bits of an
// uninterrupted run.
func TestDispatchKilledAttemptResumes(t *testing.T) {
	h, local, remote := withLocalRun(t)
	w := &workers{h: h}
	w.after = func(a pipeline.Attempt, spec *pipeline.Spec) pipeline.Ended {
		if a.Task == "b/seed=1" && strings.HasSuffix(a.Name, "/1") {
			cutAfterCheckpoint(t, spec.Events, 12)
			return pipeline.Ended{State: "NODE_FAIL", Log: "node-log"}
		}
		return pipeline.Ended{State: "COMPLETED"}
	}
	h.dispatch = w
	if _, err := h.run(context.Background(), "", 3, remote); err != nil {
		t.Fatal(err)
	}
	specs := w.attempts("b/seed=1")
	if len(specs) != 2 {
		t.Fatalf("b/seed=1: %d attempts, want 2", len(specs))
	}
	if c := specs[1].Checkpoint; c == nil || c.Iteration != 12 {
		t.Fatalf("the second attempt resumes from %+v, want iteration 12", c)
	}
	if a, b := outputsOf(t, local), outputsOf(t, remote); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("outputs differ:\n%v\n%v", a, b)
	}
	checkIters(t, local, remote, "b/seed=1")
}

// A corrupt attempt file is rejected (kept aside, nothing of it recorded)
// and the task reruns.
func TestDispatchRejectsCorruptAttemptFile(t *testing.T) {
	h, local, remote := withLocalRun(t)
	var rejected string
	w := &workers{h: h}
	w.after = func(a pipeline.Attempt, spec *pipeline.Spec) pipeline.Ended {
		if a.Task == "c/seed=2" && strings.HasSuffix(a.Name, "/1") {
			b, err := os.ReadFile(spec.Events)
			if err != nil {
				t.Error(err)
			}
			b[len(b)/2] ^= 0x40
			os.WriteFile(spec.Events, b, 0o644)
			rejected = spec.Events + ".rejected"
		}
		return pipeline.Ended{State: "COMPLETED"}
	}
	h.dispatch = w
	var logb strings.Builder
	h.log = &syncWriter{w: &logb}
	if _, err := h.run(context.Background(), "", 3, remote); err != nil {
		t.Fatal(err)
	}
	if n := len(w.attempts("c/seed=2")); n != 2 {
		t.Fatalf("c/seed=2: %d attempts, want 2", n)
	}
	if _, err := os.Stat(rejected); err != nil {
		t.Errorf("the rejected file is not kept: %v", err)
	}
	if !strings.Contains(logb.String(), "attempt 1 (ended COMPLETED) rejected: events: corrupt attempt file") {
		t.Errorf("log does not say why attempt 1 was rejected:\n%s", logb.String())
	}
	if a, b := outputsOf(t, local), outputsOf(t, remote); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("outputs differ:\n%v\n%v", a, b)
	}
	checkIters(t, local, remote, "c/seed=2")
}

// A coordinator that dies after its job finished but before merging it
// leaves the attempt file; the next run adopts it instead of rerunning.
func TestDispatchAdoptsFinishedAttempt(t *testing.T) {
	h := newHarness(t)
	remote := filepath.Join(h.dir, "remote")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &workers{h: h}
	dead := &deadCoordinator{workers: w, task: "c/seed=1", cancel: cancel}
	h.dispatch = dead
	res, err := h.run(ctx, "", 1, remote)
	if !errors.Is(err, pipeline.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if len(res.Executed) == len(allTasks) {
		t.Fatal("the run was not cut short")
	}
	n := len(w.attempts("c/seed=1"))
	h.dispatch = w
	if _, err := h.run(context.Background(), "", 2, remote); err != nil {
		t.Fatal(err)
	}
	if got := len(w.attempts("c/seed=1")); got != n {
		t.Errorf("c/seed=1 was dispatched again (%d attempts, %d before): its finished attempt was not adopted", got, n)
	}
	local := filepath.Join(h.dir, "local")
	h.dispatch = nil
	if _, err := h.run(context.Background(), "", 2, local); err != nil {
		t.Fatal(err)
	}
	if a, b := outputIDs(t, local), outputIDs(t, remote); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("outputs differ:\n%v\n%v", a, b)
	}
}

// deadCoordinator runs the workers' attempt of task, then stops the run
// as if the coordinator had died before merging it (the attempt file stays).
type deadCoordinator struct {
	*workers
	task   string
	cancel context.CancelFunc
}

func (d *deadCoordinator) Dispatch(ctx context.Context, a pipeline.Attempt) (pipeline.Ended, error) {
	end, err := d.workers.Dispatch(ctx, a)
	if a.Task == d.task {
		d.cancel()
		return end, context.Canceled
	}
	return end, err
}

// A task that fails in its worker fails the run with its error and the
// job's log, and skips its descendants.
func TestDispatchedFailureNamesTaskAndLog(t *testing.T) {
	h := newHarness(t)
	h.walk.fail = "b/seed=1"
	h.dispatch = &workers{h: h}
	res, err := h.run(context.Background(), "", 2, filepath.Join(h.dir, "store"))
	if !errors.Is(err, pipeline.ErrTaskFailed) {
		t.Fatalf("err = %v, want ErrTaskFailed", err)
	}
	eq(t, "failed", res.Failed, []string{"b/seed=1"})
	eq(t, "skipped", res.Skipped, []string{"d/seed=9"})
	msg := res.Errors["b/seed=1"]
	if !strings.Contains(msg, "deliberate failure") || !strings.Contains(msg, "log-of-xxh64-") {
		t.Errorf("error = %q, want the task's error and its job log", msg)
	}
}

// A worker whose own action ID differs (another binary or dag file)
// refuses to run, naming the node and the transcript line that differs,
// and writes no attempt file.
func TestWorkerRefusesAnotherAction(t *testing.T) {
	h := newHarness(t)
	var spec *pipeline.Spec
	w := &workers{h: h}
	w.after = func(a pipeline.Attempt, s *pipeline.Spec) pipeline.Ended {
		spec = s
		return pipeline.Ended{State: "COMPLETED"}
	}
	h.dispatch = w
	h.dagYAML = strings.Replace(testDAG, "b:\n", "b:\n", 1)
	if _, err := h.run(context.Background(), "", 1, filepath.Join(h.dir, "store")); err != nil {
		t.Fatal(err)
	}
	plan, err := dag.Load(spec.DAG, spec.Profile, h.kinds())
	if err != nil {
		t.Fatal(err)
	}
	st, _ := store.Open(spec.Store)
	h.code.Bump("time")
	e := &pipeline.Engine{Plan: plan, Store: st, Code: h.code, Platform: pipeline.Platform{GoVersion: "go-test", GOARCH: "test"}}
	spec.Events = filepath.Join(h.dir, "never.attempt")
	err = e.Work(context.Background(), spec)
	if !errors.Is(err, pipeline.ErrRefused) || !strings.Contains(err.Error(), `here its transcript has "code xxh64-`) ||
		!strings.Contains(err.Error(), "another build of the binary") || !strings.Contains(err.Error(), pipeline.Host().String()) {
		t.Fatalf("err = %v, want a refusal naming the node, the differing line and its cause", err)
	}
	if _, serr := os.Stat(spec.Events); serr == nil {
		t.Error("the refusing worker created its attempt file")
	}
}

// syncWriter serialises writes (the run's log is written from several
// goroutines).
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// outputIDs maps every task to its latest output ID, whatever its state.
func outputIDs(t *testing.T, storeDir string) map[string]string {
	t.Helper()
	out := outputsOf(t, storeDir)
	for k, v := range out {
		_, out[k], _ = strings.Cut(v, " ")
	}
	return out
}

// A long task whose every job is killed after it got further (a time limit
// shorter than the task) takes as many jobs as it needs; jobs that end
// without a new checkpoint are given up on after MaxAttempts in a row.
func TestDispatchRetriesWhileProgressing(t *testing.T) {
	h, local, remote := withLocalRun(t)
	w := &workers{h: h}
	w.after = func(a pipeline.Attempt, spec *pipeline.Spec) pipeline.Ended {
		if a.Task == "b/seed=1" && (spec.Checkpoint == nil || spec.Checkpoint.Iteration < 16) {
			cutAfterCheckpoint(t, spec.Events, 2) // two iterations further each time
			return pipeline.Ended{State: "TIMEOUT"}
		}
		if a.Task == "c/seed=2" {
			os.Remove(spec.Events) // never gets anywhere
			return pipeline.Ended{State: "NODE_FAIL", Log: "the-log"}
		}
		return pipeline.Ended{State: "COMPLETED"}
	}
	h.dispatch = w
	res, err := h.run(context.Background(), "", 3, remote)
	if !errors.Is(err, pipeline.ErrTaskFailed) {
		t.Fatalf("err = %v, want ErrTaskFailed (c/seed=2)", err)
	}
	if n := len(w.attempts("b/seed=1")); n != 9 {
		t.Errorf("b/seed=1: %d attempts, want 9 (8 cut short, 2 iterations each, then one to the end)", n)
	}
	if n := len(w.attempts("c/seed=2")); n != 4 {
		t.Errorf("c/seed=2: %d attempts, want 4", n)
	}
	if msg := res.Errors["c/seed=2"]; !strings.Contains(msg, "gave up after 4 attempts") || !strings.Contains(msg, "NODE_FAIL (log the-log)") {
		t.Errorf("c/seed=2 error = %q", msg)
	}
	a, b := outputsOf(t, local), outputsOf(t, remote)
	if a["b/seed=1"] != b["b/seed=1"] || a["d/seed=9"] != b["d/seed=9"] {
		t.Errorf("outputs differ: %v\n%v", a, b)
	}
	checkIters(t, local, remote, "b/seed=1")
}

// An attempt its worker refused (another action ID there) fails its task
// at once, with the worker's reason and log, instead of being resubmitted;
// its dependents are skipped.
func TestDispatchRefusedFailsAtOnce(t *testing.T) {
	h := newHarness(t)
	w := &workers{h: h}
	w.after = func(a pipeline.Attempt, s *pipeline.Spec) pipeline.Ended {
		if a.Task == "b/seed=1" {
			return pipeline.Ended{State: pipeline.Refused, Detail: "task b/seed=1 has action X on node7 (AMD EPYC)", Log: "log-of-" + a.Name}
		}
		return pipeline.Ended{State: "COMPLETED"}
	}
	h.dispatch = w
	res, err := h.run(context.Background(), "", 2, filepath.Join(h.dir, "store"))
	if !errors.Is(err, pipeline.ErrTaskFailed) {
		t.Fatalf("err = %v, want ErrTaskFailed", err)
	}
	eq(t, "failed", res.Failed, []string{"b/seed=1"})
	if n := len(w.attempts("b/seed=1")); n != 1 {
		t.Errorf("b/seed=1 was dispatched %d times, want once", n)
	}
	if msg := res.Errors["b/seed=1"]; !strings.Contains(msg, "worker refused the task: task b/seed=1 has action X on node7 (AMD EPYC)") || !strings.Contains(msg, "(log log-of-") {
		t.Errorf("error = %q, want the refusal and the log", msg)
	}
}

// adopter is a Dispatcher whose Adopt finds one task's attempt live (as a
// Slurm runner of a killed coordinator would hold it) and runs it.
type adopter struct {
	*workers
	task    string
	adopted []string // the spec files adopted
}

func (a *adopter) Adopt(ctx context.Context, at pipeline.Attempt) (pipeline.Ended, bool, error) {
	if at.Task != a.task {
		return pipeline.Ended{}, false, nil
	}
	a.adopted = append(a.adopted, at.Spec)
	e, err := a.workers.Dispatch(ctx, at)
	return e, true, err
}

// hanging dispatches nothing for one task: its Dispatch waits until the
// run is cancelled, leaving the spec as a coordinator killed while a job
// ran the attempt would.
type hanging struct {
	*workers
	task   string
	cancel context.CancelFunc
}

func (h *hanging) Dispatch(ctx context.Context, a pipeline.Attempt) (pipeline.Ended, error) {
	if a.Task != h.task {
		return h.workers.Dispatch(ctx, a)
	}
	h.cancel()
	<-ctx.Done()
	return pipeline.Ended{}, ctx.Err()
}

// A restarted coordinator adopts an attempt that a job of the killed one
// still runs (the Dispatcher is an Adopter): it waits for that attempt and
// merges it instead of dispatching the task anew.
func TestDispatchAdoptsLiveAttempt(t *testing.T) {
	h := newHarness(t)
	remote := filepath.Join(h.dir, "remote")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &workers{h: h}
	h.dispatch = &hanging{workers: w, task: "c/seed=1", cancel: cancel}
	if _, err := h.run(ctx, "", 1, remote); !errors.Is(err, pipeline.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	specs, _ := filepath.Glob(filepath.Join(remote, "attempts", "*", "1.spec.json"))
	if len(specs) != 1 {
		t.Fatalf("spec files left: %v, want the hanging attempt's", specs)
	}
	ad := &adopter{workers: w, task: "c/seed=1"}
	h.dispatch = ad
	var logb strings.Builder
	h.log = &syncWriter{w: &logb}
	if _, err := h.run(context.Background(), "", 2, remote); err != nil {
		t.Fatal(err)
	}
	if len(ad.adopted) != 1 || ad.adopted[0] != specs[0] {
		t.Fatalf("adopted %v, want %v", ad.adopted, specs)
	}
	if n := len(w.attempts("c/seed=1")); n != 1 {
		t.Errorf("c/seed=1 ran %d attempts, want the adopted one only", n)
	}
	if !strings.Contains(logb.String(), "c/seed=1: adopted attempt 1, which a job of an earlier coordinator was running") {
		t.Errorf("the log does not tell of the adoption:\n%s", logb.String())
	}
	local := filepath.Join(h.dir, "local")
	h.dispatch, h.log = nil, nil
	if _, err := h.run(context.Background(), "", 2, local); err != nil {
		t.Fatal(err)
	}
	if a, b := outputIDs(t, local), outputIDs(t, remote); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("outputs differ:\n%v\n%v", a, b)
	}
}

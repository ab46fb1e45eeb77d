package pipeline_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/store"
	"zorepro/pipeline/task"
)

// walkKind runs an iterative random walk seeded by its streams, with
// checkpoints; it optionally adds an input's value.
type walkKind struct {
	// gate, when set, is called after each iteration (tests use it to
	// cancel mid-task).
	gate func(path string, it int64)
	// hold, when it returns true after an iteration, makes the task wait
	// there until its context is cancelled (at most 10s).
	hold func(path string, it int64) bool
	fail string // a task path that fails
}

func (walkKind) Name() string       { return "walk" }
func (walkKind) Version() int       { return 1 }
func (walkKind) Slots() []task.Slot { return []task.Slot{{Name: "in"}} }
func (k *walkKind) Plan(p *task.Params) task.Runner {
	return &walkRunner{k: k, n: p.Int("steps", task.Required(), task.Above(0))}
}

type walkRunner struct {
	k *walkKind
	n int64
}

func (r *walkRunner) Components() []any { return []any{time.Duration(0)} } // package "time"
func (r *walkRunner) Run(ctx context.Context, env task.Env) error {
	if env.Path() == r.k.fail {
		return errors.New("deliberate failure")
	}
	base := 0.0
	for _, in := range env.Inputs("in") {
		b, err := in.Read("data")
		if err != nil {
			return err
		}
		var f float64
		fmt.Sscan(string(b), &f)
		base += f
	}
	x, start := base, int64(0)
	if st, it, ok, err := env.Resume(); err != nil {
		return err
	} else if ok {
		x, start = math.Float64frombits(binary.LittleEndian.Uint64(st)), it
	}
	src := env.Streams()
	for it := start + 1; it <= r.n; it++ {
		// Each iteration has its own stream; the parallel part reduces
		// in index order.
		parts := make([]float64, 4)
		if err := env.Parallel(ctx, 4, func(i int) error {
			parts[i] = src.Rand("step", uint64(it), uint64(i)).NormFloat64()
			return nil
		}); err != nil {
			return err
		}
		for _, p := range parts {
			x += p
		}
		env.Iteration(task.Iter{Iteration: it, Samples: it * 4, Metrics: []task.Metric{{Name: "x", Value: x}}})
		if r.k.gate != nil {
			r.k.gate(env.Path(), it)
		}
		if r.k.hold != nil && r.k.hold(env.Path(), it) {
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
			}
		}
		if ctx.Err() != nil || env.CheckpointDue() {
			if err := env.Checkpoint(binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)), it); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return env.Output("data", []byte(task.FormatFloat(x)))
}

const testDAG = `
version: 1
seeds:
  s: [1, 2]
stages:
  - name: a
    kind: src
    params: {value: 3}
  - name: b
    kind: walk
    params: {steps: 20}
    inputs: {in: a}
    matrix: {seed: $s}
  - name: c
    kind: walk
    params: {steps: 5}
    matrix: {seed: $s}
  - name: d
    kind: walk
    params: {steps: 3}
    inputs: {in: {stage: b, where: {seed: [1]}}}
    matrix: {seed: [9]}
profiles:
  other:
    stages:
      b: {params: {steps: 21}}
`

type harness struct {
	t         *testing.T
	dir       string
	code      *pipelinetest.FakeCode
	walk      *walkKind
	dagYAML   string
	storeOpt  store.Options        // e.g. a failing CreateTemp
	logOpt    events.Options       // e.g. a failing BeforeCommit; Timeout is set by run
	log       io.Writer            // the run's plain log (nil: none)
	dispatch  pipeline.Dispatcher  // runs tasks as workers (nil: in the run)
	extra     map[string]task.Kind // more kinds (e.g. cohort_test.go's)
	noCohorts bool                 // Options.NoCohorts
	figures   string               // Options.FiguresDir
	only      []string             // run only these targets (nil: the whole dag)
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, dir: t.TempDir(), code: pipelinetest.NewFakeCode(), walk: &walkKind{}, dagYAML: testDAG}
}

func (h *harness) kinds() map[string]task.Kind {
	kinds := map[string]task.Kind{"src": pipelinetest.SrcKind{}, "walk": h.walk}
	for name, k := range h.extra {
		kinds[name] = k
	}
	return kinds
}

func (h *harness) run(ctx context.Context, profile string, jobs int, store_ string) (*pipeline.Result, error) {
	h.t.Helper()
	path := filepath.Join(h.dir, "dag.yaml")
	if err := os.WriteFile(path, []byte(h.dagYAML), 0o644); err != nil {
		h.t.Fatal(err)
	}
	plan, err := dag.Load(path, profile, h.kinds())
	if err != nil {
		h.t.Fatal(err)
	}
	if h.only != nil {
		if plan, err = plan.Only(h.only); err != nil {
			h.t.Fatal(err)
		}
	}
	st, err := store.OpenWith(store_, h.storeOpt)
	if err != nil {
		h.t.Fatal(err)
	}
	lopt := h.logOpt
	lopt.Timeout = time.Second
	log, err := events.Open(filepath.Join(store_, "events.db"), lopt)
	if err != nil {
		h.t.Fatal(err)
	}
	defer log.Close()
	e := &pipeline.Engine{Plan: plan, Store: st, Events: log, Code: h.code, Platform: pipeline.Platform{GoVersion: "go-test", GOARCH: "test"},
		Opt: pipeline.Options{Jobs: jobs, CheckpointInterval: 0, Log: h.log, NoCohorts: h.noCohorts, FiguresDir: h.figures}, Dispatcher: h.dispatch}
	return e.Run(ctx)
}

func (h *harness) mustRun(profile string, jobs int) *pipeline.Result {
	h.t.Helper()
	res, err := h.run(context.Background(), profile, jobs, filepath.Join(h.dir, "store"))
	if err != nil {
		h.t.Fatalf("run: %v (%+v)", err, res)
	}
	return res
}

func eq(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) { // nil and empty are equal
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

var allTasks = []string{"a", "b/seed=1", "b/seed=2", "c/seed=1", "c/seed=2", "d/seed=9"}

func TestSecondRunExecutesNothing(t *testing.T) {
	h := newHarness(t)
	eq(t, "first run executed", h.mustRun("", 2).Executed, allTasks)
	res := h.mustRun("", 2)
	eq(t, "second run executed", res.Executed, nil)
	eq(t, "second run cached", res.Cached, allTasks)
}

func TestParameterChangeRerunsOnlyDescendants(t *testing.T) {
	h := newHarness(t)
	h.mustRun("", 2)
	res := h.mustRun("other", 2) // b.steps 20 → 21
	eq(t, "executed", res.Executed, []string{"b/seed=1", "b/seed=2", "d/seed=9"})
	eq(t, "cached", res.Cached, []string{"a", "c/seed=1", "c/seed=2"})
}

func TestIdenticalUpstreamBytesCutOff(t *testing.T) {
	h := newHarness(t)
	h.mustRun("", 2)
	// value 3 → value 13 with mod 10: a reruns but publishes the same bytes.
	h.dagYAML = strings.Replace(testDAG, "params: {value: 3}", "params: {value: 13, mod: 10}", 1)
	res := h.mustRun("", 2)
	eq(t, "executed", res.Executed, []string{"a"})
	eq(t, "cached", res.Cached, allTasks[1:])
}

func TestCodeChangeRerunsOnlyItsClosure(t *testing.T) {
	h := newHarness(t)
	h.mustRun("", 2)
	h.code.Bump("time") // the walk kind's component package
	res := h.mustRun("", 2)
	eq(t, "executed after editing walk's package", res.Executed, allTasks[1:])
	h.code.Bump("bytes") // src's package: a reruns, same bytes, nothing else does
	res = h.mustRun("", 2)
	eq(t, "executed after editing src's package", res.Executed, []string{"a"})
	h.code.Bump("unrelated")
	eq(t, "executed after editing an unused package", h.mustRun("", 2).Executed, nil)
}

func outputsOf(t *testing.T, storeDir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for task, s := range pipelinetest.LastStates(t, storeDir) {
		out[task] = s.State + " " + s.Output
	}
	return out
}

func TestJobsDoNotChangeOutputs(t *testing.T) {
	h := newHarness(t)
	s1, s4 := filepath.Join(h.dir, "s1"), filepath.Join(h.dir, "s4")
	if _, err := h.run(context.Background(), "", 1, s1); err != nil {
		t.Fatal(err)
	}
	if _, err := h.run(context.Background(), "", 4, s4); err != nil {
		t.Fatal(err)
	}
	o1, o4 := outputsOf(t, s1), outputsOf(t, s4)
	if len(o1) != len(allTasks) || fmt.Sprint(o1) != fmt.Sprint(o4) {
		t.Fatalf("outputs differ between --jobs 1 and 4:\n%v\n%v", o1, o4)
	}
}

func TestFailureSkipsDescendants(t *testing.T) {
	h := newHarness(t)
	h.walk.fail = "b/seed=1"
	res, err := h.run(context.Background(), "", 2, filepath.Join(h.dir, "store"))
	if !errors.Is(err, pipeline.ErrTaskFailed) {
		t.Fatalf("err = %v, want ErrTaskFailed", err)
	}
	eq(t, "failed", res.Failed, []string{"b/seed=1"})
	eq(t, "skipped", res.Skipped, []string{"d/seed=9"})
	eq(t, "executed", res.Executed, []string{"a", "b/seed=2", "c/seed=1", "c/seed=2"})
	if !strings.Contains(res.Errors["b/seed=1"], "deliberate failure") {
		t.Errorf("error text = %q", res.Errors["b/seed=1"])
	}
}

// The plain log of a run that finds everything cached is one summary line
// for the cached tasks and the run's last line: no line per task.
func TestPlainLogSumsUpCachedTasks(t *testing.T) {
	h := newHarness(t)
	var first bytes.Buffer
	h.log = &first
	res := h.mustRun("", 2)
	n := len(res.Executed)
	starts := 0
	for _, l := range strings.Split(first.String(), "\n") {
		if strings.HasPrefix(l, "start ") {
			starts++
		}
	}
	if got := starts; got != n {
		t.Errorf("first run: %d start lines for %d executed tasks:\n%s", got, n, first.String())
	}
	var again bytes.Buffer
	h.log = &again
	res = h.mustRun("", 2)
	if len(res.Cached) != n || len(res.Executed) != 0 {
		t.Fatalf("second run: %+v", res)
	}
	lines := strings.Split(strings.TrimSuffix(again.String(), "\n"), "\n")
	want := fmt.Sprintf("[%d/%d] cached   %d tasks (identity unchanged, output intact)", n, n, n)
	if len(lines) != 2 || lines[0] != want || !strings.HasPrefix(lines[1], "run finished in ") {
		t.Errorf("no-op run's log:\n%s\nwant %q and the run's last line", again.String(), want)
	}
}

func TestInterruptThenResumeIsIdentical(t *testing.T) {
	ref := newHarness(t)
	ref.mustRun("", 2)
	want := outputsOf(t, filepath.Join(ref.dir, "store"))

	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	h.walk.gate = func(path string, it int64) {
		if path == "b/seed=2" && it == 7 {
			cancel()
		}
	}
	res, err := h.run(ctx, "", 2, filepath.Join(h.dir, "store"))
	if !errors.Is(err, pipeline.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if !slices.Contains(res.Interrupted, "b/seed=2") {
		t.Fatalf("interrupted = %v", res.Interrupted)
	}
	h.walk.gate = nil
	var plain bytes.Buffer
	h.log = &plain
	res = h.mustRun("", 2)
	if !slices.Contains(res.Executed, "b/seed=2") {
		t.Fatalf("b/seed=2 not resumed: %+v", res)
	}
	// The plain log says where the task resumed.
	if !strings.Contains(plain.String(), "b/seed=2: resumed after iteration 7, from the checkpoint run 1 recorded\n") {
		t.Errorf("the log does not say that b/seed=2 resumed:\n%s", plain.String())
	}
	got := outputsOf(t, filepath.Join(h.dir, "store"))
	for task, w := range want {
		g := got[task]
		if strings.Fields(g)[1] != strings.Fields(w)[1] {
			t.Errorf("%s: output %s after resume, %s uninterrupted", task, g, w)
		}
	}
	// The resumed attempt started from the checkpoint, not from scratch.
	log, err := events.Open(filepath.Join(h.dir, "store", "events.db"), events.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	evs, _ := log.Events("b/seed=2")
	resumed := false
	for _, ev := range evs {
		if ev.State == "resumed" {
			resumed = true
		}
	}
	if !resumed {
		t.Error("no resumed event for b/seed=2")
	}
	runs, _ := log.IterRuns("b/seed=2")
	if len(runs) != 2 {
		t.Fatalf("iteration events in runs %v, want two runs", runs)
	}
	second, _ := log.Iterations("b/seed=2", runs[1])
	if second[0].Iteration != 8 {
		t.Errorf("resumed run starts at iteration %d, want 8", second[0].Iteration)
	}
}

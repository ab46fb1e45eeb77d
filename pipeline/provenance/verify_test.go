package provenance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/store"
	"zorepro/pipeline/task"
)

// driftKind is an iterative task whose values can be made to drift after
// iteration driftFrom, as a nondeterministic bug would.
type driftKind struct {
	driftFrom int64 // 0: deterministic
	stopAt    int64 // cancel the run after this iteration (0: never)
	cancel    context.CancelFunc
}

func (*driftKind) Name() string       { return "drift" }
func (*driftKind) Version() int       { return 1 }
func (*driftKind) Slots() []task.Slot { return []task.Slot{{Name: "in"}} }
func (k *driftKind) Plan(p *task.Params) task.Runner {
	return &driftRunner{k: k, n: p.Int("steps", task.Required(), task.Above(0))}
}

type driftRunner struct {
	k *driftKind
	n int64
}

func (r *driftRunner) Components() []any { return []any{strings.Builder{}} } // package "strings"
func (r *driftRunner) Run(ctx context.Context, env task.Env) error {
	x, start := 0.0, int64(0)
	if st, it, ok, err := env.Resume(); err != nil {
		return err
	} else if ok {
		if err := json.Unmarshal(st, &x); err != nil {
			return err
		}
		start = it
	}
	src := env.Streams()
	for it := start + 1; it <= r.n; it++ {
		x += src.Rand("step", uint64(it)).NormFloat64()
		if r.k.driftFrom > 0 && it >= r.k.driftFrom {
			x += 1e-12
		}
		env.Iteration(task.Iter{Iteration: it, Samples: 10 * it, Digest: uint64(it), Metrics: []task.Metric{{Name: "x", Value: x}}})
		if r.k.stopAt == it {
			r.k.cancel()
		}
		if ctx.Err() != nil || env.CheckpointDue() {
			st, _ := json.Marshal(x)
			if err := env.Checkpoint(st, it); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	b, _ := json.Marshal(x)
	return env.Output("data", b)
}

const driftDAG = `
version: 1
seeds:
  s: [1, 2, 3]
stages:
  - name: a
    kind: src
    params: {value: 3}
  - name: w
    kind: drift
    params: {steps: 30}
    inputs: {in: a}
    matrix: {seed: $s}
`

type driftHarness struct {
	t    *testing.T
	dir  string
	code *pipelinetest.FakeCode
	kind *driftKind
}

func newDrift(t *testing.T) *driftHarness {
	return &driftHarness{t: t, dir: t.TempDir(), code: pipelinetest.NewFakeCode(), kind: &driftKind{}}
}

// engine opens the store and log; the log is closed at the test's end.
func (h *driftHarness) engine(ckpt time.Duration) *pipeline.Engine {
	h.t.Helper()
	path := filepath.Join(h.dir, "dag.yaml")
	if err := os.WriteFile(path, []byte(driftDAG), 0o644); err != nil {
		h.t.Fatal(err)
	}
	plan, err := dag.Load(path, "", map[string]task.Kind{"src": pipelinetest.SrcKind{}, "drift": h.kind})
	if err != nil {
		h.t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(h.dir, "store"))
	if err != nil {
		h.t.Fatal(err)
	}
	log, err := events.Open(filepath.Join(h.dir, "store", "events.db"), events.Options{Timeout: time.Second})
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { log.Close() })
	return &pipeline.Engine{Plan: plan, Store: st, Events: log, Code: h.code, Platform: pipeline.Platform{GoVersion: "go-test", GOARCH: "test"},
		Opt: pipeline.Options{Jobs: 2, CheckpointInterval: ckpt}}
}

// run runs the plan once with a fresh engine and closes its log.
func (h *driftHarness) run(ctx context.Context, ckpt time.Duration) (*pipeline.Result, error) {
	e := h.engine(ckpt)
	defer e.Events.Close()
	return e.Run(ctx)
}

// interruptedThenResumed runs the DAG twice: the first run is cancelled at
// iteration 9 (checkpointing every iteration), the second resumes and
// finishes. It returns an engine on the result.
func (h *driftHarness) interruptedThenResumed() *pipeline.Engine {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.kind.stopAt, h.kind.cancel = 9, cancel
	if _, err := h.run(ctx, 0); !errors.Is(err, pipeline.ErrInterrupted) {
		h.t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	h.kind.stopAt = 0
	if _, err := h.run(context.Background(), time.Hour); err != nil {
		h.t.Fatal(err)
	}
	return h.engine(time.Hour)
}

func (h *driftHarness) scratch() *provenance.Scratch {
	h.t.Helper()
	sc, err := provenance.OpenScratch(filepath.Join(h.t.TempDir(), "scratch"))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { sc.Close() })
	return sc
}

func TestReplayReproducesEveryEvent(t *testing.T) {
	h := newDrift(t)
	if _, err := h.run(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	e := h.engine(time.Hour)
	rep, err := provenance.New(e).Replay(context.Background(), "w/seed=2", 0, h.scratch())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Recorded != 30 || rep.Equal != 30 || rep.Output != rep.RecordedOutput {
		t.Fatalf("replay: %+v", rep)
	}
	rep, err = provenance.New(e).Replay(context.Background(), "w/seed=2", 7, h.scratch())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || !rep.Stopped || rep.Recorded != 7 || rep.Recomputed != 7 || rep.Equal != 7 {
		t.Fatalf("replay --until 7: %+v", rep)
	}
}

// A task that no longer computes what it recorded is caught: replay names
// the first differing event, verify the differing output.
func TestReplayAndVerifyCatchADrift(t *testing.T) {
	h := newDrift(t)
	if _, err := h.run(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	h.kind.driftFrom = 12
	e := h.engine(time.Hour)
	rep, err := provenance.New(e).Replay(context.Background(), "w/seed=1", 0, h.scratch())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Diff == nil || rep.Equal != 11 || rep.Diff.Field != "metric x" || rep.Diff.Recorded.Iteration != 12 {
		t.Fatalf("replay of a drifting task: %+v (diff %+v)", rep, rep.Diff)
	}
	if rep.Output == rep.RecordedOutput {
		t.Error("drifted output reported identical")
	}
	cands, err := provenance.New(e).VerifyCandidates()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cands {
		names = append(names, c.Task)
	}
	eq(t, "verify candidates", names, []string{"a", "w/seed=1", "w/seed=2", "w/seed=3"})
	vs, err := provenance.New(e).Verify(context.Background(), cands, h.scratch(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		want := v.Task == "a"
		if v.Match != want {
			t.Errorf("%s: match %v, want %v (%+v)", v.Task, v.Match, want, v)
		}
		if !want && (len(v.Differ) != 1 || !strings.HasPrefix(v.Differ[0], "data (")) {
			t.Errorf("%s: differing entries %v, want [data (...)]", v.Task, v.Differ)
		}
	}
	// The real store and log are untouched: a run still takes everything
	// from the cache.
	h.kind.driftFrom = 0
	e.Events.Close()
	res, err := h.run(context.Background(), time.Hour)
	if err != nil || len(res.Executed) != 0 {
		t.Fatalf("run after verify: %+v, %v", res, err)
	}
}

// Verify gives every recorded task a verdict: a task whose output or
// input fails its hash check, or whose identity changed, is listed with
// the reason instead of being left out, and the verdicts cover the whole
// selection.
func TestVerifyNamesWhatItCannotCheck(t *testing.T) {
	h := newDrift(t)
	if _, err := h.run(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	e := h.engine(time.Hour)
	rec := provenance.New(e)
	output := func(task string) string {
		p, err := rec.LastProduction(task)
		if err != nil {
			t.Fatal(err)
		}
		return p.Output
	}
	// Corrupt the one entry of w/seed=2's output, and the manifest of a
	// (every w task's input).
	es, err := e.Outputs(output("w/seed=2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.Store.Path(es[0].ID), []byte("not what was stored"), 0o644); err != nil {
		t.Fatal(err)
	}
	cands, err := rec.VerifyCandidates()
	if err != nil || len(cands) != 4 {
		t.Fatalf("candidates %d, %v; want all 4 recorded tasks", len(cands), err)
	}
	got := map[string]provenance.Verified{}
	vs, err := rec.Verify(context.Background(), cands, h.scratch(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		got[v.Task] = v
	}
	if v := got["w/seed=2"]; v.Verdict != provenance.CorruptOutput || v.Match || !strings.Contains(v.Reason, "entry data") {
		t.Errorf("w/seed=2 with a corrupt output: %+v", v)
	}
	for _, task := range []string{"a", "w/seed=1", "w/seed=3"} {
		if v := got[task]; v.Verdict != provenance.Reproduced || !v.Match {
			t.Errorf("%s: %+v, want reproduced", task, v)
		}
	}
	// The check left the corrupt entry where it was (the engine's store is
	// writable here; only Get quarantines).
	if _, err := os.Stat(e.Store.Path(es[0].ID)); err != nil {
		t.Errorf("verify moved the corrupt entry: %v", err)
	}

	mf, _ := store.ParseID(output("a"))
	if err := os.Remove(e.Store.Path(mf)); err != nil {
		t.Fatal(err)
	}
	vs, err = rec.Verify(context.Background(), cands, h.scratch(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": provenance.MissingOutput, "w/seed=1": provenance.MissingInput,
		"w/seed=2": provenance.CorruptOutput, "w/seed=3": provenance.MissingInput}
	for _, v := range vs {
		if v.Verdict != want[v.Task] {
			t.Errorf("%s: verdict %q (%s), want %q", v.Task, v.Verdict, v.Reason, want[v.Task])
		}
		if v.Verdict == provenance.MissingInput && !strings.HasPrefix(v.Reason, "a: ") {
			t.Errorf("%s: reason %q does not name the input task", v.Task, v.Reason)
		}
	}
	e.Events.Close()

	// A fresh store where the code changed: every task is listed as changed.
	h2 := newDrift(t)
	if _, err := h2.run(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	h2.code.Bump("strings")
	e2 := h2.engine(time.Hour)
	cands, err = provenance.New(e2).VerifyCandidates()
	if err != nil {
		t.Fatal(err)
	}
	vs, err = provenance.New(e2).Verify(context.Background(), cands, h2.scratch(), nil)
	if err != nil || len(vs) != 4 {
		t.Fatalf("verify after a code change: %d verdicts, %v", len(vs), err)
	}
	for _, v := range vs {
		wantV, wantR := provenance.Changed, "changed: code"
		if v.Task == "a" { // src does not import strings
			wantV, wantR = provenance.Reproduced, ""
		}
		if v.Verdict != wantV || v.Reason != wantR {
			t.Errorf("%s after a code change: %q %q, want %q %q", v.Task, v.Verdict, v.Reason, wantV, wantR)
		}
	}
}

func TestReplayRefusesAChangedIdentity(t *testing.T) {
	h := newDrift(t)
	if _, err := h.run(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	h.code.Bump("strings")
	_, err := provenance.New(h.engine(time.Hour)).Replay(context.Background(), "w/seed=1", 0, h.scratch())
	var ie *provenance.IdentityError
	if !errors.As(err, &ie) || !errors.Is(err, provenance.ErrIdentityChanged) {
		t.Fatalf("err = %v, want an IdentityError", err)
	}
	if !slices.ContainsFunc(ie.Diff, func(l string) bool { return strings.Contains(l, "code-pkg strings v1") }) {
		t.Errorf("diff does not show the code change: %v", ie.Diff)
	}
}

// An interrupted and resumed task is audited and replayed from the events
// of both runs: the first run's up to its checkpoint, then the second's.
func TestReplayOfAResumedTask(t *testing.T) {
	h := newDrift(t)
	e := h.interruptedThenResumed()
	p, err := provenance.New(e).LastProduction("w/seed=1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Segments) != 2 || p.Segments[0].Resumed || !p.Segments[1].Resumed {
		t.Fatalf("segments %+v, want a start and a resume", p.Segments)
	}
	its, err := p.Iterations(e.Events)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range its {
		if it.Iteration != int64(i+1) {
			t.Fatalf("merged iterations %d: %d, want %d", i, it.Iteration, i+1)
		}
	}
	rep, err := provenance.New(e).Replay(context.Background(), "w/seed=1", 0, h.scratch())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Equal != 30 {
		t.Fatalf("replay of a resumed task: %+v", rep)
	}
}

// Iterations recorded past the last checkpoint by a run that was then
// killed are superseded by the resumed run's.
func TestIterationsAfterAKillAreSuperseded(t *testing.T) {
	dir := t.TempDir()
	log, err := events.Open(filepath.Join(dir, "events.db"), events.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	it := func(i int64, x float64) task.Iter {
		return task.Iter{Iteration: i, Samples: i, Metrics: []task.Metric{{Name: "x", Value: x}}}
	}
	var first, second []task.Iter
	for i := int64(1); i <= 10; i++ {
		first = append(first, it(i, 1))
	}
	for i := int64(7); i <= 12; i++ {
		second = append(second, it(i, 2))
	}
	const path, act = "w", "xxh64-00000000000000aa"
	for _, r := range []struct {
		iters  []task.Iter
		resume bool
		done   bool
	}{{first, false, false}, {second, true, true}} {
		run, err := log.BeginRun(nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		w := log.NewWriter(events.WriterOptions{})
		w.Append(events.Event{Type: events.TypeTranscript, Run: run, Task: path, Action: act, Transcript: "path w"})
		w.Append(events.Event{Type: events.TypeState, Run: run, Task: path, Action: act, State: events.StateStarted})
		if r.resume {
			w.Append(events.Event{Type: events.TypeState, Run: run, Task: path, Action: act, State: events.StateResumed, Data: json.RawMessage(`{"iteration":6}`)})
		}
		w.Append(events.Event{Type: events.TypeIter, Run: run, Task: path, Iters: r.iters})
		if r.done {
			w.Append(events.Event{Type: events.TypeState, Run: run, Task: path, Action: act, State: events.StateDone, Output: "xxh64-00000000000000bb"})
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	p, err := provenance.Produced(log, path, "xxh64-00000000000000bb")
	if err != nil {
		t.Fatal(err)
	}
	its, err := p.Iterations(log)
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 12 {
		t.Fatalf("%d iterations, want 12: %+v", len(its), its)
	}
	for i, x := range its {
		want := 1.0
		if x.Iteration > 6 {
			want = 2
		}
		if x.Iteration != int64(i+1) || x.Metrics[0].Value != want {
			t.Errorf("event %d: iteration %d x %v, want %d x %v", i, x.Iteration, x.Metrics[0].Value, i+1, want)
		}
	}
}

func TestSampleIsSeededAndInPlanOrder(t *testing.T) {
	var xs []provenance.Explained
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		xs = append(xs, provenance.Explained{Task: n})
	}
	names := func(s []provenance.Explained) string {
		var out []string
		for _, x := range s {
			out = append(out, x.Task)
		}
		return strings.Join(out, ",")
	}
	a, b := names(provenance.Sample(xs, 3, 7)), names(provenance.Sample(xs, 3, 7))
	if a != b || len(strings.Split(a, ",")) != 3 {
		t.Fatalf("same seed picked %s then %s", a, b)
	}
	if s := strings.Split(a, ","); !slices.IsSorted(s) {
		t.Errorf("sample %v is not in plan order", s)
	}
	differs := false
	for seed := uint64(1); seed < 20; seed++ {
		if names(provenance.Sample(xs, 3, seed)) != a {
			differs = true
		}
	}
	if !differs {
		t.Error("every seed picks the same tasks")
	}
	if names(provenance.Sample(xs, 0, 1)) != names(xs) || names(provenance.Sample(xs, 99, 1)) != names(xs) {
		t.Error("n <= 0 or n >= len must return everything")
	}
}

func TestGCRemovesOnlyUnreferenced(t *testing.T) {
	h := newDrift(t)
	// The first run is interrupted (checkpointing every iteration), so the
	// interrupted tasks hold checkpoints of unfinished actions.
	ctx, cancel := context.WithCancel(context.Background())
	h.kind.stopAt, h.kind.cancel = 9, cancel
	first, err := h.run(ctx, 0)
	if !errors.Is(err, pipeline.ErrInterrupted) || len(first.Interrupted) == 0 {
		t.Fatalf("err = %v (%+v), want ErrInterrupted", err, first)
	}
	h.kind.stopAt = 0
	e := h.engine(0)
	st := e.Store
	orphan, err := st.Put([]byte("written by a task that never finished"))
	if err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(st.Root(), "tmp", "put-123")
	if err := os.WriteFile(leftover, []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := provenance.New(e).GC(provenance.GCOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Removed != 1 || rep.Leftovers != 1 || !st.Has(orphan) {
		t.Fatalf("dry run: %+v", rep)
	}
	rep, err = provenance.New(e).GC(provenance.GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Removed != 1 || rep.RemovedEntries[0] != orphan.String() || st.Has(orphan) || rep.Leftovers != 1 {
		t.Fatalf("gc: %+v", rep)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("leftover temp file survived: %v", err)
	}
	e.Events.Close()
	// Everything referenced survived: the unfinished task resumes from its
	// checkpoint and everything else is cached.
	res, err := h.run(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var unfinished []string
	for _, n := range []string{"a", "w/seed=1", "w/seed=2", "w/seed=3"} {
		if !slices.Contains(first.Executed, n) {
			unfinished = append(unfinished, n)
		}
	}
	eq(t, "executed after gc", res.Executed, unfinished)
	e = h.engine(time.Hour)
	for _, n := range first.Interrupted {
		evs, _ := e.Events.Events(n)
		if !slices.ContainsFunc(evs, func(ev events.Event) bool { return ev.State == events.StateResumed }) {
			t.Errorf("%s did not resume from its checkpoint after gc", n)
		}
	}
	// --checkpoints drops the checkpoints of finished actions only.
	rep, err = provenance.New(e).GC(provenance.GCOptions{Checkpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checkpoints == 0 || rep.Checkpoints != rep.Removed {
		t.Fatalf("gc --checkpoints: %+v", rep)
	}
	e.Events.Close()
	res, err = h.run(context.Background(), time.Hour)
	if err != nil || len(res.Executed) != 0 {
		t.Fatalf("run after gc --checkpoints executed %v (%v)", res.Executed, err)
	}
}

// A run removes the temp files of a figure export that was killed, and
// nothing else in the figures directory.
func TestRunRemovesStaleExportTempFiles(t *testing.T) {
	h := newDrift(t)
	figs := filepath.Join(h.dir, "figures")
	if err := os.MkdirAll(figs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".tmp-123", "mine.png"} {
		if err := os.WriteFile(filepath.Join(figs, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := h.engine(time.Hour)
	e.Opt.FiguresDir = figs
	if _, err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(figs, ".tmp-123")); !os.IsNotExist(err) {
		t.Errorf("stale export temp file survived: %v", err)
	}
	if _, err := os.Stat(filepath.Join(figs, "mine.png")); err != nil {
		t.Errorf("a file that is not an export temp file was removed: %v", err)
	}
}

// Task times and the runs behind them span an interrupted and a resumed run.
func TestTaskTimesAcrossRuns(t *testing.T) {
	e := newDrift(t).interruptedThenResumed()
	sts, err := provenance.New(e).TaskTimes()
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 2 || sts[1].Stage != "w" || sts[1].Finished != 3 || sts[1].TaskTime <= 0 || fmt.Sprint(sts[1].Runs) != "[1 2]" {
		t.Fatalf("task times: %+v", sts)
	}
	wall, err := provenance.New(e).RunsWallTime(sts[1].Runs)
	if err != nil || wall <= 0 {
		t.Fatalf("wall time of runs %v: %v, %v", sts[1].Runs, wall, err)
	}
}

func eq(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) { // nil and empty are equal
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// flipOutput rewrites, in bucket of the closed event log at db, every
// value that holds output so that it holds output with its last hex digit
// changed: a recorded output ID damaged on disk (issue 41, defect 7).
func flipOutput(t *testing.T, db, bucket, output string) {
	t.Helper()
	last := output[len(output)-1]
	flipped := output[:len(output)-1] + map[bool]string{true: "1", false: "0"}[last == '0']
	bdb, err := bolt.Open(db, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	n := 0
	err = bdb.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		type kv struct{ k, v []byte }
		var edits []kv
		b.ForEach(func(k, v []byte) error {
			if strings.Contains(string(v), output) {
				edits = append(edits, kv{slices.Clone(k), []byte(strings.ReplaceAll(string(v), output, flipped))})
			}
			return nil
		})
		for _, e := range edits {
			n++
			if err := b.Put(e.k, e.v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("flipping %s in %s: %d values, %v", output, bucket, n, err)
	}
}

// A task whose recorded output ID is damaged (in the action index, or in
// its done event) is listed as a corrupt record, never left out: verify
// checks as many tasks as a clean store's (issue 41, defect 7).
func TestVerifyNamesADamagedOutputRecord(t *testing.T) {
	for _, bucket := range []string{"actions", "log"} {
		t.Run(bucket, func(t *testing.T) {
			h := newDrift(t)
			if _, err := h.run(context.Background(), time.Hour); err != nil {
				t.Fatal(err)
			}
			e := h.engine(time.Hour)
			p, err := provenance.New(e).LastProduction("w/seed=2")
			if err != nil {
				t.Fatal(err)
			}
			e.Events.Close()
			flipOutput(t, filepath.Join(h.dir, "store", "events.db"), bucket, p.Output)
			e = h.engine(time.Hour)
			rec := provenance.New(e)
			cands, err := rec.VerifyCandidates()
			if err != nil || len(cands) != 4 {
				t.Fatalf("candidates: %d, %v; want all 4 recorded tasks, the damaged one included", len(cands), err)
			}
			vs, err := rec.Verify(context.Background(), cands, h.scratch(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				want := provenance.Reproduced
				if v.Task == "w/seed=2" {
					want = provenance.CorruptRecord
				}
				if v.Verdict != want {
					t.Errorf("%s: verdict %q (%s), want %q", v.Task, v.Verdict, v.Reason, want)
				}
				if v.Task == "w/seed=2" && !strings.Contains(v.Reason, "event log") {
					t.Errorf("%s: reason %q does not say the event log is damaged", v.Task, v.Reason)
				}
			}
		})
	}
}

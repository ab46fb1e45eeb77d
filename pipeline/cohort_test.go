package pipeline_test

import (
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"sync/atomic"
	"testing"

	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// shareKind's tasks add coef·v_it over their iterations, where v_it is a
// costly value that depends on the task's group and the iteration only:
// the tasks of one group form a cohort and take it through their Sharer.
type shareKind struct {
	makes atomic.Int64 // values computed
	gate  func(path string, it int64)
}

func (*shareKind) Name() string       { return "share" }
func (*shareKind) Version() int       { return 1 }
func (*shareKind) Slots() []task.Slot { return nil }
func (k *shareKind) Plan(p *task.Params) task.Runner {
	return &shareRunner{k: k, n: p.Int("steps", task.Required()), coef: p.Float("coef", task.Required()), group: p.String("group", task.Default(""))}
}

type shareRunner struct {
	k     *shareKind
	n     int64
	coef  float64
	group string
}

func (r *shareRunner) CohortKey() string { return r.group }
func (r *shareRunner) Components() []any { return []any{[]int8(nil)} }
func (r *shareRunner) Run(ctx context.Context, env task.Env) error {
	var sh task.Sharer
	if se, ok := env.(task.ShareEnv); ok {
		sh = se.Sharer()
	}
	value := func(it int64) float64 {
		make := func() any {
			r.k.makes.Add(1)
			return stream.New(7, r.group, nil).Rand("v", uint64(it)).NormFloat64()
		}
		if sh == nil {
			return make().(float64)
		}
		return sh.Share(r.group+"/"+task.FormatFloat(float64(it)), make).(float64)
	}
	x, start := 0.0, int64(0)
	if st, it, ok, err := env.Resume(); err != nil {
		return err
	} else if ok {
		x, start = math.Float64frombits(binary.LittleEndian.Uint64(st)), it
	}
	for it := start + 1; it <= r.n; it++ {
		x += r.coef * value(it)
		if r.k.gate != nil {
			r.k.gate(env.Path(), it)
		}
		if ctx.Err() != nil {
			if err := env.Checkpoint(binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)), it); err != nil {
				return err
			}
			return ctx.Err()
		}
	}
	return env.Output("data", []byte(task.FormatFloat(x)))
}

const cohortDAG = `
version: 1
stages:
  - name: g
    kind: share
    params: {steps: 40, group: g}
    matrix: {coef: [1, 2, 3, 4, 5]}
  - name: h
    kind: share
    params: {steps: 30, group: h}
    matrix: {coef: [1, 2]}
  - name: alone
    kind: share
    params: {steps: 10}
    matrix: {coef: [1, 2]}
`

func cohortHarness(t *testing.T, k *shareKind) *harness {
	h := newHarness(t)
	h.dagYAML = cohortDAG
	h.extra = map[string]task.Kind{"share": k}
	return h
}

// TestCohortSharesValuesOnce: the tasks of a cohort compute each shared
// value once, and every task's output is the same bits as when each runs
// alone, with any number of workers.
func TestCohortSharesValuesOnce(t *testing.T) {
	var want map[string]string
	for _, c := range []struct {
		jobs      int
		noCohorts bool
		makes     int64
	}{{1, true, 5*40 + 2*30 + 2*10}, {1, false, 40 + 30 + 2*10}, {2, false, 40 + 30 + 2*10}, {4, false, 40 + 30 + 2*10}} {
		k := &shareKind{}
		h := cohortHarness(t, k)
		h.noCohorts = c.noCohorts
		h.mustRun("", c.jobs)
		if got := k.makes.Load(); got != c.makes {
			t.Errorf("jobs %d, no cohorts %v: %d values computed, want %d", c.jobs, c.noCohorts, got, c.makes)
		}
		got := outputIDs(t, filepath.Join(h.dir, "store"))
		if want == nil {
			want = got
			continue
		}
		for task, out := range want {
			if got[task] != out {
				t.Errorf("jobs %d, no cohorts %v: %s output %s, alone %s", c.jobs, c.noCohorts, task, got[task], out)
			}
		}
	}
}

// TestCohortInterruptThenResume: a run stopped while a cohort is half way
// resumes each member from its checkpoint, with the bits of an
// uninterrupted run.
func TestCohortInterruptThenResume(t *testing.T) {
	ref := cohortHarness(t, &shareKind{})
	ref.mustRun("", 2)
	want := outputIDs(t, filepath.Join(ref.dir, "store"))

	ctx, cancel := context.WithCancel(context.Background())
	k := &shareKind{gate: func(path string, it int64) {
		if path == "g/coef=3" && it == 17 {
			cancel()
		}
	}}
	h := cohortHarness(t, k)
	res, err := h.run(ctx, "", 2, filepath.Join(h.dir, "store"))
	if err == nil || len(res.Interrupted) == 0 {
		t.Fatalf("the run was not interrupted: %v %+v", err, res)
	}
	k.gate = nil
	h.mustRun("", 2)
	got := outputIDs(t, filepath.Join(h.dir, "store"))
	for task, out := range want {
		if got[task] != out {
			t.Errorf("%s: resumed output %s, uninterrupted %s", task, got[task], out)
		}
	}
	states := pipelinetest.LastStates(t, filepath.Join(h.dir, "store"))
	for task := range want {
		if states[task].State != "done" && states[task].State != "cached" {
			t.Errorf("%s ended %s", task, states[task].State)
		}
	}
}

var _ task.Cohort = (*shareRunner)(nil)

package provenance

import (
	"context"
	"math"
	"testing"

	"zorepro/pipeline/dag"
	"zorepro/pipeline/task"
)

// A recorded speed predicts a task's time: from iteration spans (the rate
// inside them, plus the mean time outside), else from a line through
// tasks of different sizes (set-up separated from the per-sample time),
// else from the plain ratio.
func TestSpeedPredicts(t *testing.T) {
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: %g, want %g", what, got, want)
		}
	}
	// Two tasks of 1000 work units in 3 s each, of which 900 units took
	// 1.8 s inside the iterations: 2 ms per unit, 1 s outside.
	spans := speed{work: []float64{1000, 1000}, secs: []float64{3, 3}, spanWork: 1800, spanSecs: 3.6}
	near("span", spans.seconds(1e6), 1+2e-3*1e6)
	// No spans: tasks of 100 and 1000 units took 0.2 s and 1.1 s: 1 ms
	// per unit after 0.1 s of set-up.
	line := speed{work: []float64{100, 1000, 100, 1000}, secs: []float64{0.2, 1.1, 0.2, 1.1}}
	near("line", line.seconds(1e5), 0.1+1e-3*1e5)
	// One size only: the ratio.
	ratio := speed{work: []float64{500, 500}, secs: []float64{1, 2}}
	near("ratio", ratio.seconds(1000), 3)
	// A line that would need negative set-up time falls back to the ratio.
	noisy := speed{work: []float64{100, 1000}, secs: []float64{0.01, 2}}
	near("negative intercept", noisy.seconds(1100), 2.01)

	if !spans.better(&ratio) || ratio.better(&spans) {
		t.Error("timed spans must beat whole-task times")
	}
	if !line.better(&noisy) || noisy.better(&line) {
		t.Error("more recorded time must win between whole-task times")
	}
}

// stubRunner is a task runner with one component, for keys and tiers.
type stubRunner struct{ comp any }

func (r stubRunner) Components() []any                 { return []any{r.comp} }
func (stubRunner) Run(context.Context, task.Env) error { return nil }

type stubBody struct{}

// A task at a size nothing has recorded is timed by the same method on
// the same named instance at other sizes (one body's own line) before the
// same method over every instance: two bodies of one type, one 10× the
// other's time per sample, recorded at H = 1 and 2, predict H = 34 each
// at its own rate, not at their mix.
func TestNamedInstanceRateBeforeTheMix(t *testing.T) {
	stage := &dag.Stage{Name: "tune/x"}
	mk := func(name, h string) *dag.Task {
		return &dag.Task{Path: "tune/x/horizon=" + h + "/method=ars/name=" + name + "/alpha=0.01/seed=1", Stage: stage, Runner: stubRunner{stubBody{}},
			Coords: []task.Coord{{Axis: "horizon", Value: h}, {Axis: "method", Value: "ars"}, {Axis: "name", Value: name}, {Axis: "alpha", Value: "0.01"}, {Axis: "seed", Value: "1"}}}
	}
	if namedKey(mk("ant", "1")) != namedKey(mk("ant", "34")) || namedKey(mk("ant", "1")) == namedKey(mk("swimmer", "1")) {
		t.Fatalf("named keys: %q, %q, %q", namedKey(mk("ant", "1")), namedKey(mk("ant", "34")), namedKey(mk("swimmer", "1")))
	}
	sp := &speeds{group: map[string]*speed{}, peer: map[string]*speed{}, named: map[string]*speed{}, namedX: map[string]*speed{},
		kind: map[string]*speed{}, method: map[string]*speed{}, stage: map[string]*speed{},
		hint: func(*dag.Task) float64 { return 0 }, prior: func(*dag.Task) float64 { return 0 }}
	for _, r := range []struct {
		name, h    string
		work, secs float64
	}{{"swimmer", "1", 5000, 0.2}, {"swimmer", "2", 10000, 0.4}, {"ant", "1", 5000, 2}, {"ant", "2", 10000, 4}} {
		tk := mk(r.name, r.h)
		for _, k := range []struct {
			m   map[string]*speed
			key string
		}{{sp.named, namedKey(tk)}, {sp.namedX, namedAcross(tk)}, {sp.kind, kindKey(tk)}, {sp.method, componentsOf(tk)}, {sp.stage, stage.Name}} {
			if k.m[k.key] == nil {
				k.m[k.key] = &speed{}
			}
			k.m[k.key].add(speed{work: []float64{r.work}, secs: []float64{r.secs}})
		}
	}
	for _, c := range []struct {
		name string
		want float64
	}{{"swimmer", 6.8}, {"ant", 68}} {
		got, src := sp.predict(mk(c.name, "34"), 170000)
		if math.Abs(got-c.want) > 1e-9 || src != sourceNamed {
			t.Errorf("%s at H = 34: %g s from %q, want %g s from %q", c.name, got, src, c.want, sourceNamed)
		}
	}
}

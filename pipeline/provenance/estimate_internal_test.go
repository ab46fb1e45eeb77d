package provenance

import (
	"context"
	"math"
	"slices"
	"strconv"
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

// none is a fallback that knows no time.
func none(*dag.Task) float64 { return 0 }

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
	sp := newSpeeds(none, none)
	for _, r := range []struct {
		name, h    string
		work, secs float64
	}{{"swimmer", "1", 5000, 0.2}, {"swimmer", "2", 10000, 0.4}, {"ant", "1", 5000, 2}, {"ant", "2", 10000, 4}} {
		sp.record(mk(r.name, r.h), speed{work: []float64{r.work}, secs: []float64{r.secs}})
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

// costedStub is a part with a sample budget.
type costedStub struct {
	stubRunner
	cost int64
}

func (c costedStub) Cost() int64 { return c.cost }

// A tuning selection that extends its grid runs the new trials itself, so
// its time is a number of its own trials. Known answers, worked by hand:
// on Ant, at H = 1 a selection took 12 s over parts of 2 s each (six
// trials, two extension rounds on three seeds), at H = 2 one took 26 s
// over parts of 4 s (6.5 trials): Ant's ratio is (12 + 26) / (2 + 4) =
// 19/3. Ant's selection at H = 21, whose parts a rate of 2 s per 5,000
// samples times at 42 s, is predicted at 19/3 · 42 = 266 s, where the
// mean of the stage's recorded selections would have said 12.8 s. A
// selection once recorded is timed by its own record; one of an instance
// with no recorded selection takes the stage's ratio.
func TestSplitTaskTimedByItsParts(t *testing.T) {
	stage := &dag.Stage{Name: "tune/x"}
	index := 0
	mk := func(path string, runner task.Runner, coords ...task.Coord) *dag.Task {
		index++
		return &dag.Task{Path: path, Stage: stage, Runner: runner, Coords: coords, Index: index - 1}
	}
	selection := func(name, h string) *dag.Task {
		sel := mk("tune/x/horizon="+h+"/name="+name, stubRunner{stubBody{}}, task.Coord{Axis: "horizon", Value: h}, task.Coord{Axis: "name", Value: name})
		n, _ := strconv.Atoi(h)
		for _, seed := range []string{"1", "2"} {
			part := mk(sel.Path+"/alpha=0.01/seed="+seed, costedStub{stubRunner{stubBody{}}, int64(5000 * n)},
				task.Coord{Axis: "horizon", Value: h}, task.Coord{Axis: "name", Value: name}, task.Coord{Axis: "alpha", Value: "0.01"}, task.Coord{Axis: "seed", Value: seed})
			part.Parent = sel
			sel.Parts = append(sel.Parts, part)
		}
		return sel
	}
	h1, h2, h21 := selection("ant", "1"), selection("ant", "2"), selection("ant", "21")
	s1, s21 := selection("swimmer", "1"), selection("swimmer", "21")
	var tasks []*dag.Task
	for _, sel := range []*dag.Task{h1, h2, h21, s1, s21} {
		tasks = append(append(tasks, sel), sel.Parts...)
	}
	whole := wholeTimes{mean: map[string]meanTime{}, secs: map[int]float64{h1.Index: 12, h2.Index: 26, s1.Index: 0.5}}
	for _, sel := range []*dag.Task{h1, h2, s1} {
		for _, key := range []string{"group " + groupOf(sel), "stage " + stage.Name} {
			m := whole.mean[key]
			m.sum += whole.secs[sel.Index]
			m.n++
			whole.mean[key] = m
		}
	}
	parts := map[int]float64{h1.Parts[0].Index: 1.5, h1.Parts[1].Index: 2.5, h2.Parts[0].Index: 4, h2.Parts[1].Index: 4, s1.Parts[0].Index: 0.2, s1.Parts[1].Index: 0.2}
	ratios := partRatios(tasks, whole.secs, parts)
	// Swimmer's one selection did not extend: 0.5 s over parts of 0.2 s.
	// The stage's ratio: (12 + 26 + 0.5) / (2 + 4 + 0.2).
	want := map[string]float64{"named " + namedKey(h1): 19.0 / 3, "named " + namedKey(s1): 2.5, "stage " + stage.Name: 38.5 / 6.2}
	if len(ratios) != len(want) {
		t.Fatalf("ratios %v, want %v", ratios, want)
	}
	for k, w := range want {
		if math.Abs(ratios[k]-w) > 1e-12 {
			t.Errorf("ratio %s: %g, want %g", k, ratios[k], w)
		}
	}
	sp := newSpeeds(none, none)
	sp.named[namedKey(h1.Parts[0])] = &speed{work: []float64{5000, 10000}, secs: []float64{2, 4}}
	sp.named[namedKey(s1.Parts[0])] = &speed{work: []float64{5000, 10000}, secs: []float64{2, 4}}
	got, src := wholeTime(h21, whole, ratios, sp)
	if math.Abs(got-266) > 1e-9 || src != sourceParts {
		t.Errorf("the selection at H = 21: %g s from %q, want 266 s from %q", got, src, sourceParts)
	}
	if got, src := wholeTime(h2, whole, ratios, sp); got != 26 || src != sourceRecorded {
		t.Errorf("the recorded selection at H = 2: %g s from %q, want its own 26 s", got, src)
	}
	// The dry run names the selections neither their own record nor their
	// method and instance's times.
	for _, c := range []struct {
		t    *dag.Task
		x    taskTime
		want bool
	}{
		{h21, taskTime{source: sourceParts}, false},
		{h2, taskTime{source: sourceRecorded, own: true}, false},
		{s21, taskTime{source: sourcePartsStage}, true},
		{s21, taskTime{source: sourceRecorded}, true},
		{s21, taskTime{}, true},
		{h21.Parts[0], taskTime{source: sourceNamed}, false},
	} {
		if got := unmatched(c.t, c.x); got != c.want {
			t.Errorf("unmatched(%s, %+v) = %v, want %v", c.t.Path, c.x, got, c.want)
		}
	}
	// A selection of an instance none of whose selections is recorded
	// takes the stage's ratio: (Swimmer's parts at the same rate
	// here, 2 s per 5,000 samples) 38.5/6.2 · 42.
	delete(ratios, "named "+namedKey(s1))
	if got, src := wholeTime(s21, whole, ratios, sp); math.Abs(got-38.5/6.2*42) > 1e-9 || src != sourcePartsStage {
		t.Errorf("Swimmer's selection at H = 21 without its own ratio: %g s from %q, want %g s from %q", got, src, 38.5/6.2*42, sourcePartsStage)
	}
	// Without recorded parts the stage's mean is all there is.
	if got, src := wholeTime(h21, whole, partRatios(tasks, whole.secs, nil), sp); math.Abs(got-38.5/3) > 1e-9 || src != sourceRecorded {
		t.Errorf("with no part recorded: %g s from %q, want the stage's mean %g s", got, src, 38.5/3)
	}
}

// A tuning trial at a size nothing has recorded is timed by the same grid
// point at other sizes before the method's line through every point: on
// one body, trials at α = 0.01 (diverging: 5× the time per sample) and at
// α = 10⁻⁴, recorded at H = 1 and 2, predict H = 34 each at its own rate.
func TestGridPointRateBeforeTheInstance(t *testing.T) {
	stage := &dag.Stage{Name: "tune/x"}
	mk := func(alpha, h string) *dag.Task {
		coords := []task.Coord{{Axis: "horizon", Value: h}, {Axis: "method", Value: "ars"}, {Axis: "name", Value: "ant"}}
		sel := &dag.Task{Path: "tune/x/horizon=" + h + "/method=ars/name=ant", Stage: stage, Runner: stubRunner{stubBody{}}, Coords: coords}
		return &dag.Task{Path: sel.Path + "/alpha=" + alpha + "/seed=1", Stage: stage, Runner: stubRunner{stubBody{}}, Parent: sel,
			Coords: append(slices.Clip(coords), task.Coord{Axis: "alpha", Value: alpha}, task.Coord{Axis: "seed", Value: "1"})}
	}
	if pointKey(mk("0.01", "1")) != pointKey(mk("0.01", "34")) || pointKey(mk("0.01", "1")) == pointKey(mk("0.0001", "1")) || pointKey(mk("0.01", "1").Parent) != "" {
		t.Fatalf("point keys: %q, %q, %q", pointKey(mk("0.01", "1")), pointKey(mk("0.01", "34")), pointKey(mk("0.0001", "1")))
	}
	sp := newSpeeds(none, none)
	for _, r := range []struct {
		alpha, h   string
		work, secs float64
	}{{"0.0001", "1", 5000, 2}, {"0.0001", "2", 10000, 4}, {"0.01", "1", 5000, 10}, {"0.01", "2", 10000, 20}} {
		sp.record(mk(r.alpha, r.h), speed{work: []float64{r.work}, secs: []float64{r.secs}})
	}
	for _, c := range []struct {
		alpha string
		want  float64
	}{{"0.0001", 68}, {"0.01", 340}} {
		got, src := sp.predict(mk(c.alpha, "34"), 170000)
		if math.Abs(got-c.want) > 1e-9 || src != sourcePoint {
			t.Errorf("α = %s at H = 34: %g s from %q, want %g s from %q", c.alpha, got, src, c.want, sourcePoint)
		}
	}
}

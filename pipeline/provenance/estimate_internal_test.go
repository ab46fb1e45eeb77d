package provenance

import (
	"math"
	"testing"
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

package provenance

import (
	"slices"
	"testing"

	"zorepro/pipeline/dag"
)

// chain builds tasks 0..n-1 whose deps are given by index.
func chain(deps [][]int) []*dag.Task {
	ts := make([]*dag.Task, len(deps))
	for i := range deps {
		ts[i] = &dag.Task{Path: string(rune('a' + i)), Index: i}
		for _, d := range deps[i] {
			ts[i].Deps = append(ts[i].Deps, ts[d])
		}
	}
	return ts
}

// Known answers, worked by hand: a fan-out of four 10 s tasks after a 1 s
// task, joined by a 2 s task, beside a lone 25 s task (index 6).
//
//	critical path: a(1) → any of b..e(10) → f(2) = 13, but g alone is 25.
//	1 worker: everything in a row, 1+40+2+25 = 68.
//	2 workers: a and g start at 0 (g is ready at once); a ends at 1, b on
//	the free worker 1..11, c 11..21, d 21..31 (g ends at 25: e 25..35),
//	f after e: 35..37.
//	many workers: g's 25.
func TestScheduleKnownAnswers(t *testing.T) {
	ts := chain([][]int{{}, {0}, {0}, {0}, {0}, {1, 2, 3, 4}, {}})
	dur := []float64{1, 10, 10, 10, 10, 2, 25}
	length, path := criticalPath(ts, dur)
	if length != 25 || !slices.Equal(path, []int{6}) {
		t.Errorf("critical path = %v %v, want 25 [6]", length, path)
	}
	dur[6] = 5
	length, path = criticalPath(ts, dur)
	if length != 13 || !slices.Equal(path, []int{0, 1, 5}) {
		t.Errorf("critical path = %v %v, want 13 [0 1 5] (ties to the first dependency)", length, path)
	}
	dur[6] = 25
	for _, c := range []struct {
		workers int
		want    float64
	}{{1, 68}, {2, 37}, {8, 25}} {
		if got := listSchedule(ts, dur, c.workers); got != c.want {
			t.Errorf("%d workers: %v, want %v", c.workers, got, c.want)
		}
	}
}

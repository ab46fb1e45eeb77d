package olr

import (
	"strconv"

	"zorepro/pipeline/task"
)

// sampleCosts are the per-round times of each algorithm at d = 10, 100
// and 1000 relative to d = 10, measured between the first and last
// iteration of the quick profile's T = 10^4 train tasks (2 cores):
// Algorithm 1 (paramrs) 0.81 / 5.5 / 290 µs, Algorithm 2 (actionrs)
// 0.27 / 4.5 / 298 µs per round. (A task's set-up, about 1.8 s at
// d = 1000, is not per round.)
var sampleCosts = map[string]task.CostTable{
	"paramrs":  {{Size: 10, Cost: 1}, {Size: 100, Cost: 6.8}, {Size: 1000, Cost: 360}},
	"actionrs": {{Size: 10, Cost: 1}, {Size: 100, Cost: 16.5}, {Size: 1000, Cost: 1090}},
}

// SampleCost implements task.SampleCoster: the time of one round at the
// task's d relative to d = 10, for its algorithm.
func (Env) SampleCost(coord func(axis string) (string, bool)) float64 {
	ds, ok := coord("d")
	if !ok {
		return 1
	}
	d, err := strconv.ParseFloat(ds, 64)
	if err != nil {
		return 1
	}
	m, _ := coord("method")
	t, ok := sampleCosts[m]
	if !ok {
		t = sampleCosts["paramrs"]
	}
	return t.At(d)
}

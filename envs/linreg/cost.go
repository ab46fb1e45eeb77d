package linreg

import "zorepro/pipeline/task"

// sampleCosts are the per-sample times of each method at d = 10, 100 and
// 1000 relative to d = 10, measured from the quick profile's train tasks
// (commit b6d012d, 2 cores): ARS 0.78 / 3.8 / 37 µs, SGD 0.26 / 2.2 / 59 µs,
// REINFORCE 0.22 / 2.4 / 61 µs, natural REINFORCE 0.31 / 4.2 µs, Newton
// 0.41 / 4.3 µs per sample. Sampling an example is O(d²) (z = Factor·ε);
// the methods' own work grows differently with d, hence one table each.
var sampleCosts = task.CostTables{Size: "d", By: "method", Default: "ars", Tables: map[string]task.CostTable{
	"ars":        {{Size: 10, Cost: 1}, {Size: 100, Cost: 4.84}, {Size: 1000, Cost: 47.7}},
	"sgd":        {{Size: 10, Cost: 1}, {Size: 100, Cost: 8.37}, {Size: 1000, Cost: 229}},
	"reinforce":  {{Size: 10, Cost: 1}, {Size: 100, Cost: 11.0}, {Size: 1000, Cost: 282}},
	"nreinforce": {{Size: 10, Cost: 1}, {Size: 100, Cost: 13.6}},
	"newton":     {{Size: 10, Cost: 1}, {Size: 100, Cost: 10.5}},
}}

// SampleCost implements task.SampleCoster: the time of one sample at the
// task's d relative to d = 10, for its method (ARS's table for a method
// not measured).
func (Env) SampleCost(coord func(axis string) (string, bool)) float64 {
	return sampleCosts.SampleCost(coord)
}

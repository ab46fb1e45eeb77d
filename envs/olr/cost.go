package olr

import "zorepro/pipeline/task"

// sampleCosts are the per-round times of each algorithm at d = 10, 100
// and 1000 relative to d = 10, measured between the first and last
// iteration of train tasks: at d = 10 and 100 the quick profile's
// T = 10^4 runs (Algorithm 1, paramrs, 0.81 / 5.5 µs per round;
// Algorithm 2, actionrs, 0.27 / 4.5 µs), at d = 1000 a paper-profile
// T = 10^5 run alone on a core (148 µs per round; two such runs side by
// side on 2 cores take about twice as long each). A task's set-up (about
// 1.5 s at d = 1000) is not per round.
var sampleCosts = task.CostTables{Size: "d", By: "method", Default: "paramrs", Tables: map[string]task.CostTable{
	"paramrs":  {{Size: 10, Cost: 1}, {Size: 100, Cost: 6.8}, {Size: 1000, Cost: 183}},
	"actionrs": {{Size: 10, Cost: 1}, {Size: 100, Cost: 16.5}, {Size: 1000, Cost: 548}},
}}

// SampleCost implements task.SampleCoster: the time of one round at the
// task's d relative to d = 10, for its algorithm.
func (Env) SampleCost(coord func(axis string) (string, bool)) float64 {
	return sampleCosts.SampleCost(coord)
}

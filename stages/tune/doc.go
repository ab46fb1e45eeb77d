// Package tune is the tune stage kind: it runs an algorithm at every
// feasible point of a hyperparameter grid on every tuning seed (each trial
// to a sample budget, scored by one final evaluation), and selects the
// point with the best mean score, ties to the first point in grid loop
// order (the algorithm's Hyper order, values in file order).
//
// All grid points of one seed share that seed's streams (scope
// "<task>/seed=<s>", root s): common random numbers, as the original code
// had by reseeding per run, so grid points are compared on the same data.
// Trials run in parallel and checkpoint as they complete; scores are
// reduced in trial order.
//
// Outputs: "table.csv" (every grid point's per-seed and mean score, the
// chosen point and the reference point marked) and "chosen.json"
// ({"params": {...}, "score": ..., "reference": {...}}), which a train
// stage takes through its "hyper" slot.
package tune

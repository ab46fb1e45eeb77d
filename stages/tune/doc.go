// Package tune is the tune stage kind: it runs an algorithm at every
// feasible point of a hyperparameter grid on every tuning seed (each trial
// to a sample budget, scored by one final evaluation), and selects the
// point with the best mean score, ties to the first point in grid loop
// order (the algorithm's Hyper order, values in file order).
//
// Every trial is a task of its own (the tune runner is a task.Splitter):
// "<tune task>/<axis>=<value>/…/seed=<s>", upstream of the tune task, with
// the trial's own parameters (the point's values over the base, the
// trainer, budget and score) as its identity, so that a cluster schedules
// trials one by one and a grid that grows reruns only its new points. A
// trial outputs "score.json" (its score as exact text, NaN included, and
// how far it ran); the tune task reads them in trial order (point-major)
// and selects.
//
// All grid points of one seed share that seed's streams (scope
// "<tune task>/seed=<s>", root s; a trial draws from its tune task's
// streams): common random numbers, as the original code had by reseeding
// per run, so grid points are compared on the same data.
//
// Outputs of the tune task: "table.csv" (every grid point's per-seed and
// mean score, the chosen point and the reference point marked) and
// "chosen.json" ({"params": {...}, "score": ..., "reference": {...}}),
// which a train stage takes through its "hyper" slot.
package tune

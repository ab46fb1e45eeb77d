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
// Grid values are decoded exactly as the parameters they stand for: a
// value the parameter would reject is an error naming params.grid.<axis>
// (a reference value likewise, params.reference.<field>). The only points
// a tune task leaves out are infeasible combinations of valid values (a
// problem the algorithm's Decode marks with task.Params.Conflictf, such as
// ARS's top-b above its number of directions, or a configuration that
// fails Validate); Skipped lists them with their reasons for the plan.
//
// Carrying: with the parameter "carry" (a list of hyperparameters) and a
// tune task bound to the optional "carry" slot, every trial runs with that
// task's choice of those hyperparameters instead of the stage's own
// values, and the choice records them. The horizon sweep tunes α at long
// horizons with N and ν carried from H = 15 this way.
//
// Outputs of the tune task: "table.csv" (every grid point's per-seed and
// mean score, the chosen point and the reference point marked),
// "skipped.csv" (when points were infeasible: their values and reasons)
// and "chosen.json" ({"params": {...}, "score": ..., "reference": {...},
// "carried": {...}, "carried_from": task}), which a train stage takes
// through its "hyper" slot.
package tune

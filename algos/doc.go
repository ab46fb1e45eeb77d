// Package algos is the shared driver of the optimizers: the Method interface,
// Run (loop, sample budget, snapshot schedule, events, checkpoints and
// resume), and the shared numerics of spec §1 (RunningStat, ESAdam). Each
// optimizer lives in its own sub-package (algos/sgd, algos/ars, ...) so that
// the pipeline's per-package code hash reruns only the tasks of an edited
// algorithm.
//
// The seam to environments is typed (bind.go). An algorithm package exports
// a Factory, an Algorithm[C, P]: it decodes its parameters once into its
// typed configuration C (Decode) and builds a Method on a problem P, where P
// is constrained by the problem interface the algorithm declares. An
// environment package exports an Env[I] over its own instance type I and
// never imports this package. Bind pairs them at the composition root
// (zorepro/stages), which checks at compile time that I satisfies the
// algorithm's problem interface, and hides both types behind Trainer and
// Setup, which the train and tune stages run. A tuning choice is recorded
// as the JSON of the configuration's hyperparameter fields (Setup.Choice)
// and laid back over a typed configuration (Setup.Tuned). Evaluation
// settings travel as a typed trajectory.Header.
//
// Invariants:
//   - Results never depend on goroutine scheduling or the wall clock. A
//     Method draws iteration it's randomness from streams indexed by it
//     (zorepro/pipeline/stream), so a fresh Method restored from a checkpoint
//     reproduces the uninterrupted run bit for bit; Run's checkpoint holds
//     the iteration, the sample total, the trajectory so far and the
//     method's state.
//   - Every binary encoding (Trajectory, checkpoints, RunningStat, ESAdam,
//     method states) is written with zorepro/pipeline/blob: a 4-byte magic,
//     a uint32 version, little-endian and deterministic values, decoded by
//     functions that validate lengths and never panic (fuzzed).
//   - Sample counts are int64 totals; Budget and Schedule interpret them as
//     documented on those types.
//
// Dimension mismatches are programmer errors and panic; configuration,
// decoding and I/O problems are returned errors (sentinels in errors.go).
package algos

// Package algos is the shared driver of the optimizers: the Method interface,
// Run (loop, sample budget, snapshot schedule, events, checkpoints and
// resume), the Trajectory artifact, and the shared numerics of spec §1
// (RunningStat, ESAdam). Each optimizer lives in its own sub-package
// (algos/sgd, algos/ars, ...) so that the pipeline's per-package code hash
// reruns only the tasks of an edited algorithm.
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

// Package task is the small, stable API between the pipeline engine and
// the stage kinds (generate, tune, train, evaluate, plot).
//
// A Kind plans a task from its resolved parameters (decoded once, through
// Params, into typed values) and returns a Runner; the engine hashes what
// the Runner declares (its Components' packages, its resolved parameters,
// its inputs' output IDs) into the task's identity and, on a cache miss,
// calls Run with an Env. Everything a task reads or writes goes through
// the Env: named inputs, named outputs, named RNG streams, per-iteration
// events, checkpoints and a worker pool, so the engine can record it.
//
// Invariants:
//   - Params decoding is pure: the same raw values give the same typed
//     values, the same Resolved() lines and the same errors.
//   - A Runner's result may depend only on its parameters, its inputs'
//     bytes, its streams and its code; never on time, map order or
//     goroutine scheduling.
//
// This package is in the code closure of every task: changing it reruns
// everything, so keep it small.
package task

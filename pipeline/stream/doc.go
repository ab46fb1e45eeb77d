// Package stream derives named, independent random-number streams from a
// root seed, so that no result depends on goroutine scheduling.
//
// Every independent unit of work (a task, a tuning trial, an ARS direction,
// an episode, an evaluation batch) draws from its own stream. A stream is
// identified by (root seed, scope, name, indices): the scope is the task path
// (or a sub-scope such as a tuning trial), the name says what the stream is
// for ("batch", "directions") and the indices say which unit (iteration,
// direction). The two PCG seeds are xxhash64 digests of a canonical text of
// that identity (see Derive), so any stream can be recomputed from what the
// event log records.
//
// Invariants:
//   - Derive is a pure function; changing it changes every result, so its
//     text carries a version prefix ("zorepro/stream/v1").
//   - A Source is a value; Sub returns a new Source and never mutates.
//   - The optional Log records each stream family (scope, name, arity) once;
//     it is safe for concurrent use and lists families in sorted order.
package stream

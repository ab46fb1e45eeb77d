// Package trajectory is the artifact a train task hands to the tasks that
// evaluate and audit it: the snapshots a run kept (Point), and a typed
// Header that says how to read them (which method wrote them, in what
// layout, with which test batch size).
//
// It is a leaf of the engine floor (it imports only zorepro/pipeline/blob),
// so that algorithms write trajectories and environments read their
// headers without importing each other.
//
// Format ("ZTRJ", version 1, little-endian, through package blob): an
// empty string (a field that version 1 reserves and never fills), the
// header as a sorted list of key/value strings ("eval_batch", "layout",
// "method"; a key is present only when its field is set), then the points.
// Decoding accepts only what encoding produces, so an accepted blob
// re-encodes to the same bytes (the same content ID); it never panics.
//
// Invariants of the points (checked on both sides): iterations are ≥ 1 and
// strictly increasing, samples are ≥ 0 and non-decreasing, and every point
// has the same number of parameters.
package trajectory

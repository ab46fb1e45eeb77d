// Package remote moves recorded results between a store and a remote (an
// S3 bucket, a directory, a static web host), so that a lab's machines
// share what each computed and a reader can fetch exactly what auditing
// one figure needs.
//
// # Layout
//
// Below the remote's root:
//
//   - objects/<ab>/<sha256>: content-addressed objects, named by the
//     SHA-256 of their bytes: the store entries of recorded outputs (an
//     output manifest and its files, with their content IDs) and the
//     records of tasks' runs (a bundle.Record, gob-encoded: transcript,
//     streams, iterations, notes, done data);
//   - actions/<action ID>.json: an ActionEntry per recorded action: the
//     task, its output, its record and store entries as objects. It is
//     written once, after every object it names, so that whoever finds it
//     finds them;
//   - index.json: the Index of every action pushed, with the SHA-256 of its
//     entry, and the latest pushes (revision, code identity, profile,
//     targets), optionally signed (Ed25519). It is written last, by
//     compare-and-swap (S3 conditional writes; a lock on a directory), so
//     that concurrent pushers merge their additions and a reader never
//     sees an index naming what is not there yet.
//
// # Pull
//
// A pull never trusts the remote with anything it can check. It computes
// each task's action here, from this binary, the plan and the upstream
// outputs (in waves, as the plan's dependencies allow), and looks the
// action up: only the targets' closure is fetched, and a remote of another
// code revision simply has nothing for this one. Every object is checked
// against its SHA-256 (a store entry also against its content ID), a
// record against its action entry and its identity transcript against the
// one computed here. With trusted keys the index must carry a signature by
// one of them that verifies, and every action entry must be one it lists,
// with the SHA-256 it lists: every byte then hangs from the signature.
// Verified objects wait in a staging directory under the store
// (incoming/); only when all have arrived do they enter the store and the
// tasks' records the event log, as one run. A damaged object, or a task
// the store records with another output (divergence), stops the pull with
// the store and its log as they were; an interrupted pull leaves its
// verified objects staged, so that the same pull completes without
// fetching them again.
//
// # Garbage
//
// GC removes what the kept tasks do not reach, sparing objects younger
// than a grace period (a push in progress writes its objects before the
// entries that name them); it is a dry run unless asked to delete.
package remote

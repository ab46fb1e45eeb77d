// Package events is the pipeline's append-only event log: one bbolt file
// (e.g. <store>/events.db) from which all current state is derived.
//
// Writing goes through a Writer: one goroutine that commits events in
// batches (at most MaxBatch events or MaxDelay after the first queued
// event, whichever comes first), because one bbolt transaction per event
// caps out near a thousand events a second. BeginRun is the one synchronous
// write. Reading methods on Log each run in a single read transaction, so
// they see a consistent snapshot, and work on read-only logs.
//
// Storage layout (schema version 1). "BE" is big-endian; keys sort so that
// cursor order is meaningful.
//
//	meta         "schema" -> BE uint32 schema version (2)
//	log          BE uint64 seq -> JSON Event, for every event except Type "iter".
//	             The bucket's sequence is the last seq assigned.
//	iter         BE uint32 task id ‖ BE uint64 run ‖ BE uint64 first iteration ->
//	             a block: per iteration, in increasing order, uvarint
//	             (iteration − first) ‖ varint samples ‖ 8-byte BE digest ‖
//	             uvarint metric count ‖ per metric: uvarint name length ‖
//	             name ‖ 8-byte BE float64 bits. An event's Iter is a block of
//	             one; its Iters (a whole block) is one value, which is what
//	             keeps recording cheap beside tiny training iterations.
//	tasks        task path -> BE uint32 task id (from the bucket's NextSequence; 0 means "no task")
//	taskpaths    BE uint32 task id -> task path
//	taskevents   BE uint32 task id ‖ BE uint64 seq -> empty (index of log by task)
//	runevents    BE uint64 run ‖ BE uint64 seq -> empty (index of log by run)
//	actions      action ID text -> JSON ActionRecord, from state events with
//	             State "done" and both Action and Output set ("cached" changes nothing)
//	checkpoints  action ID text -> JSON CheckpointRecord of the latest checkpoint event
//	transcripts  task path -> JSON {"latest": TranscriptRecord, "previous": TranscriptRecord}
//	laststate    task path -> JSON StateRecord of the task's latest state event
//	runs         BE uint64 run -> JSON Event of the run's latest "run" event;
//	             the bucket's sequence allocates run IDs
//
// Invariants:
//   - Append order is commit order, and seqs increase in it. Iter events
//     advance the seq but are stored only in "iter", keyed by (task, run,
//     first iteration); of an iter event only Task, Run and Iter/Iters are
//     kept, and a block with the same key replaces the earlier one.
//   - Every derived bucket (taskevents, runevents, actions, checkpoints,
//     transcripts, laststate, runs) is updated in the same transaction as
//     the event that changes it, so it is always a pure function of the
//     events committed so far.
//   - Metric values round-trip bit-exactly (NaN payloads, -0, ±Inf).
//   - An existing file is never recreated, truncated or repaired. A new log
//     is built under a temporary name with all its buckets and then hard-linked
//     into place, so a file at the path is either a complete log or damage;
//     damage (including an empty or truncated file) is reported as
//     ErrCorruptLog and left untouched.
//   - Open always waits for the bbolt file lock with a timeout (default 1s).
//     The lock is exclusive for read-write opens and shared for read-only
//     opens, so a read-only Open also waits while a writer holds the log.
//
// Caveats:
//   - Append takes ownership of an event's slices (Data, Iter.Metrics);
//     do not modify them afterwards.
//   - A commit error (disk full, closed database) is sticky: the Writer
//     drops every later event and reports the first error from Flush, Close
//     and Err, and passes it to WriterOptions.OnError so that the caller
//     can stop at once. Events of the failed batch are not in the log;
//     everything committed before it is kept.
//   - A process that dies while creating a log leaves a ".<name>.new-*"
//     temp file beside it; it is never read and can be deleted.
//   - bbolt trusts its file; Open checks the meta pages and the file size
//     before touching any other page, and a panic or memory fault inside
//     bbolt while reading is reported as ErrCorruptLog rather than crashing.
//   - The writing process holds an exclusive lock, so other processes
//     cannot even read the log. Snapshot copies it, consistently as of the
//     latest commit, to "<name>.snapshot" (temp file, fsync, rename), and
//     OpenSnapshot opens that copy read-only; a snapshot may lag the log.
package events

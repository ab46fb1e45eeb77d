// Package pipeline is the engine: it runs a planned dag (package dag) over
// a content-addressed store (package store) and an event log (package
// events), rerunning only what changed.
//
// Map of the engine floor (README.md's Architecture section has the whole
// tree): this package holds the scheduler (engine.go), the task
// environment a running task sees (taskenv.go), identity (identity.go) and
// output manifests (manifest.go). Package provenance reads back what runs
// recorded (audit's productions, replay, verify, gc, dry-run estimates,
// times). Sub-packages: dag (the dag file and its expansion), task (the stage API and the one iteration record), stream
// (named RNG streams), store (the content store), events (the bbolt log),
// codeid (code identity), crashpoint (a test seam), and the leaves blob (the
// binary encoding), trajectory (what a train task hands to evaluate) and
// atomicfile (atomic publishing). Nothing here imports stages, algos or
// envs.
//
// A task's identity (ActionID) is the xxhash of its transcript: sorted
// "key value" lines naming the stage kind and its hand-bumped version, the
// task path and seed, every resolved parameter, every input's *output* ID
// (so an upstream that reproduces identical bytes invalidates nothing
// downstream), the code identity of the Go packages the task is compiled
// from (see package codeid), the Go version, GOARCH and native library
// versions. The action cache in the event log maps ActionIDs to output IDs;
// an output ID names a manifest (one "name id size" line per named output)
// kept in the store.
//
// Scheduling: one goroutine owns all shared state; a ready queue ordered by
// task index feeds up to Jobs workers. A task's own parallel work
// (Env.Parallel) borrows idle worker tokens, so the total stays at Jobs.
// Results never depend on the number of workers: every unit draws from its
// own named stream and reduces in index order.
//
// Failure and interruption: a failed task skips its descendants; a
// cancelled context stops tasks at their next iteration boundary after a
// checkpoint, flushes the event log and leaves the store resumable. A task
// interrupted in any way (even SIGKILL) resumes from its latest checkpoint
// under the same ActionID and produces the same bytes as an uninterrupted
// run.
//
// Resource failure: a failed write stops the run like an interrupt, since
// nothing computed afterwards could be recorded. Any Store.Put error counts
// (a full disk, a quota, EIO, a read-only file system: none is the task's
// fault and all would recur for the next task), as does an event log
// commit error. No task starts after it, running tasks stop at their next
// iteration boundary, and Run returns ErrWriteFailed wrapping the error,
// which names the file and the OS error. Everything written before the
// failure stays valid: store entries are published atomically and the log
// keeps every committed batch, so once the cause is fixed a rerun resumes.
// Corrupt artifacts are not write failures: a store entry that does not
// hash to its ID (an output, a manifest, a checkpoint) is a cache miss and
// is recomputed. A damaged input found while a run is under way makes the
// run recompute its upstream task and retry the reader (once per task).
//
// Other processes (dispatch.go): with a Dispatcher (package slurm's), a
// task that must execute becomes an attempt, a spec file that the worker
// command runs through Work, recording its events in the attempt's own
// file (events.CreateAttempt), never in the log. The loop above is
// unchanged: the goroutine of a task waits for its attempt to end, then
// validates the file and merges it into the log, so the coordinator stays
// the log's only writer. A killed attempt is resubmitted from its latest
// checkpoint; a corrupt file is rejected and the task reruns.
//
// Parts: a task whose runner is a task.Splitter (a tuning grid) has its
// parts planned as tasks of their own upstream of it (package dag), which
// draw from its streams (taskenv.go), so that they compute what it would
// have computed for them.
//
// Provenance (package provenance) re-executes a recorded task through
// RunOne, which runs one task as a run of its own, into a scratch store and
// log.
package pipeline

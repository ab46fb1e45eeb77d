// Package slurm runs a pipeline's task attempts on a Slurm cluster: it is
// the engine's Dispatcher (pipeline.Dispatcher, pipeline.Adopter) for
// `pipeline run --executor slurm`, and the runner loop its jobs run
// (Serve, for `pipeline worker --runner`).
//
// The coordinator (the `pipeline run` process) stays the only writer of
// the event log. It does not submit one job per attempt: it queues each
// attempt as a ticket in a build directory on the shared file system and
// submits runner jobs (elements of job arrays, at most Config.MaxJobs at
// once) that take tickets one after another until none has come for
// Config.Idle. A runner runs each attempt through the worker (Engine.Work,
// which writes the task's outputs into the content store and its events
// into the attempt's own file) and writes an end marker; the coordinator
// sees the marker within a tenth of a second, then validates and merges
// the attempt file. Short tasks thus cost a rename and a marker, not a
// job's start: the smoke profile runs through Slurm in about 1.5 times its
// local wall time.
//
// What the runners run is frozen at Open: the binary and the dag file are
// copied into <store>/slurm/bin and <store>/slurm/dag under their content
// hashes, and the build directory (<store>/slurm/runs/<build>) is named by
// both, so rebuilding or editing either during a run affects only the next
// run. A worker still checks every attempt's action ID against the
// coordinator's and refuses one that differs (a node with another CPU type
// or OpenBLAS build), naming the node and the transcript lines that differ.
//
// Every wait is bounded and visible. Slurm commands time out after 15 s;
// transient failures (a busy, restarting or unreachable controller, a
// submission limit) are retried with backoff for up to Config.LostAfter,
// others (an unknown account or QOS, a bad argument) fail at once. Runners
// that wait in Slurm's queue are reported with their pending reason and
// age; runners whose reason never passes by itself (PartitionConfig, ...)
// stop the run at once, and a run in which nothing progresses for
// Config.StallAfter stops with the jobs' states. While squeue fails,
// attempts whose runners show signs of life (a claim, an end marker, a
// growing attempt file) go on; the others fail after Config.LostAfter and
// their runners are asked to stop them (a cancel file, which needs no
// controller). Close cancels the store's jobs and waits until squeue shows
// them gone.
//
// A store's jobs are named by a hash of its resolved path and the user
// (Dispatcher.Name) and looked up with --user. A coordinator that was
// killed leaves its runners running; the next one adopts them: the
// attempts they hold are waited for (Adopt) instead of being rerun, their
// queued tickets are withdrawn (the engine dispatches those tasks anew).
// Runners are submitted --no-requeue; one that Slurm requeues anyway ends
// what it held as REQUEUED before it takes anything, so a task never has
// two live attempts.
//
// Nothing here reaches a result: which node, which order and how many
// jobs run change only when tasks run, never what they compute.
package slurm

// Package slurm runs a pipeline's task attempts as Slurm jobs: it is the
// engine's Dispatcher (pipeline.Dispatcher) for `pipeline run --executor
// slurm`.
//
// The coordinator (the `pipeline run` process) stays the only writer of
// the event log. Each attempt is one element of a job array: attempts of
// one stage that become ready within Config.Linger of each other are
// submitted together with one `sbatch --array`, so thousands of small
// tasks do not flood the controller. Every element runs the same binary's
// worker command (`pipeline worker SPEC`) against the store on the shared
// file system; the worker writes its outputs into the content store and
// its events into the attempt's own file, which the engine validates and
// merges once the job has ended.
//
// A Dispatcher follows its jobs with one `squeue` call per Config.Poll for
// all of them (the jobs of one store share a job name, Config.Name), and
// reports each attempt's end with Slurm's final state and its log file.
// A cancelled attempt is cancelled with `scancel` and followed until it
// has ended. Open checks, within seconds and before anything is submitted,
// that the Slurm commands are installed, that the controller answers and
// that the partition exists, and cancels the jobs that a coordinator of
// the same store left running when it was killed (their work resumes from
// the checkpoints their attempt files recorded).
//
// Nothing here reaches a result: which node, which order and how many
// jobs run change only when tasks run, never what they compute.
package slurm

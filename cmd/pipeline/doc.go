// Command pipeline runs and inspects the experiment DAG declared in
// dag.yaml.
//
//	pipeline run    [TARGET...] [--dag FILE] [--profile P] [--jobs N] [--store DIR] [--force] [--dry-run] [--json]
//	pipeline status [--dag FILE] [--profile P] [--store DIR]
//	pipeline dag    [--dag FILE] [--profile P]
//	pipeline why    TASK [--dag FILE] [--profile P] [--store DIR]
//	pipeline events TASK [--store DIR] [--json]
//	pipeline status --times                      task time per stage, across runs
//	pipeline audit  FIGURE [--panel P] [--curve C] [--x X] [--json]
//	pipeline replay TASK [--until ITERATION] [--events] [--scratch DIR] [--keep] [--json]
//	pipeline verify --all | --sample N [--seed S] [--scratch DIR] [--json]
//	pipeline gc     [--dry-run] [--checkpoints] [--json]
//	pipeline export TARGET... --to FILE [--volume-size SIZE]
//	pipeline import FILE
//	pipeline publish --to DIR
//
// Each command has its own type in its own file (run.go, status.go, …,
// export.go, import.go): its settings are fields bound to its own flags
// (define), its arguments are checked once the flags are decoded (check),
// and run does the work with the invocation's context and streams. The
// pieces commands share are small embedded types: planFlags (--dag,
// --profile, --store, and opening the engine), outputFlags (--json,
// --jsonl), scratchFlags (--scratch, --keep). Settings come from flags,
// then PIPELINE_* environment variables (PIPELINE_PROFILE, PIPELINE_JOBS,
// PIPELINE_STORE, ...), then the configuration file, then defaults,
// through viper (flags.go).
//
// Exit codes: 0 success, 1 a task failed, a write failed, the store is
// locked or corrupt, or audit/replay/verify found a difference; 130 the run
// was interrupted; 2 invalid input (dag file, profile, flags, a figure or
// task that is not recorded).
package main

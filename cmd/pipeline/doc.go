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
//
// Settings come from flags, then PIPELINE_* environment variables
// (PIPELINE_PROFILE, PIPELINE_JOBS, PIPELINE_STORE, ...), then defaults,
// through viper, and are decoded once into a typed Config.
//
// Exit codes: 0 success, 1 a task failed, a write failed, the store is
// locked or corrupt, or audit/replay/verify found a difference; 130 the run
// was interrupted; 2 invalid input (dag file, profile, flags, a figure or
// task that is not recorded).
package main

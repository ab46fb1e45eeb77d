// Command pipeline runs and inspects the experiment DAG declared in
// dag.yaml.
//
//	pipeline run    [--dag FILE] [--profile P] [--jobs N] [--store DIR] [--force] [--dry-run] [--json]
//	pipeline status [--dag FILE] [--profile P] [--store DIR]
//	pipeline dag    [--dag FILE] [--profile P]
//	pipeline why    TASK [--dag FILE] [--profile P] [--store DIR]
//	pipeline events TASK [--store DIR] [--json]
//
// Settings come from flags, then PIPELINE_* environment variables
// (PIPELINE_PROFILE, PIPELINE_JOBS, PIPELINE_STORE, ...), then defaults,
// through viper, and are decoded once into a typed Config.
//
// Exit codes: 0 success, 1 a task failed (or the run was interrupted:
// 130), 2 invalid input (dag file, profile, flags).
package main

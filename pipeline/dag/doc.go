// Package dag loads dag.yaml: it reads the file through viper, decodes it
// once into typed structs, applies a profile, expands every stage's matrix
// into tasks, binds each task's inputs to upstream tasks, and plans each
// task through its kind, reporting every problem at once.
//
// File format (see the repository's dag.yaml for a full example):
//
//	version: 1
//	seeds:    {name: [int, ...]}           # referenced as "$name"
//	tables:   {name: {columns: [c, ...], rows: [[v, ...], ...]}}
//	stages:                                # a list; order breaks ties
//	  - name: train/linreg                 # lowercase, [a-z0-9_/-]
//	    kind: train                        # a registered kind
//	    params: {key: value}               # decoded by the kind
//	    matrix: {axis: [v, ...] | "$seeds"}# cartesian product, axes sorted
//	    inputs: {slot: stage | {stage, where, optional}}
//	    overrides: [{when: {axis: v}, params: {...}}]
//	    table_overrides: [{table, match: [c, ...], set: [c, ...], into}]
//	                                       # an override per row: its match
//	                                       # columns as when, its set columns
//	                                       # as params (under into if given)
//	    exclude: [{axis: v, ...}]           # matrix points to drop
//	profiles: {name: {seeds: {...}, stages: {stage: {params, matrix, overrides, table_overrides, exclude}}}}
//
// A task's path is the stage name followed by its sorted coordinates, e.g.
// train/linreg/d=10/method=ars/seed=5488. Coordinates are also parameters,
// except "seed", which is the task's root seed. An input slot binds the
// upstream tasks whose coordinates agree on every shared axis, except that
// an axis named in "where" is filtered by the listed values instead.
//
// Invariants: Load is pure (no store is touched), deterministic (no map
// order reaches the plan) and returns either a complete plan or every
// problem it found, each naming the file, the stage and the field.
package dag

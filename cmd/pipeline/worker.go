package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/slurm"
	"zorepro/pipeline/store"
	"zorepro/stages"
)

// cmdWorker runs one attempt from its spec file: what a Slurm job runs.
// The task's events go to the attempt file the spec names; its log lines
// to stderr (the job's log).
func cmdWorker(ctx context.Context, c *Config, _, stderr io.Writer) (int, error) {
	spec, err := pipeline.ReadSpec(c.Args[0])
	if err != nil {
		return exitInvalid, err
	}
	if err := os.Chdir(spec.Dir); err != nil {
		return exitFailed, fmt.Errorf("worker: the coordinator's directory: %w", err)
	}
	plan, err := dag.LoadProfile(spec.DAG, spec.Profile, stages.Kinds())
	if err != nil {
		return exitInvalid, err
	}
	code, err := codeIdentity()
	if err != nil {
		return exitFailed, err
	}
	st, err := store.OpenWith(spec.Store, storeOptions)
	if err != nil {
		return exitFailed, err
	}
	eng := &pipeline.Engine{Plan: plan, Store: st, Code: code, Platform: pipeline.HostPlatform(),
		Opt: pipeline.Options{Jobs: c.Jobs, CheckpointInterval: spec.CheckpointInterval, Log: stderr, Profile: spec.Profile}}
	fmt.Fprintf(stderr, "worker: %s, attempt %s\n", spec.Task, spec.Attempt)
	err = eng.Work(ctx, spec)
	switch {
	case errors.Is(err, pipeline.ErrInterrupted):
		return exitInterrupted, errors.New("interrupted: the task's latest checkpoint is in its attempt file")
	case err != nil:
		return exitFailed, err
	}
	fmt.Fprintf(stderr, "worker: %s finished\n", spec.Task)
	return exitOK, nil
}

// openSlurm opens the Slurm dispatcher of a run --executor slurm.
func openSlurm(ctx context.Context, c *Config, log func(string, ...any)) (*slurm.Dispatcher, error) {
	s := c.Slurm
	return slurm.Open(ctx, slurm.Config{
		Store: c.Store, Partition: s.Partition, Account: s.Account, Time: s.Time, CPUs: s.CPUs, Mem: s.Mem,
		Args: s.Args, LogDir: s.LogDir, Log: log,
	})
}

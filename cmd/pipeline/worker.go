package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/slurm"
	"zorepro/pipeline/store"
	"zorepro/stages"
)

// workerCmd runs one attempt from its spec file or, with --runner, serves
// a run's queue: what a Slurm job runs. The tasks' events go to the
// attempt files the specs name; log lines to stderr (the job's log).
type workerCmd struct {
	jobs    int
	dagFile string
	runner  string
	idle    time.Duration
	spec    string
}

func (c *workerCmd) doc() commandDoc {
	return commandDoc{name: "worker", args: "SPEC | --runner DIR", summary: "run one task attempt from its spec file, or serve a run's queue as a runner (what Slurm jobs run)",
		detail: "The coordinator (run --executor slurm) writes the spec beside the attempt's event file; the worker runs\n" +
			"the task against the store the spec names and records its events in that file, never in the event log.\n" +
			"With --runner (a job the coordinator submitted) it takes attempts from the build directory's queue, one\n" +
			"after another, until none comes for --idle."}
}

func (c *workerCmd) define(f *flagSet) {
	jobsFlag(f, &c.jobs)
	f.String(&c.dagFile, "dag", "dag.yaml", "the DAG file")
	f.String(&c.runner, "runner", "", "serve this build directory's queue (a runner job)")
	f.Duration(&c.idle, "idle", 20*time.Second, "a runner exits after this long without an attempt")
}

func (c *workerCmd) check(args []string) []string {
	if c.runner != "" {
		if len(args) != 0 {
			return []string{fmt.Sprintf("pipeline worker --runner: takes no SPEC argument, got %d", len(args))}
		}
		return nil
	}
	if len(args) != 1 {
		return []string{fmt.Sprintf("pipeline worker: takes exactly one SPEC argument, got %d", len(args))}
	}
	c.spec = args[0]
	return nil
}

func (c *workerCmd) run(inv *invocation) (int, error) {
	ctx, stderr := inv.ctx, inv.stderr
	if c.runner != "" {
		return c.serveRunner(ctx, stderr)
	}
	w := &specWorker{jobs: c.jobs, log: stderr}
	err := w.Work(ctx, c.spec)
	switch {
	case errors.Is(err, pipeline.ErrInterrupted):
		return exitInterrupted, errors.New("interrupted: the task's latest checkpoint is in its attempt file")
	case errors.Is(err, errBadSpec):
		return exitInvalid, err
	case err != nil:
		return exitFailed, err
	}
	return exitOK, nil
}

// serveRunner is worker --runner: it takes attempts from the build
// directory's queue until none comes for --idle. The plan is loaded from
// the dag file the coordinator copied into the store (--dag), whatever
// path the specs name.
func (c *workerCmd) serveRunner(ctx context.Context, stderr io.Writer) (int, error) {
	id, err := slurm.RunnerID()
	if err != nil {
		return exitInvalid, err
	}
	w := &specWorker{jobs: c.jobs, log: stderr, dag: c.dagFile}
	err = slurm.Serve(ctx, slurm.RunnerConfig{Build: c.runner, ID: id, Idle: c.idle, Log: stderr}, w)
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted, errors.New("runner interrupted: the attempt in hand recorded its latest checkpoint")
	case err != nil:
		return exitFailed, err
	}
	return exitOK, nil
}

// errBadSpec marks a spec file that cannot be read.
var errBadSpec = errors.New("worker spec")

// specWorker runs attempts from their spec files in this process (one at
// a time), keeping the plan, the code identity and the store between them.
type specWorker struct {
	jobs int
	log  io.Writer
	dag  string // the dag file to plan from ("": the spec's)

	planKey string
	plan    *dag.Plan
	code    pipeline.CodeIdentity
	store   *store.Store
}

var _ slurm.Worker = (*specWorker)(nil)

// Work runs the attempt the spec file at path describes.
func (w *specWorker) Work(ctx context.Context, path string) error {
	spec, err := pipeline.ReadSpec(path)
	if err != nil {
		return fmt.Errorf("%w: %w", errBadSpec, err)
	}
	if err := os.Chdir(spec.Dir); err != nil {
		return fmt.Errorf("worker: the coordinator's directory: %w", err)
	}
	dagFile := spec.DAG
	if w.dag != "" {
		dagFile = w.dag
	}
	if key := dagFile + "\x00" + spec.Profile; key != w.planKey {
		plan, err := dag.LoadProfile(dagFile, spec.Profile, stages.Kinds())
		if err != nil {
			return err
		}
		w.plan, w.planKey = plan, key
	}
	if w.code == nil {
		if w.code, err = codeIdentity(); err != nil {
			return err
		}
	}
	if w.store == nil || w.store.Root() != spec.Store {
		if w.store, err = store.OpenWith(spec.Store, storeOptions); err != nil {
			return err
		}
	}
	eng := &pipeline.Engine{Plan: w.plan, Store: w.store, Code: w.code, Platform: pipeline.HostPlatform(),
		Opt: pipeline.Options{Jobs: w.jobs, CheckpointInterval: spec.CheckpointInterval, Log: w.log, Profile: spec.Profile}}
	fmt.Fprintf(w.log, "worker: %s, attempt %s\n", spec.Task, spec.Attempt)
	if err := eng.Work(ctx, spec); err != nil {
		return err
	}
	fmt.Fprintf(w.log, "worker: %s finished\n", spec.Task)
	return nil
}

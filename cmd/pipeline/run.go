package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/slurm"
	"zorepro/stages/web"
)

// runCmd executes the DAG, or the targets and what they need: only what
// changed.
type runCmd struct {
	planFlags
	outputFlags
	jobs                                 int
	figures                              string
	force, dryRun                        bool
	checkpointInterval, snapshotInterval time.Duration
	// executor is where tasks run: local or slurm (with the slurm
	// settings).
	executor string
	slurm    slurmFlags
	// remote, if set, is a shared cache: pulled from before the run,
	// pushed to as tasks finish.
	remote  string
	targets []string
	// serve, if set, is the address of the browser view this run serves
	// (stages/web) while it runs, with token.
	serve, token string
}

// slurmFlags are the --slurm-* settings of run --executor slurm.
type slurmFlags struct {
	partition, account, time, mem, logDir, args string
	cpus, maxJobs                               int
	idle, outage, stall                         time.Duration
}

func (c *runCmd) doc() commandDoc {
	return commandDoc{name: "run", args: "[TARGET...]", summary: "execute the DAG, or only the named stages/tasks and what they need (only what changed)",
		detail: "TARGETs are stage names, task paths or /-bounded prefixes of them. Identities do not depend\non the targets, so a later full run finds their work cached."}
}

func (c *runCmd) define(f *flagSet) {
	c.forRun = true
	c.planFlags.define(f)
	jobsFlag(f, &c.jobs)
	figuresFlag(f, &c.figures)
	c.outputFlags.define(f, false)
	f.Bool(&c.force, "force", "rerun every task, ignoring the cache")
	f.Bool(&c.dryRun, "dry-run", "report what would be done, do nothing")
	f.Duration(&c.checkpointInterval, "checkpoint-interval", 10*time.Second, "minimum time between checkpoints of a task")
	f.Duration(&c.snapshotInterval, "snapshot-interval", 30*time.Second, "how often to refresh the event log snapshot that other commands read during the run (0: never)")
	f.OneOf(&c.executor, "executor", "local", "where tasks run: local (this machine, --jobs workers) or slurm (Slurm runner jobs, at most --slurm-max-jobs at once, each running task attempts one after another until --slurm-idle passes without one)", "local", "slurm")
	s := &c.slurm
	f.String(&s.partition, "slurm-partition", "", "Slurm partition of the jobs (default: the cluster's default partition)")
	f.String(&s.account, "slurm-account", "", "Slurm account the jobs are charged to")
	f.String(&s.time, "slurm-time", "", "time limit of one job, as sbatch --time takes it (e.g. 2:00:00; a job past it resumes from its checkpoint)")
	f.Int(&s.cpus, "slurm-cpus", 1, 1, "CPUs per job (the worker's threads)")
	f.String(&s.mem, "slurm-mem", "", "memory per job, as sbatch --mem takes it (e.g. 4G)")
	f.Int(&s.maxJobs, "slurm-max-jobs", 100, 1, "the most jobs in flight")
	f.String(&s.args, "slurm-args", "", "more sbatch arguments, separated by spaces (e.g. \"--qos=long --constraint=avx2\")")
	f.String(&s.logDir, "slurm-log-dir", "", "directory of the jobs' logs (default: STORE/slurm/logs; on the shared file system)")
	f.Duration(&s.idle, "slurm-idle", 20*time.Second, "a runner job exits after this long without an attempt to run")
	f.Duration(&s.outage, "slurm-outage", 10*time.Minute, "how long the controller may not answer before attempts without a sign of life fail (and sbatch stops being retried)")
	f.Duration(&s.stall, "slurm-stall", 2*time.Hour, "stop the run if nothing progresses for this long (no job starts, no attempt is taken, ends or writes)")
	f.String(&c.serve, "serve", "", "serve the browser view of the run at this address while it runs (e.g. 127.0.0.1:8080; other than loopback needs --token)")
	tokenFlag(f, &c.token)
	f.String(&c.remote, "remote", "", "share results through a remote: pull what the plan would reuse before the run, push each task's result as it finishes ("+remoteUsage+")")
}

func (c *runCmd) check(args []string) []string {
	c.targets = args
	var p []string
	if c.serve != "" {
		if err := checkServeAddr(c.serve, c.token); err != nil {
			p = append(p, "pipeline run: --serve: "+err.Error())
		}
	}
	if c.remote != "" {
		p = append(p, checkRemote("remote", c.remote)...)
	}
	return p
}

// jobsFlag binds --jobs.
func jobsFlag(f *flagSet, dst *int) {
	f.Int(dst, "jobs", runtime.NumCPU(), 1, "number of workers")
}

// figuresFlag binds --figures.
func figuresFlag(f *flagSet, dst *string) {
	f.String(dst, "figures", "figures", "directory figures are exported to")
}

// executor is where a run's tasks would execute, for its prediction: how
// many at once (slots) and at what cost beyond their own time.
type executor struct {
	name     string
	slots    int
	overhead provenance.Overhead
	note     string // how slots and overhead were found
}

// Assumed costs of Slurm before a store has measured its own: a runner's
// hand-over of an attempt and a runner job's wait in an idle cluster's
// queue.
const (
	assumedSlurmPerTask = 300 * time.Millisecond
	assumedSlurmStart   = 2 * time.Second
)

// executorOf describes c's executor. Through Slurm the slots are
// --slurm-max-jobs, or fewer if the partition has fewer CPUs (when sinfo
// answers), and the overhead is the one measured in the store by earlier
// runs through Slurm (slurm/overhead.json), else an assumption, said so.
func (c *runCmd) executorOf() executor {
	if c.executor != "slurm" {
		return executor{name: "local", slots: c.jobs}
	}
	ex := executor{name: "slurm", slots: c.slurm.maxJobs}
	limit := fmt.Sprintf("at most %d runner jobs (--slurm-max-jobs)", ex.slots)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if cpus, err := slurm.PartitionCPUs(ctx, c.slurm.partition); err == nil && cpus/max(c.slurm.cpus, 1) < ex.slots {
		ex.slots = max(cpus/max(c.slurm.cpus, 1), 1)
		limit = fmt.Sprintf("%d runner jobs at once: the partition's %d CPUs over --slurm-cpus %d", ex.slots, cpus, max(c.slurm.cpus, 1))
	}
	per, start, n, ok := slurm.Overhead(c.storeDir)
	if ok {
		ex.overhead = provenance.Overhead{PerTask: per, Start: start}
		ex.note = fmt.Sprintf("%s, ~%s per task and ~%s for the first runners to start, as measured over %d attempts in this store", limit, per.Round(time.Millisecond), start.Round(100*time.Millisecond), n)
	} else {
		ex.overhead = provenance.Overhead{PerTask: assumedSlurmPerTask, Start: assumedSlurmStart}
		ex.note = fmt.Sprintf("%s, an assumed %s per task and %s for the first runners to start: no run through Slurm is recorded in this store yet", limit, assumedSlurmPerTask, assumedSlurmStart)
	}
	return ex
}

// slurmAttempts is how many attempts a run through Slurm keeps in flight:
// twice its runner jobs, so that a runner finds the next attempt queued
// when it finishes one.
func (c *runCmd) slurmAttempts() int { return 2 * c.slurm.maxJobs }

func (c *runCmd) run(inv *invocation) (int, error) {
	ctx, stdout, stderr := inv.ctx, inv.stdout, inv.stderr
	// A dry run writes nothing: on a store with a log it reads as status
	// does (a running run's snapshot, if one holds the log); for a store
	// that does not exist yet it reads an empty log and creates nothing.
	opt := pipeline.Options{Jobs: c.jobs, Force: c.force, CheckpointInterval: c.checkpointInterval, SnapshotInterval: c.snapshotInterval, FiguresDir: c.figures}
	eng, closeLog, err := c.openEngine(inv, openMode{readOnly: c.dryRun, dryRun: c.dryRun}, opt, c.targets)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	if c.dryRun {
		return c.dryRunPlan(eng, stdout)
	}
	eng.Opt.Log = stderr
	eng.Opt.Terminal = isTerminal(stderr)
	eng.Opt.Args = append([]string{"run"}, os.Args[min(len(os.Args), 2):]...)
	if c.executor == "slurm" {
		eng.Opt.Jobs = c.slurmAttempts()
	}
	var predicted time.Duration
	sched, err := c.printRunHeader(eng, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "note: no estimate: %v\n", err)
	} else if sched != nil {
		predicted, eng.Opt.Predicted = sched.Walls[len(sched.Walls)-1].Wall, sched.Times
	}
	if c.serve != "" {
		stop, err := c.startServer(inv, eng, predicted)
		if err != nil {
			return exitFailed, err
		}
		defer stop()
	}
	if c.executor == "slurm" {
		var logMu sync.Mutex
		d, err := c.openSlurm(ctx, eng.Plan.File, func(format string, args ...any) {
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(stderr, "slurm: "+format+"\n", args...)
		})
		if err != nil {
			return exitFailed, err
		}
		fmt.Fprintf(stderr, "slurm: runner jobs are named %s (squeue --user %s --name %s); at most %d at once\n", d.Name(), d.User(), d.Name(), c.slurm.maxJobs)
		defer func() {
			if err := d.Close(); err != nil {
				fmt.Fprintf(stderr, "%v\n", err)
			}
		}()
		eng.Dispatcher, eng.Opt.Terminal = d, false
	}
	var share *sharer
	if c.remote != "" {
		if share, err = c.share(inv, eng); err != nil {
			return exitFailed, err
		}
	}
	res, err := eng.Run(ctx)
	if share != nil {
		if perr := share.finish(); perr != nil && err == nil {
			err = perr
		}
	}
	if res != nil && c.json {
		if jerr := json.NewEncoder(stdout).Encode(res); jerr != nil {
			return exitFailed, jerr
		}
	} else if res != nil {
		for _, name := range slices.Sorted(maps.Keys(res.Figures)) {
			f := res.Figures[name]
			fmt.Fprintf(stdout, "figure %s %s\n", f.Path, f.ID)
		}
		for _, task := range slices.Sorted(maps.Keys(res.Errors)) {
			fmt.Fprintf(stderr, "failed %s: %s\n", task, res.Errors[task])
		}
	}
	switch {
	case errors.Is(err, pipeline.ErrWriteFailed):
		// The message names the file and the OS error and says how to
		// resume; Main adds the "pipeline: " prefix the sentinel has.
		return exitFailed, errors.New(strings.TrimPrefix(err.Error(), "pipeline: "))
	case errors.Is(err, pipeline.ErrInterrupted):
		return exitInterrupted, errors.New("interrupted: progress was saved; run again to resume")
	case errors.Is(err, pipeline.ErrTaskFailed):
		return exitFailed, fmt.Errorf("%d task(s) failed, %d skipped", len(res.Failed), len(res.Skipped))
	case err != nil:
		return exitFailed, err
	}
	return exitOK, nil
}

// dryRun prints what a run would do: each task's fate, the infeasible grid
// points tune tasks leave out, the estimate per stage and the predicted
// wall time.
func (c *runCmd) dryRunPlan(eng *pipeline.Engine, stdout io.Writer) (int, error) {
	rec := provenance.New(eng)
	xs, err := rec.Explain()
	if err != nil {
		return exitFailed, err
	}
	est, err := rec.Estimate(xs)
	if err != nil {
		return exitFailed, err
	}
	ex := c.executorOf()
	workers := []int{2, 64, 512}
	if !slices.Contains(workers, ex.slots) {
		workers = append([]int{ex.slots}, workers...)
	}
	sched, err := rec.ScheduleWith(xs, ex.overhead, workers...)
	if err != nil {
		return exitFailed, err
	}
	if c.json {
		return exitOK, json.NewEncoder(stdout).Encode(map[string]any{"tasks": xs, "stages": est, "schedule": sched})
	}
	runs := 0
	for _, x := range xs {
		if x.Do == provenance.WouldRun {
			runs++
		}
		fmt.Fprintf(stdout, "%-6s %s  (%s)\n", x.Do, x.Task, x.Reason)
	}
	for _, t := range eng.Plan.Tasks {
		for _, l := range skipLines(skippedOf(t)) {
			fmt.Fprintf(stdout, "%-6s %s  (%s)\n", "note", t.Path, l)
		}
	}
	fmt.Fprintf(stdout, "%d of %d tasks would run\n\nestimate per stage (samples are upper bounds from the budgets; task time is one worker's, wall spreads it over %d workers):\n", runs, len(xs), ex.slots)
	extends := extendingStages(eng.Plan)
	var total time.Duration
	for _, se := range est {
		if se.Tasks == 0 {
			continue
		}
		line := fmt.Sprintf("  %-24s %5d tasks", se.Stage, se.Tasks)
		if se.Samples > 0 {
			line += fmt.Sprintf("  %14d samples", se.Samples)
		}
		switch {
		case se.Known > 0:
			line += fmt.Sprintf("  task time ~%s, wall ~%s", se.TaskTime, se.Wall)
			if se.Known < se.Tasks {
				line += fmt.Sprintf(" for the %d tasks with a known time", se.Known)
			}
			line += " (" + strings.Join(se.Sources, "; ") + ")"
			total += se.Wall
		case se.Samples > 0:
			line += "  (no rate known yet: run a smaller profile first)"
		}
		if se.Unmatched > 0 && extends[se.Stage] {
			line += fmt.Sprintf("; %d of its tuning selections have no recorded one of their method and instance to time them: one whose grid extends beyond an edge takes longer", se.Unmatched)
		}
		fmt.Fprintln(stdout, line)
	}
	if total > 0 {
		fmt.Fprintf(stdout, "  estimated wall time of the tasks with a known time: ~%s\n", total)
	}
	printSchedule(stdout, sched, ex)
	return exitOK, nil
}

// extendingStages names the stages with a tuning grid that may be
// extended beyond an edge (stages/tune's "extend" above 0).
func extendingStages(plan *dag.Plan) map[string]bool {
	out := map[string]bool{}
	for _, t := range plan.Tasks {
		if len(t.Parts) == 0 || t.Params == nil {
			continue
		}
		if v, _ := t.Params.Peek("extend"); positive(v) {
			out[t.Stage.Name] = true
		}
	}
	return out
}

// positive reports whether v is a number above 0, as a dag file's
// parameter decodes (int, int64 or float64).
func positive(v any) bool {
	switch n := v.(type) {
	case int:
		return n > 0
	case int64:
		return n > 0
	case float64:
		return n > 0
	}
	return false
}

// printRunHeader tells what a run is about to do before it starts: the
// profile (said to be the default when none was chosen, with the quick
// one offered), how many tasks it would run of how many, the predicted
// wall time on 2 workers and on the run's, and that Ctrl-C stops it with
// its progress saved and the same command resumes it.
//
// It returns the schedule it predicted (nil when nothing runs): its last
// wall is on the run's workers, its Times each task's time.
func (c *runCmd) printRunHeader(eng *pipeline.Engine, w io.Writer) (*provenance.Schedule, error) {
	rec := provenance.New(eng)
	xs, err := rec.Explain()
	if err != nil {
		return nil, err
	}
	toRun := 0
	for _, x := range xs {
		if x.Do == provenance.WouldRun {
			toRun++
		}
	}
	profile := "profile " + c.profile
	if !c.profileSet && c.profile == dag.DefaultProfile {
		profile += " (the default: the paper at full scale; --profile quick runs every figure at reduced scale in minutes)"
	}
	if toRun == 0 {
		fmt.Fprintf(w, "%s: all %d tasks are recorded; nothing to run\n", profile, len(xs))
		return nil, nil
	}
	fmt.Fprintf(w, "%s: %d tasks, %d to run\n", profile, len(xs), toRun)
	ex := c.executorOf()
	workers := []int{2}
	if ex.slots != 2 {
		workers = append(workers, ex.slots)
	}
	sched, err := rec.ScheduleWith(xs, ex.overhead, workers...)
	if err != nil {
		return nil, err
	}
	var walls []string
	for _, ww := range sched.Walls {
		walls = append(walls, fmt.Sprintf("~%s on %d workers", ww.Wall.Round(time.Second), ww.Workers))
	}
	bound, note := "", ""
	if sched.Unknown > 0 {
		note = fmt.Sprintf(", %d tasks without an estimate counted as none", sched.Unknown)
	}
	if sched.Unrated > 0 {
		bound = "at least "
	}
	if ex.name == "slurm" {
		note += "; " + ex.note
	}
	fmt.Fprintf(w, "predicted: %s%s (run --dry-run for the estimate per stage%s)\n", bound, strings.Join(walls, ", "), note)
	if sched.Unrated > 0 {
		fmt.Fprintf(w, "  %s\n", unratedNote(sched))
	}
	fmt.Fprintln(w, "Ctrl-C stops the run with its progress saved; the same command resumes it.")
	return sched, nil
}

// startServer serves the browser view of the running run from this
// process (the run's writer holds the event log; the pages read it through
// read transactions beside it). The overview's remaining time is the
// prediction the run started with.
func (c *runCmd) startServer(inv *invocation, eng *pipeline.Engine, predicted time.Duration) (stop func(), err error) {
	ln, err := listen(c.serve)
	if err != nil {
		return nil, err
	}
	srv := web.New(eng, web.Options{Token: c.token, Profile: c.profile, Predicted: predicted, ErrorLog: log.New(inv.stderr, "serve: ", 0)})
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		serveOn(inv, ln, srv, done)
	}()
	return func() { close(done); <-finished }, nil
}

// unratedNote says why a schedule's walls are lower bounds: tasks with a
// sample budget whose stages have no recorded rate, and how to get one.
func unratedNote(s *provenance.Schedule) string {
	return fmt.Sprintf("the times are lower bounds: %d tasks with a sample budget (%s) have no recorded rate yet; "+
		"a --profile smoke run into this store (about a minute) gives every stage one", s.Unrated, strings.Join(s.UnratedStages, ", "))
}

// printSchedule prints the critical path and the predicted wall times.
func printSchedule(w io.Writer, s *provenance.Schedule, ex executor) {
	if s.Tasks == 0 {
		return
	}
	fmt.Fprintf(w, "\ncritical path: ~%s over %d task(s) that would run", s.Critical, len(s.Path))
	if len(s.Path) > 0 {
		fmt.Fprintf(w, ", from %s to %s", s.Path[0], s.Path[len(s.Path)-1])
	}
	fmt.Fprintf(w, "\n%d task(s) would run, ~%s of task time", s.Tasks, s.TaskTime)
	if s.Unknown > 0 {
		fmt.Fprintf(w, " (%d with no recorded time, counted as none)", s.Unknown)
	}
	if ex.name == "slurm" {
		fmt.Fprintf(w, "; predicted wall time, scheduled as the engine does, through Slurm (%s):\n", ex.note)
	} else {
		fmt.Fprintln(w, "; predicted wall time, scheduled as the engine does, without an executor's overhead per task:")
	}
	for _, ww := range s.Walls {
		fmt.Fprintf(w, "  %4d workers  ~%s\n", ww.Workers, ww.Wall)
	}
	if s.Unrated > 0 {
		fmt.Fprintf(w, "%s\n", unratedNote(s))
	}
}

// openSlurm opens the Slurm dispatcher of a run --executor slurm.
func (c *runCmd) openSlurm(ctx context.Context, dagFile string, log func(string, ...any)) (*slurm.Dispatcher, error) {
	s := c.slurm
	return slurm.Open(ctx, slurm.Config{
		DAG: dagFile, Store: c.storeDir, Partition: s.partition, Account: s.account, Time: s.time, CPUs: s.cpus, Mem: s.mem,
		Args: strings.Fields(s.args), LogDir: s.logDir, MaxJobs: s.maxJobs, Idle: s.idle, LostAfter: s.outage, StallAfter: s.stall, Log: log,
	})
}

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"zorepro/pipeline"
	"zorepro/pipeline/codeid"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/provenance"
	"zorepro/pipeline/slurm"
	"zorepro/pipeline/store"
	"zorepro/pipeline/task"
	"zorepro/stages/tune"
)

// codeIdentity is replaced in tests that run without a build manifest.
var codeIdentity = func() (pipeline.CodeIdentity, error) { return codeid.Embedded() }

// storeOptions is a test seam: tests set a failing store.Options.CreateTemp
// to simulate a full disk.
var storeOptions store.Options

// openEngine opens the store and its event log and loads the plan. A
// read-only command refuses a store without an event log, reads a running
// run's snapshot (openLog), and, unless a profile was chosen, uses the
// profile of the store's latest run (resolveProfile).
//
// A run, or a command given a profile, validates the dag file before it
// touches the store.
func openEngine(c *Config, readOnly bool) (*pipeline.Engine, func(), error) {
	var plan *dag.Plan
	var err error
	early := c.Command == "run" || c.ProfileSet
	if early {
		if plan, err = loadPlan(c); err != nil {
			return nil, nil, err
		}
	}
	eng, closeLog, err := openStore(c, readOnly)
	if err != nil {
		return nil, nil, err
	}
	if err := resolveProfile(c, eng.Events); err != nil {
		closeLog()
		return nil, nil, err
	}
	if !early {
		if plan, err = loadPlan(c); err != nil {
			closeLog()
			return nil, nil, err
		}
	}
	eng.Plan = plan
	eng.Opt.Profile = c.Profile
	return eng, closeLog, nil
}

// openStore opens the store and its event log, without a plan. A
// read-only command, and gc, refuse a store without an event log: a
// mistyped --store must not create one.
func openStore(c *Config, readOnly bool) (*pipeline.Engine, func(), error) {
	if readOnly && !c.DryRun || c.Command == "gc" || c.Command == "report" {
		if _, err := os.Stat(filepath.Join(c.Store, "events.db")); err != nil {
			return nil, nil, fmt.Errorf("no event log at %s: nothing has run with --store %s yet", filepath.Join(c.Store, "events.db"), c.Store)
		}
	}
	code, err := codeIdentity()
	if err != nil {
		return nil, nil, err
	}
	opt := storeOptions
	opt.ReadOnly = readOnly
	st, err := store.OpenWith(c.Store, opt)
	if err != nil {
		return nil, nil, err
	}
	var log *events.Log
	closeLog := func() { log.Close() }
	if _, err := os.Stat(filepath.Join(c.Store, "events.db")); err != nil && c.DryRun && readOnly {
		log, closeLog, err = emptyLog()
	} else {
		log, err = openLog(c, readOnly)
	}
	if err != nil {
		return nil, nil, err
	}
	eng := &pipeline.Engine{Store: st, Events: log, Code: code, Platform: pipeline.HostPlatform(),
		Opt: pipeline.Options{Jobs: c.Jobs, Force: c.Force, CheckpointInterval: c.CheckpointInterval, SnapshotInterval: c.SnapshotInterval, FiguresDir: c.Figures}}
	return eng, closeLog, nil
}

// emptyLog opens an empty event log in a temporary directory that closing
// it removes: what a dry run reads for a store that does not exist yet,
// which it must not create.
func emptyLog() (*events.Log, func(), error) {
	dir, err := os.MkdirTemp("", "pipeline-dry-run-")
	if err != nil {
		return nil, nil, err
	}
	log, err := events.Open(filepath.Join(dir, "events.db"), events.Options{Timeout: lockWait})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return log, func() { log.Close(); os.RemoveAll(dir) }, nil
}

// resolveProfile sets c.Profile, unless a flag or PIPELINE_PROFILE chose
// it, to the profile of log's latest run (paper if nothing ran), and tells
// which profile the command shows.
func resolveProfile(c *Config, log *events.Log) error {
	if c.Command == "run" {
		return nil
	}
	if c.ProfileSet {
		fmt.Fprintf(c.Stderr, "profile %s\n", c.Profile)
		return nil
	}
	c.Profile = "paper"
	if log == nil {
		fmt.Fprintf(c.Stderr, "profile paper (no store at %s; --profile picks another)\n", c.Store)
		return nil
	}
	runs, err := log.Runs()
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintf(c.Stderr, "profile paper (the store records no run yet; --profile picks another)\n")
		return nil
	}
	last := runs[len(runs)-1].Run
	if p, err := profileOf(log, last); err != nil {
		return err
	} else if p != "" {
		c.Profile = p
	}
	fmt.Fprintf(c.Stderr, "profile %s (the latest run's, run %d; --profile picks another)\n", c.Profile, last)
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
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
func executorOf(c *Config) executor {
	if c.Executor != "slurm" {
		return executor{name: "local", slots: c.Jobs}
	}
	ex := executor{name: "slurm", slots: c.Slurm.MaxJobs}
	limit := fmt.Sprintf("at most %d runner jobs (--slurm-max-jobs)", ex.slots)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if cpus, err := slurm.PartitionCPUs(ctx, c.Slurm.Partition); err == nil && cpus/max(c.Slurm.CPUs, 1) < ex.slots {
		ex.slots = max(cpus/max(c.Slurm.CPUs, 1), 1)
		limit = fmt.Sprintf("%d runner jobs at once: the partition's %d CPUs over --slurm-cpus %d", ex.slots, cpus, max(c.Slurm.CPUs, 1))
	}
	per, start, n, ok := slurm.Overhead(c.Store)
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
func slurmAttempts(c *Config) int { return 2 * c.Slurm.MaxJobs }

func cmdRun(ctx context.Context, c *Config, stdout, stderr io.Writer) (int, error) {
	// A dry run writes nothing: on a store with a log it reads as status
	// does (a running run's snapshot, if one holds the log); for a store
	// that does not exist yet it reads an empty log and creates nothing.
	eng, closeLog, err := openEngine(c, c.DryRun)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	if c.DryRun {
		return dryRun(c, eng, stdout)
	}
	eng.Opt.Log = stderr
	eng.Opt.Terminal = isTerminal(stderr)
	eng.Opt.Args = append([]string{"run"}, os.Args[min(len(os.Args), 2):]...)
	if c.Executor == "slurm" {
		eng.Opt.Jobs = slurmAttempts(c)
	}
	if err := printRunHeader(c, eng, stderr); err != nil {
		fmt.Fprintf(stderr, "note: no estimate: %v\n", err)
	}
	if c.Executor == "slurm" {
		var logMu sync.Mutex
		d, err := openSlurm(ctx, c, eng.Plan.File, func(format string, args ...any) {
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(stderr, "slurm: "+format+"\n", args...)
		})
		if err != nil {
			return exitFailed, err
		}
		fmt.Fprintf(stderr, "slurm: runner jobs are named %s (squeue --user %s --name %s); at most %d at once\n", d.Name(), d.User(), d.Name(), c.Slurm.MaxJobs)
		defer func() {
			if err := d.Close(); err != nil {
				fmt.Fprintf(stderr, "%v\n", err)
			}
		}()
		eng.Dispatcher, eng.Opt.Terminal = d, false
	}
	res, err := eng.Run(ctx)
	if res != nil && c.JSON {
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
func dryRun(c *Config, eng *pipeline.Engine, stdout io.Writer) (int, error) {
	rec := provenance.New(eng)
	xs, err := rec.Explain()
	if err != nil {
		return exitFailed, err
	}
	est, err := rec.Estimate(xs)
	if err != nil {
		return exitFailed, err
	}
	ex := executorOf(c)
	workers := []int{2, 64, 512}
	if !slices.Contains(workers, ex.slots) {
		workers = append([]int{ex.slots}, workers...)
	}
	sched, err := rec.ScheduleWith(xs, ex.overhead, workers...)
	if err != nil {
		return exitFailed, err
	}
	if c.JSON {
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
				line += fmt.Sprintf(" for the %d tasks with a known rate", se.Known)
			}
			line += " (" + strings.Join(se.Sources, "; ") + ")"
			total += se.Wall
		case se.Samples > 0:
			line += "  (no rate known yet: run a smaller profile first)"
		}
		fmt.Fprintln(stdout, line)
	}
	if total > 0 {
		fmt.Fprintf(stdout, "  estimated wall time of the tasks with a known rate: ~%s\n", total)
	}
	printSchedule(stdout, sched, ex)
	return exitOK, nil
}

// printRunHeader tells what a run is about to do before it starts: the
// profile (said to be the default when none was chosen, with the quick
// one offered), how many tasks it would run of how many, the predicted
// wall time on 2 workers and on the run's, and that Ctrl-C stops it with
// its progress saved and the same command resumes it.
func printRunHeader(c *Config, eng *pipeline.Engine, w io.Writer) error {
	rec := provenance.New(eng)
	xs, err := rec.Explain()
	if err != nil {
		return err
	}
	toRun := 0
	for _, x := range xs {
		if x.Do == provenance.WouldRun {
			toRun++
		}
	}
	profile := "profile " + c.Profile
	if !c.ProfileSet && c.Profile == dag.DefaultProfile {
		profile += " (the default: the paper at full scale; --profile quick runs every figure at reduced scale in minutes)"
	}
	if toRun == 0 {
		fmt.Fprintf(w, "%s: all %d tasks are recorded; nothing to run\n", profile, len(xs))
		return nil
	}
	fmt.Fprintf(w, "%s: %d tasks, %d to run\n", profile, len(xs), toRun)
	ex := executorOf(c)
	workers := []int{2}
	if ex.slots != 2 {
		workers = append(workers, ex.slots)
	}
	sched, err := rec.ScheduleWith(xs, ex.overhead, workers...)
	if err != nil {
		return err
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
	return nil
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

// exitInvalidOr is the exit code of an error opening the store or the
// plan: bad input (2), unless the store is locked or damaged, or the file
// system refused (permission, read-only, I/O): the input was fine and
// the same command may work on another day or as another user (1).
func exitInvalidOr(err error) int {
	if errors.Is(err, events.ErrLocked) || errors.Is(err, events.ErrCorruptLog) || systemError(err) {
		return exitFailed
	}
	return exitInvalid
}

// systemError reports whether the file system refused an operation for
// reasons other than a missing or misnamed file.
func systemError(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	return errno != syscall.ENOENT && errno != syscall.ENOTDIR && errno != syscall.EISDIR && errno != syscall.ENAMETOOLONG
}

func cmdStatus(c *Config, eng *pipeline.Engine, stdout io.Writer) (int, error) {
	if c.Times {
		return statusTimes(eng, c, stdout)
	}
	states, err := eng.Events.LastStates()
	if err != nil {
		return exitFailed, err
	}
	last := map[string]events.StateRecord{}
	for _, s := range states {
		last[s.Task] = s
	}
	doc := statusDoc{Profile: c.Profile, Store: c.Store, Total: len(eng.Plan.Tasks), Counts: map[string]int{}}
	profiles := map[uint64]string{} // run -> its profile
	for _, t := range eng.Plan.Tasks {
		ts := taskStatus{Task: t.Path, State: "never-run"}
		if s, ok := last[t.Path]; ok {
			ts.State, ts.Run, ts.Error = s.State, s.Run, s.Error
			p, seen := profiles[s.Run]
			if !seen {
				if p, err = profileOf(eng.Events, s.Run); err != nil {
					return exitFailed, err
				}
				profiles[s.Run] = p
			}
			if p != "" && p != c.Profile {
				// Profiles share task paths: this state is of another
				// profile's task (`why` tells whether it is this one's).
				ts.Profile = p
				doc.OtherProfile++
			}
		}
		doc.Counts[ts.State]++
		doc.Tasks = append(doc.Tasks, ts)
	}
	if c.JSON {
		return exitOK, json.NewEncoder(stdout).Encode(doc)
	}
	for _, ts := range doc.Tasks {
		line := fmt.Sprintf("%-11s %s", ts.State, ts.Task)
		if ts.Run != 0 {
			run := fmt.Sprintf("run %d", ts.Run)
			if ts.Profile != "" {
				run += ", profile " + ts.Profile
			}
			line += "  (" + run + ")"
			if ts.Error != "" {
				line += ": " + ts.Error
			}
		}
		fmt.Fprintln(stdout, line)
	}
	var parts []string
	for _, k := range []string{"done", "cached", "failed", "skipped", "interrupted", "started", "never-run"} {
		if doc.Counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", doc.Counts[k], k))
		}
	}
	fmt.Fprintf(stdout, "%d tasks of profile %s: %s\n", doc.Total, doc.Profile, strings.Join(parts, ", "))
	if doc.OtherProfile > 0 {
		fmt.Fprintf(stdout, "%d of these states were recorded by runs of another profile (the task paths are shared; `pipeline why TASK` tells whether a task is cached for this one)\n", doc.OtherProfile)
	}
	return exitOK, nil
}

// statusDoc is what status --json prints.
type statusDoc struct {
	Profile string         `json:"profile"`
	Store   string         `json:"store"`
	Tasks   []taskStatus   `json:"tasks"`
	Total   int            `json:"total"`
	Counts  map[string]int `json:"counts"` // by state; they add up to Total
	// OtherProfile counts the tasks whose last state was recorded by a run
	// of another profile.
	OtherProfile int `json:"other_profile"`
}

type taskStatus struct {
	Task  string `json:"task"`
	State string `json:"state"` // an events state, or "never-run"
	Run   uint64 `json:"run,omitempty"`
	// Profile is the profile of Run when it is not the one shown.
	Profile string `json:"profile,omitempty"`
	Error   string `json:"error,omitempty"`
}

func cmdDAG(c *Config, stdout io.Writer) (int, error) {
	if _, err := os.Stat(filepath.Join(c.Store, "events.db")); err == nil {
		log, err := openLog(c, true)
		if err != nil {
			return exitInvalidOr(err), err
		}
		err = resolveProfile(c, log)
		log.Close()
		if err != nil {
			return exitFailed, err
		}
	} else if err := resolveProfile(c, nil); err != nil {
		return exitFailed, err
	}
	plan, err := loadPlan(c)
	if err != nil {
		return exitInvalid, err
	}
	doc := dagDoc{Profile: plan.Profile, File: c.DAG, Tasks: len(plan.Tasks)}
	for _, s := range plan.Stages {
		st := dagStage{Name: s.Name, Kind: s.Kind}
		for _, t := range plan.Tasks {
			if t.Stage != s {
				continue
			}
			dt := dagTask{Path: t.Path, Inputs: map[string][]string{}, Skipped: skippedOf(t)}
			for _, slot := range sortedSlotNames(t.Inputs) {
				for _, up := range t.Inputs[slot] {
					dt.Inputs[slot] = append(dt.Inputs[slot], up.Path)
				}
			}
			st.Tasks = append(st.Tasks, dt)
		}
		doc.Stages = append(doc.Stages, st)
	}
	if c.JSON {
		return exitOK, json.NewEncoder(stdout).Encode(doc)
	}
	for _, s := range doc.Stages {
		fmt.Fprintf(stdout, "stage %s (kind %s, %d tasks)\n", s.Name, s.Kind, len(s.Tasks))
		for _, t := range s.Tasks {
			fmt.Fprintf(stdout, "  %s\n", t.Path)
			for _, slot := range slices.Sorted(maps.Keys(t.Inputs)) {
				for _, up := range t.Inputs[slot] {
					fmt.Fprintf(stdout, "      %s <- %s\n", slot, up)
				}
			}
			for _, l := range skipLines(t.Skipped) {
				fmt.Fprintf(stdout, "      %s\n", l)
			}
		}
	}
	fmt.Fprintf(stdout, "%d tasks in %d stages (profile %s)\n", doc.Tasks, len(doc.Stages), doc.Profile)
	return exitOK, nil
}

// showFileDoc is what show TASK FILE --json prints: the file's bytes as
// text when they are UTF-8, in base64 otherwise.
type showFileDoc struct {
	Profile string `json:"profile"`
	Task    string `json:"task"`
	Output  string `json:"output"`
	File    string `json:"file"`
	ID      string `json:"id"`
	Bytes   int    `json:"bytes"`
	// Planned is false where the output shown is not the one this binary
	// and dag.yaml would reuse (none is recorded) but the latest.
	Planned bool   `json:"planned"`
	Text    string `json:"text,omitempty"`
	Base64  string `json:"base64,omitempty"`
}

// dagDoc is what dag --json prints.
type dagDoc struct {
	Profile string     `json:"profile"`
	File    string     `json:"file"`
	Stages  []dagStage `json:"stages"`
	Tasks   int        `json:"tasks"`
}

type dagStage struct {
	Name  string    `json:"name"`
	Kind  string    `json:"kind"`
	Tasks []dagTask `json:"tasks"`
}

type dagTask struct {
	Path    string              `json:"path"`
	Inputs  map[string][]string `json:"inputs"`            // slot -> upstream task paths
	Skipped []tune.Skip         `json:"skipped,omitempty"` // infeasible grid points a tune task leaves out
}

// skippedOf returns the grid points a tune task leaves out as infeasible.
func skippedOf(t *dag.Task) []tune.Skip {
	if s, ok := t.Runner.(interface{ Skipped() []tune.Skip }); ok {
		return s.Skipped()
	}
	return nil
}

// skipLines summarises skipped grid points: one line per reason, with how
// many points it leaves out and the first of them.
func skipLines(skips []tune.Skip) []string {
	var reasons []string
	count := map[string]int{}
	first := map[string]string{}
	for _, s := range skips {
		if count[s.Reason] == 0 {
			reasons = append(reasons, s.Reason)
			first[s.Reason] = s.Point
		}
		count[s.Reason]++
	}
	var out []string
	for _, r := range reasons {
		out = append(out, fmt.Sprintf("skips %d infeasible grid point(s), first %s: %s", count[r], first[r], r))
	}
	return out
}

func cmdWhy(c *Config, eng *pipeline.Engine, stdout io.Writer) (int, error) {
	if _, err := provenance.Find(eng.Plan, c.Args[0]); err != nil {
		return exitInvalid, err
	}
	xs, err := provenance.New(eng).Explain()
	if err != nil {
		return exitFailed, err
	}
	for _, x := range xs {
		if x.Task != c.Args[0] {
			continue
		}
		doc := whyDoc{Profile: c.Profile, Task: x.Task, Do: x.Do, Reason: x.Reason, Action: x.Action, Output: x.Output, RecordedRun: x.RecordedRun}
		switch {
		case x.Recorded == nil:
		case x.Action != "" && x.Do == provenance.WouldCache && pipeline.Action(x.Recorded) == pipeline.Action(x.Transcript):
			doc.Unchanged = true
			if x.Previous != nil {
				doc.PreviousDiff = pipeline.DiffTranscripts(x.Previous, x.Recorded)
			}
		default:
			doc.Diff = pipeline.DiffTranscripts(x.Recorded, x.Transcript)
		}
		if c.JSON {
			return exitOK, json.NewEncoder(stdout).Encode(doc)
		}
		printWhy(stdout, doc)
	}
	return exitOK, nil
}

// whyDoc is what why --json prints.
type whyDoc struct {
	Profile     string `json:"profile"`
	Task        string `json:"task"`
	Do          string `json:"do"` // "cached" or "run"
	Reason      string `json:"reason"`
	Action      string `json:"action,omitempty"`
	Output      string `json:"output,omitempty"`
	RecordedRun uint64 `json:"recorded_run,omitempty"` // 0: never run
	Unchanged   bool   `json:"unchanged"`              // identity unchanged since RecordedRun
	// Diff is the transcript diff since RecordedRun ("- recorded", "+ now").
	Diff []string `json:"diff,omitempty"`
	// PreviousDiff is, for an unchanged task, how RecordedRun differed from
	// the run before it.
	PreviousDiff []string `json:"previous_diff,omitempty"`
}

func printWhy(w io.Writer, d whyDoc) {
	verb := "would run"
	if d.Do == provenance.WouldCache {
		verb = "cached"
	}
	fmt.Fprintf(w, "%s: %s (%s)\n", d.Task, verb, d.Reason)
	switch {
	case d.RecordedRun == 0:
		fmt.Fprintln(w, "no recorded run of this task")
	case d.Unchanged:
		fmt.Fprintf(w, "identity unchanged since run %d\n", d.RecordedRun)
		if len(d.PreviousDiff) > 0 {
			fmt.Fprintln(w, "that run differed from the one before it in:")
			for _, l := range d.PreviousDiff {
				fmt.Fprintln(w, "  "+l)
			}
		}
	default:
		fmt.Fprintf(w, "changes since run %d (- recorded, + now):\n", d.RecordedRun)
		for _, l := range d.Diff {
			fmt.Fprintln(w, "  "+l)
		}
	}
}

func cmdEvents(c *Config, stdout io.Writer) (int, error) {
	path := filepath.Join(c.Store, "events.db")
	if _, err := os.Stat(path); err != nil {
		return exitInvalid, fmt.Errorf("no event log at %s: nothing has run with --store %s yet", path, c.Store)
	}
	log, err := openLog(c, true)
	if err != nil {
		return exitFailed, err
	}
	defer log.Close()
	taskPath := c.Args[0]
	evs, err := log.Events(taskPath)
	if err != nil {
		return exitFailed, err
	}
	iterRuns, err := log.IterRuns(taskPath)
	if err != nil {
		return exitFailed, err
	}
	if len(evs) == 0 && len(iterRuns) == 0 {
		return exitInvalid, fmt.Errorf("no events recorded for task %q", taskPath)
	}
	var its []runIter
	for _, run := range iterRuns {
		got, err := log.Iterations(taskPath, run)
		if err != nil {
			return exitFailed, err
		}
		for _, it := range got {
			its = append(its, runIter{Type: "iter", Run: run, Iter: it})
		}
	}
	runs, err := runProfiles(log, evs, iterRuns)
	if err != nil {
		return exitFailed, err
	}
	sum := eventsSummary{Type: "summary", Task: taskPath, Runs: runs, Events: len(evs), Iterations: len(its)}
	enc := json.NewEncoder(stdout)
	switch {
	case c.JSON:
		return exitOK, enc.Encode(eventsDoc{eventsSummary: sum, EventList: evs, IterList: its})
	case c.JSONL:
		for _, ev := range evs {
			if err := enc.Encode(ev); err != nil {
				return exitFailed, err
			}
		}
		for _, it := range its {
			if err := enc.Encode(it); err != nil {
				return exitFailed, err
			}
		}
		return exitOK, enc.Encode(sum)
	}
	for _, r := range runs {
		fmt.Fprintf(stdout, "run %d: profile %s\n", r.Run, r.Profile)
	}
	for _, ev := range evs {
		line := fmt.Sprintf("#%d run %d %s", ev.Seq, ev.Run, ev.Type)
		for _, kv := range [][2]string{{"state", ev.State}, {"action", ev.Action}, {"output", ev.Output}, {"error", ev.Error}} {
			if kv[1] != "" {
				line += " " + kv[0] + "=" + kv[1]
			}
		}
		if ev.Checkpoint != nil {
			line += fmt.Sprintf(" checkpoint=%s@%d", ev.Checkpoint.Content, ev.Checkpoint.Iteration)
		}
		if len(ev.Data) > 0 {
			line += " " + string(ev.Data)
		}
		fmt.Fprintln(stdout, line)
	}
	for _, it := range its {
		line := fmt.Sprintf("iter run %d it=%d samples=%d digest=%016x", it.Run, it.Iter.Iteration, it.Iter.Samples, it.Iter.Digest)
		for _, m := range it.Iter.Metrics {
			line += fmt.Sprintf(" %s=%s", m.Name, task.FormatFloat(m.Value))
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "%d events and %d iteration events of %s in %d runs\n", sum.Events, sum.Iterations, taskPath, len(runs))
	return exitOK, nil
}

// runIter is one iteration event as events prints it in JSON.
type runIter struct {
	Type string    `json:"type"` // "iter"
	Run  uint64    `json:"run"`
	Iter task.Iter `json:"iter"`
}

// runProfile names the profile a run was started with.
type runProfile struct {
	Run     uint64 `json:"run"`
	Profile string `json:"profile"`
}

// eventsSummary is the last line of events --jsonl; events --json is it
// with the lists.
type eventsSummary struct {
	Type       string       `json:"type"` // "summary"
	Task       string       `json:"task"`
	Runs       []runProfile `json:"runs"`
	Events     int          `json:"events"`
	Iterations int          `json:"iterations"`
}

type eventsDoc struct {
	eventsSummary
	EventList []events.Event `json:"event_list"`
	IterList  []runIter      `json:"iteration_list"`
}

// runProfiles returns the runs that recorded evs and the iteration runs,
// ascending, each with the profile its run event names.
func runProfiles(log *events.Log, evs []events.Event, iterRuns []uint64) ([]runProfile, error) {
	ids := slices.Clone(iterRuns)
	for _, ev := range evs {
		ids = append(ids, ev.Run)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make([]runProfile, 0, len(ids))
	for _, id := range ids {
		p, err := profileOf(log, id)
		if err != nil {
			return nil, err
		}
		if p == "" {
			p = "unknown"
		}
		out = append(out, runProfile{Run: id, Profile: p})
	}
	return out, nil
}

// profileOf returns the profile run was started with, from its first run
// event ("" if the event does not say).
func profileOf(log *events.Log, run uint64) (string, error) {
	start, ok, err := log.RunStart(run)
	if err != nil || !ok {
		return "", err
	}
	var info struct {
		Profile string `json:"profile"`
	}
	if json.Unmarshal(start.Data, &info) != nil {
		return "", nil
	}
	return info.Profile, nil
}

// statusTimes prints the recorded task time of each stage's current
// actions: how long the profile's computation took, however many runs and
// sessions it was spread over.
func statusTimes(eng *pipeline.Engine, c *Config, stdout io.Writer) (int, error) {
	tm, err := provenance.New(eng).Times()
	if err != nil {
		return exitFailed, err
	}
	if c.JSON {
		return exitOK, json.NewEncoder(stdout).Encode(map[string]any{"profile": c.Profile, "stages": tm.Stages,
			"total_task_time": tm.Total, "runs": tm.Runs, "runs_wall_time": tm.RunsWall})
	}
	fmt.Fprintf(stdout, "%-24s %8s %12s  %s\n", "stage", "finished", "task time", "runs")
	for _, st := range tm.Stages {
		fmt.Fprintf(stdout, "%-24s %4d/%-4d %12s  %v\n", st.Stage, st.Finished, st.Tasks, st.TaskTime.Round(time.Second), st.Runs)
	}
	fmt.Fprintf(stdout, "total task time %s: each task's own wall time, summed (tasks overlap when they run side by side)\n", tm.Total.Round(time.Second))
	fmt.Fprintf(stdout, "wall time of the %d runs %v that did this work: %s\n", len(tm.Runs), tm.Runs, tm.RunsWall.Round(time.Second))
	return exitOK, nil
}

// openLog opens the store's event log. A read-only command finding it held
// by a running run reads the run's snapshot instead, and says so.
// noSnapshotError: a run holds the log and has no snapshot of its own yet.
type noSnapshotError struct {
	path string
	err  error // the lock error
}

func (e *noSnapshotError) Error() string {
	return fmt.Sprintf("%s is locked by another pipeline process: a run is in progress and has taken no snapshot yet "+
		"(it takes one every --snapshot-interval, 30s by default; none if started with --snapshot-interval 0); try again shortly", e.path)
}

func (e *noSnapshotError) Unwrap() error { return e.err }

// lockWait is how long a command waits for another process's lock on the
// event log before it gives up: long enough for a read that holds it a
// moment, short enough that a second run on a busy store is turned away
// within about a second (planning included).
const lockWait = 500 * time.Millisecond

func openLog(c *Config, readOnly bool) (*events.Log, error) {
	path := filepath.Join(c.Store, "events.db")
	log, err := events.Open(path, events.Options{Timeout: lockWait, ReadOnly: readOnly})
	if err == nil || !readOnly || !errors.Is(err, events.ErrLocked) {
		return log, err
	}
	// A run holds the log: read its snapshot, if it has taken one.
	snap, serr := events.OpenSnapshot(path, events.Options{Timeout: lockWait})
	if errors.Is(serr, fs.ErrNotExist) {
		// The run may have ended (and removed its snapshot) meanwhile.
		if log, err2 := events.Open(path, events.Options{Timeout: lockWait / 5, ReadOnly: true}); err2 == nil {
			return log, nil
		}
	}
	noSnapshot := &noSnapshotError{path: path, err: err}
	if serr != nil {
		return nil, noSnapshot
	}
	run, ok, serr := snap.InProgress()
	if serr != nil || !ok {
		// A snapshot left by an earlier run that was killed: not of the
		// run in progress.
		snap.Close()
		return nil, noSnapshot
	}
	age := "unknown age"
	if info, err := os.Stat(events.SnapshotPath(path)); err == nil {
		age = fmt.Sprintf("taken %s, %s ago", info.ModTime().Format(time.DateTime), time.Since(info.ModTime()).Round(time.Second))
	}
	if c.Stderr != nil {
		fmt.Fprintf(c.Stderr, "note: run %d is in progress and holds %s; reading its snapshot (%s)\n", run, path, age)
	}
	return snap, nil
}

// showFile is one file of a task's output, as `show --json` prints it.
// problem names what is wrong with a store entry a read failed on.
func problem(err error) string {
	switch {
	case errors.Is(err, store.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, store.ErrNotFound):
		return "missing"
	}
	return "unreadable"
}

type showFile struct {
	Name  string `json:"name"`
	ID    string `json:"id"`
	Bytes int    `json:"bytes"`
	// Problem is "corrupt" or "missing" for an entry that fails its check.
	Problem string `json:"problem,omitempty"`
}

// cmdShow prints the recorded output of a task that this binary and
// dag.yaml would reuse (else, saying so, its latest): its files with their
// sizes and content IDs or, given FILE, that file's bytes exactly (e.g. a
// tuning table: `show tune/linreg/d=10/method=ars table.csv`).
func cmdShow(c *Config, eng *pipeline.Engine, stdout io.Writer) (int, error) {
	rec := provenance.New(eng)
	p, planned, err := rec.Production(c.Args[0])
	switch {
	case errors.Is(err, provenance.ErrUnknownTask) || errors.Is(err, provenance.ErrNotRecorded):
		return exitInvalid, err
	case err != nil:
		return exitFailed, err
	case !planned && c.Stderr != nil:
		fmt.Fprintf(c.Stderr, "note: %s: nothing is recorded for what this binary and dag.yaml would run (`why %s` says what changed); showing its latest recorded output, from run %d\n", p.Task, p.Task, p.Run)
	}
	manifest, err := eng.Manifest(p.Output)
	if err != nil {
		return exitFailed, fmt.Errorf("%s: output manifest %s: %w", p.Task, p.Output, err)
	}
	entries := map[string]store.ID{}
	for _, en := range manifest {
		entries[en.Name] = en.ID
	}
	names := slices.Sorted(maps.Keys(entries))
	if len(c.Args) == 2 {
		id, ok := entries[c.Args[1]]
		if !ok {
			return exitInvalid, fmt.Errorf("%s: output %s has no file %q; its files are %s", p.Task, p.Output, c.Args[1], strings.Join(names, ", "))
		}
		b, err := rec.ReadOutput(p.Task, p.Output, c.Args[1])
		if err != nil {
			return exitFailed, err
		}
		if c.JSON {
			doc := showFileDoc{Profile: c.Profile, Task: p.Task, Output: p.Output, File: c.Args[1], ID: id.String(), Bytes: len(b), Planned: planned}
			if utf8.Valid(b) {
				doc.Text = string(b)
			} else {
				doc.Base64 = base64.StdEncoding.EncodeToString(b)
			}
			if err := json.NewEncoder(stdout).Encode(doc); err != nil {
				return exitFailed, err
			}
			return exitOK, nil
		}
		if _, err := stdout.Write(b); err != nil {
			return exitFailed, err
		}
		return exitOK, nil
	}
	files := make([]showFile, 0, len(names))
	bad := 0
	for _, name := range names {
		f := showFile{Name: name, ID: entries[name].String()}
		if b, err := eng.Store.Get(entries[name]); err != nil {
			f.Problem = problem(err)
			bad++
		} else {
			f.Bytes = len(b)
		}
		files = append(files, f)
	}
	if c.JSON {
		err := json.NewEncoder(stdout).Encode(map[string]any{"profile": c.Profile, "task": p.Task, "action": p.Action, "run": p.Run, "output": p.Output, "planned": planned, "files": files})
		if err != nil {
			return exitFailed, err
		}
	} else {
		current := "the output this binary and dag.yaml would reuse"
		if !planned {
			current = "not what this binary and dag.yaml would run: `pipeline why " + p.Task + "` says what changed"
		}
		fmt.Fprintf(stdout, "%s: output %s (action %s, recorded in run %d; %s)\n", p.Task, p.Output, p.Action, p.Run, current)
		for _, f := range files {
			if f.Problem != "" {
				fmt.Fprintf(stdout, "  %-28s %10s        %s  (%s in the store)\n", f.Name, strings.ToUpper(f.Problem), f.ID, f.Problem)
				continue
			}
			fmt.Fprintf(stdout, "  %-28s %10d bytes  %s\n", f.Name, f.Bytes, f.ID)
		}
	}
	if bad > 0 {
		return exitFailed, fmt.Errorf("%s: %d of the %d files of output %s are corrupt or missing in the store (a run recomputes them)", p.Task, bad, len(files), p.Output)
	}
	return exitOK, nil
}

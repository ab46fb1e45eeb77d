package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/viper"

	"zorepro/pipeline"
	"zorepro/pipeline/codeid"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
	"zorepro/stages"
)

// codeIdentity is replaced in tests that run without a build manifest.
var codeIdentity = func() (pipeline.CodeIdentity, error) { return codeid.Embedded() }

// storeOptions is a test seam: tests set a failing store.Options.CreateTemp
// to simulate a full disk.
var storeOptions store.Options

// planFlags are the settings of a command that reads a store against a
// plan: --dag, --profile and --store.
type planFlags struct {
	dagFile, profile, storeDir string
	// profileSet: a flag, PIPELINE_PROFILE or the configuration file chose
	// the profile; otherwise inspection commands use the latest run's.
	profileSet bool
	// forRun: the profile defaults to paper and is never taken from the
	// store (run, worker).
	forRun bool
}

// define binds --dag, --profile and --store.
func (p *planFlags) define(f *flagSet) {
	f.String(&p.dagFile, "dag", "dag.yaml", "the DAG file")
	usage := "a profile of dag.yaml (paper, quick, smoke, published, crossover, horizon-variants, horizon-long); run defaults to paper, the other commands to the profile of the store's latest run"
	if p.forRun {
		usage = "a profile of dag.yaml (paper, quick, smoke, published, crossover, horizon-variants, horizon-long)"
	}
	f.String(&p.profile, "profile", "", usage)
	f.then(func(v *viper.Viper) []string {
		p.profileSet = f.set(v, "profile")
		if p.forRun && p.profile == "" {
			p.profile = dag.DefaultProfile
		}
		return nil
	})
	storeFlag(f, &p.storeDir)
}

// storeFlag binds --store.
func storeFlag(f *flagSet, dst *string) {
	f.NonEmpty(dst, "store", "artifacts", "store root (content store and events.db)")
}

// openMode says how a command opens a store.
type openMode struct {
	// readOnly: inspect; a running run's snapshot is read if it holds
	// the log.
	readOnly bool
	// mustExist: refuse a store without an event log (a mistyped --store
	// must not create one).
	mustExist bool
	// dryRun: a store without an event log reads as an empty one,
	// created nowhere.
	dryRun bool
	// private: read a private copy of a log at rest (events.OpenCopy),
	// so that a long-lived reader holds no lock a later run needs.
	private bool
}

// inspect is how a read-only command opens a store.
var inspect = openMode{readOnly: true, mustExist: true}

// serving is how serve opens a store: as inspect, through a private copy
// of a log at rest; the server follows newer states of either
// (events.Log.Follow).
var serving = openMode{readOnly: true, mustExist: true, private: true}

// openEngine opens the store and its event log and loads the plan (cut
// to targets, if any). Unless a profile was chosen, a command uses the
// profile of the store's latest run (resolveProfile). opt is the
// engine's options. A run, or a command given a profile, validates the
// dag file before it touches the store.
func (p *planFlags) openEngine(inv *invocation, mode openMode, opt pipeline.Options, targets []string) (*pipeline.Engine, func(), error) {
	var plan *dag.Plan
	var err error
	early := p.forRun || p.profileSet
	if early {
		if plan, err = p.loadPlan(inv, targets); err != nil {
			return nil, nil, err
		}
	}
	eng, closeLog, err := openStore(inv, p.storeDir, mode)
	if err != nil {
		return nil, nil, err
	}
	if err := p.resolveProfile(inv, eng.Events); err != nil {
		closeLog()
		return nil, nil, err
	}
	if !early {
		if plan, err = p.loadPlan(inv, targets); err != nil {
			closeLog()
			return nil, nil, err
		}
	}
	eng.Plan = plan
	eng.Opt = opt
	eng.Opt.Profile = p.profile
	return eng, closeLog, nil
}

// openStore opens the store at dir and its event log, without a plan.
func openStore(inv *invocation, dir string, mode openMode) (*pipeline.Engine, func(), error) {
	_, statErr := os.Stat(filepath.Join(dir, "events.db"))
	if mode.mustExist && statErr != nil {
		return nil, nil, fmt.Errorf("no event log at %s: nothing has run with --store %s yet", filepath.Join(dir, "events.db"), dir)
	}
	code, err := codeIdentity()
	if err != nil {
		return nil, nil, err
	}
	opt := storeOptions
	opt.ReadOnly = mode.readOnly
	st, err := store.OpenWith(dir, opt)
	if err != nil {
		return nil, nil, err
	}
	var log *events.Log
	closeLog := func() { log.Close() }
	if statErr != nil && mode.dryRun {
		log, closeLog, err = emptyLog()
	} else {
		log, err = openLog(inv, dir, mode)
	}
	if err != nil {
		return nil, nil, err
	}
	return &pipeline.Engine{Store: st, Events: log, Code: code, Platform: pipeline.HostPlatform()}, closeLog, nil
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

// resolveProfile sets the profile, unless a flag or PIPELINE_PROFILE chose
// it, to the profile of log's latest run (paper if nothing ran), and tells
// which profile the command shows.
func (p *planFlags) resolveProfile(inv *invocation, log *events.Log) error {
	if p.forRun {
		return nil
	}
	if p.profileSet {
		fmt.Fprintf(inv.stderr, "profile %s\n", p.profile)
		return nil
	}
	p.profile = dag.DefaultProfile
	if log == nil {
		fmt.Fprintf(inv.stderr, "profile paper (no store at %s; --profile picks another)\n", p.storeDir)
		return nil
	}
	runs, err := log.Runs()
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintf(inv.stderr, "profile paper (the store records no run yet; --profile picks another)\n")
		return nil
	}
	last := runs[len(runs)-1].Run
	if prof, err := profileOf(log, last); err != nil {
		return err
	} else if prof != "" {
		p.profile = prof
	}
	fmt.Fprintf(inv.stderr, "profile %s (the latest run's, run %d; --profile picks another)\n", p.profile, last)
	return nil
}

// profileOf returns the profile run was started with, from its first run
// event ("" if the event does not say).
func profileOf(log *events.Log, run uint64) (string, error) {
	info, err := runStartOf(log, run)
	return info.Profile, err
}

// runStart is what a run's start event records of it (the engine writes
// it; pipeline.Engine.Run).
type runStart struct {
	Profile string `json:"profile"`
	Jobs    int    `json:"jobs"`
}

// runStartOf reads what run's start recorded; the zero value where it
// recorded nothing readable.
func runStartOf(log *events.Log, run uint64) (runStart, error) {
	var info runStart
	start, ok, err := log.RunStart(run)
	if err != nil || !ok {
		return info, err
	}
	if json.Unmarshal(start.Data, &info) != nil {
		return runStart{}, nil
	}
	return info, nil
}

// errPlanningInterrupted is returned by loadPlan when a signal arrives
// while it plans.
var errPlanningInterrupted = errors.New("interrupted while planning; nothing was recorded")

// loadPlan loads the dag under the profile, cut to targets if any.
// Planning records nothing, so SIGINT or SIGTERM stops it at once
// (errPlanningInterrupted, exit 130); on a terminal, planning that takes
// over a second shows how many tasks it has planned.
func (p *planFlags) loadPlan(inv *invocation, targets []string) (*dag.Plan, error) {
	var planned atomic.Int64
	type loaded struct {
		plan *dag.Plan
		err  error
	}
	done := make(chan loaded, 1)
	go func() {
		plan, err := dag.LoadWith(p.dagFile, p.profile, stages.Kinds(), dag.Options{Planned: &planned, Checked: dagChecked()})
		done <- loaded{plan, err}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	shown := false
	clear := func() {
		if shown {
			fmt.Fprint(inv.stderr, "\r\033[K")
		}
	}
	for {
		select {
		case l := <-done:
			clear()
			if l.err != nil || len(targets) == 0 {
				return l.plan, l.err
			}
			return l.plan.Only(targets)
		case <-inv.ctx.Done():
			clear()
			return nil, errPlanningInterrupted
		case <-tick.C:
			if isTerminal(inv.stderr) {
				fmt.Fprintf(inv.stderr, "\rplanning %s (profile %s): %d tasks so far", p.dagFile, p.profile, planned.Load())
				shown = true
			}
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// lockWait is how long a command waits for another process's lock on the
// event log before it gives up: long enough for a read that holds it a
// moment, short enough that a second run on a busy store is turned away
// within about a second (planning included).
const lockWait = 500 * time.Millisecond

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

// openLog opens the event log of the store at dir. A read-only command
// finding it held by a running run reads the run's snapshot instead, and
// says so.
func openLog(inv *invocation, dir string, mode openMode) (*events.Log, error) {
	path := filepath.Join(dir, "events.db")
	open := func(timeout time.Duration) (*events.Log, error) {
		if mode.private {
			return events.OpenCopy(path, events.Options{Timeout: timeout})
		}
		return events.Open(path, events.Options{Timeout: timeout, ReadOnly: mode.readOnly})
	}
	log, err := open(lockWait)
	if err == nil || !mode.readOnly || !errors.Is(err, events.ErrLocked) {
		return log, err
	}
	// A run holds the log: read its snapshot, if it has taken one.
	snap, serr := events.OpenSnapshot(path, events.Options{Timeout: lockWait})
	if errors.Is(serr, fs.ErrNotExist) {
		// The run may have ended (and removed its snapshot) meanwhile.
		if log, err2 := open(lockWait / 5); err2 == nil {
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
	fmt.Fprintf(inv.stderr, "note: run %d is in progress and holds %s; reading its snapshot (%s)\n", run, path, age)
	return snap, nil
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

// reading runs f on the engine a read-only command opens (store, log and
// plan), closing them after; an error opening them is returned with its
// exit code.
func (p *planFlags) reading(inv *invocation, f func(eng *pipeline.Engine) (int, error)) (int, error) {
	return p.readingAs(inv, inspect, f)
}

// readingAs is reading with the store opened as mode says.
func (p *planFlags) readingAs(inv *invocation, mode openMode, f func(eng *pipeline.Engine) (int, error)) (int, error) {
	eng, closeLog, err := p.openEngine(inv, mode, pipeline.Options{}, nil)
	if err != nil {
		return exitInvalidOr(err), err
	}
	defer closeLog()
	return f(eng)
}

// outputFlags are --json and, for commands that stream, --jsonl.
type outputFlags struct {
	json, jsonl bool
}

func (o *outputFlags) define(f *flagSet, lines bool) {
	f.Bool(&o.json, "json", "print one JSON document")
	if lines {
		f.Bool(&o.jsonl, "jsonl", "stream JSON Lines: one object per item, then a summary object")
	}
}

// check refuses both at once.
func (o *outputFlags) check(name string) []string {
	if o.json && o.jsonl {
		return []string{fmt.Sprintf("pipeline %s: give at most one of --json and --jsonl", name)}
	}
	return nil
}

// wantsJSON reports whether the command prints JSON (for Main's error
// document).
func (o *outputFlags) wantsJSON() bool { return o.json || o.jsonl }

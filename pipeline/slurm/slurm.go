package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"zorepro/pipeline"
	"zorepro/pipeline/atomicfile"
)

// Config is how jobs are submitted. Zero fields take the defaults noted.
type Config struct {
	// Binary is the pipeline binary the jobs run; it must be reachable at
	// this path on every node (the shared file system).
	Binary string
	// Store is the store root (shared); it names this store's jobs.
	Store     string
	Partition string   // sbatch --partition ("": the cluster's default)
	Account   string   // sbatch --account
	Time      string   // sbatch --time, a job's time limit (e.g. 2:00:00; "": the partition's)
	CPUs      int      // sbatch --cpus-per-task, the worker's threads (0: 1)
	Mem       string   // sbatch --mem (e.g. 4G; "": the partition's default)
	Args      []string // more sbatch arguments, as given
	// LogDir receives one log per job array element, <job>_<index>.out
	// ("": <store>/slurm/logs).
	LogDir string
	// Poll is the time between two squeue calls (0: 500ms).
	Poll time.Duration
	// Linger is how long a ready attempt waits for others of its stage to
	// share its job array (0: 200ms).
	Linger time.Duration
	// LostAfter is how long squeue may fail before the attempts in flight
	// are reported lost (0: 5m).
	LostAfter time.Duration
	// Log receives one line per submitted array and per notable event
	// (nil: discard).
	Log func(format string, args ...any)
}

// Dispatcher submits attempts as job arrays and follows them.
type Dispatcher struct {
	cfg  Config
	name string // the job name of this store's jobs
	dir  string // batch scripts and job lists

	mu      sync.Mutex
	pending map[string][]*attempt // stage → attempts waiting to be submitted
	timer   *time.Timer           // flushes pending
	live    map[string]*attempt   // "<job>_<index>" → attempt in flight
	batches int
	failing time.Time // when squeue started failing (zero: it answers)

	quit chan struct{}
	done chan struct{}
}

var _ pipeline.Dispatcher = (*Dispatcher)(nil)

// attempt is one dispatched attempt: its array element, once submitted,
// and where its end is reported.
type attempt struct {
	a      pipeline.Attempt
	id     string // "<job>_<index>"
	log    string
	cancel bool // scancel sent
	end    chan result
	batch  *batch
}

// batch is one submitted job array: its script and list files, removed
// once none of its attempts is in flight.
type batch struct {
	base string
	left int
}

// ended reports an attempt's end (d.mu held).
func (d *Dispatcher) ended(at *attempt, r result) {
	delete(d.live, at.id)
	at.end <- r
	if b := at.batch; b != nil {
		if b.left--; b.left == 0 {
			os.Remove(b.base + ".list")
			os.Remove(b.base + ".sh")
		}
	}
}

type result struct {
	ended pipeline.Ended
	err   error
}

// commandTimeout bounds every Slurm command: a controller that does not
// answer must give an error within seconds.
const commandTimeout = 15 * time.Second

// Open checks that Slurm can take jobs (commands installed, controller
// answering, partition present), cancels the jobs a killed coordinator of
// the same store left behind and waits until they have ended, then starts
// following jobs. Close stops it.
func Open(ctx context.Context, cfg Config) (*Dispatcher, error) {
	if cfg.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		cfg.Binary = exe
	}
	store, err := filepath.Abs(cfg.Store)
	if err != nil {
		return nil, err
	}
	cfg.Store = store
	if cfg.LogDir == "" {
		cfg.LogDir = filepath.Join(store, "slurm", "logs")
	}
	if cfg.LogDir, err = filepath.Abs(cfg.LogDir); err != nil {
		return nil, err
	}
	cfg.CPUs = max(cfg.CPUs, 1)
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if cfg.Linger <= 0 {
		cfg.Linger = 200 * time.Millisecond
	}
	if cfg.LostAfter <= 0 {
		cfg.LostAfter = 5 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = func(string, ...any) {}
	}
	for _, cmd := range []string{"sbatch", "squeue", "scancel", "sinfo"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return nil, fmt.Errorf("%w: %s is not on PATH: install Slurm's client commands (Debian: slurm-client) or run with --executor local", ErrUnavailable, cmd)
		}
	}
	d := &Dispatcher{
		cfg:     cfg,
		name:    fmt.Sprintf("zorepro-%016x", xxhash.Sum64String(store)),
		dir:     filepath.Join(store, "slurm"),
		pending: map[string][]*attempt{},
		live:    map[string]*attempt{},
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	for _, dir := range []string{d.dir, cfg.LogDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	if _, err := run(ctx, "sinfo", "-h", "-o", "%P"); err != nil {
		return nil, fmt.Errorf("%w: the controller does not answer: %w", ErrUnavailable, err)
	}
	if cfg.Partition != "" {
		out, err := run(ctx, "sinfo", "-h", "-p", cfg.Partition, "-o", "%P")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		if strings.TrimSpace(out) == "" {
			all, _ := run(ctx, "sinfo", "-h", "-o", "%P")
			return nil, fmt.Errorf("%w: partition %q does not exist (sinfo lists: %s)", ErrUnavailable, cfg.Partition, strings.Join(strings.Fields(all), ", "))
		}
	}
	if err := d.cancelLeftovers(ctx); err != nil {
		return nil, err
	}
	go d.follow()
	return d, nil
}

// Name is the job name of this store's jobs (for squeue --name).
func (d *Dispatcher) Name() string { return d.name }

// cancelLeftovers cancels the jobs of this store that are still queued or
// running (a coordinator killed without cancelling them) and waits until
// none is left, so that no attempt file is written while the engine reads
// it.
func (d *Dispatcher) cancelLeftovers(ctx context.Context) error {
	states, err := d.states(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	var left []string
	for id, st := range states {
		if !final(st) {
			left = append(left, id)
		}
	}
	if len(left) == 0 {
		return nil
	}
	slices.Sort(left)
	d.cfg.Log("cancelling %d job(s) an earlier coordinator of this store left behind: %s", len(left), strings.Join(left, " "))
	if _, err := run(ctx, "scancel", "--name", d.name); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	for deadline := time.Now().Add(3 * time.Minute); ; {
		states, err := d.states(ctx)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		busy := 0
		for _, st := range states {
			if !final(st) {
				busy++
			}
		}
		if busy == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %d job(s) named %s are still not gone 3 minutes after scancel", ErrUnavailable, busy, d.name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d.cfg.Poll):
		}
	}
}

// Close stops following jobs. Attempts still in flight are not cancelled;
// cancel their Dispatch contexts first.
func (d *Dispatcher) Close() error {
	close(d.quit)
	<-d.done
	return nil
}

// Dispatch submits the attempt (in a job array with the attempts of its
// stage that arrive within Linger) and waits until its job has ended. If
// ctx is cancelled, the job is cancelled and followed until it has ended.
func (d *Dispatcher) Dispatch(ctx context.Context, a pipeline.Attempt) (pipeline.Ended, error) {
	at := &attempt{a: a, end: make(chan result, 1)}
	d.mu.Lock()
	d.pending[a.Stage] = append(d.pending[a.Stage], at)
	if d.timer == nil {
		d.timer = time.AfterFunc(d.cfg.Linger, d.submit)
	}
	d.mu.Unlock()
	select {
	case r := <-at.end:
		return r.ended, r.err
	case <-ctx.Done():
	}
	d.mu.Lock()
	if i := slices.Index(d.pending[a.Stage], at); i >= 0 { // not submitted yet
		d.pending[a.Stage] = slices.Delete(d.pending[a.Stage], i, i+1)
		d.mu.Unlock()
		return pipeline.Ended{State: "NOT_SUBMITTED"}, ctx.Err()
	}
	d.mu.Unlock()
	d.cancelJob(at)
	r := <-at.end
	return r.ended, r.err
}

// cancelJob sends scancel to an attempt's job once it has an ID (an
// attempt being submitted is cancelled by submit itself).
func (d *Dispatcher) cancelJob(at *attempt) {
	d.mu.Lock()
	at.cancel = true
	id := at.id
	d.mu.Unlock()
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	if _, err := run(ctx, "scancel", id); err != nil {
		d.cfg.Log("scancel %s: %v", id, err)
	}
}

// maxArray is the most elements of one job array (Slurm's default
// MaxArraySize is 1001).
const maxArray = 1000

// submit sends every pending attempt, one job array per stage (in stage
// order) and at most maxArray elements each.
func (d *Dispatcher) submit() {
	d.mu.Lock()
	pending := d.pending
	d.pending = map[string][]*attempt{}
	d.timer = nil
	d.mu.Unlock()
	for _, stage := range slices.Sorted(maps.Keys(pending)) {
		ats := pending[stage]
		for len(ats) > 0 {
			n := min(len(ats), maxArray)
			d.submitArray(stage, ats[:n])
			ats = ats[n:]
		}
	}
}

// submitArray submits one job array whose element i runs ats[i].
func (d *Dispatcher) submitArray(stage string, ats []*attempt) {
	d.mu.Lock()
	d.batches++
	base := filepath.Join(d.dir, fmt.Sprintf("batch-%d-%d", os.Getpid(), d.batches))
	d.mu.Unlock()
	var list bytes.Buffer
	for _, at := range ats {
		list.WriteString(at.a.Spec + "\n")
	}
	script := fmt.Sprintf("#!/bin/sh\n# %s: %d attempt(s) of stage %s\nspec=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" %s)\nexec %s worker --jobs %d \"$spec\"\n",
		d.name, len(ats), stage, shellQuote(base+".list"), shellQuote(d.cfg.Binary), d.cfg.CPUs)
	fail := func(err error) {
		os.Remove(base + ".list")
		os.Remove(base + ".sh")
		for _, at := range ats {
			at.end <- result{err: err}
		}
	}
	if err := atomicfile.WriteFile(base+".list", list.Bytes()); err != nil {
		fail(err)
		return
	}
	if err := atomicfile.WriteFile(base+".sh", []byte(script)); err != nil {
		fail(err)
		return
	}
	args := []string{"--parsable", "--job-name", d.name, "--array", fmt.Sprintf("0-%d", len(ats)-1),
		"--output", filepath.Join(d.cfg.LogDir, "%A_%a.out"), "--chdir", d.cfg.Store, // the worker moves to its spec's directory
		"--cpus-per-task", strconv.Itoa(d.cfg.CPUs), "--kill-on-invalid-dep=yes"}
	for _, o := range [][2]string{{"--partition", d.cfg.Partition}, {"--account", d.cfg.Account}, {"--time", d.cfg.Time}, {"--mem", d.cfg.Mem}} {
		if o[1] != "" {
			args = append(args, o[0], o[1])
		}
	}
	args = append(args, d.cfg.Args...)
	args = append(args, base+".sh")
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	out, err := run(ctx, "sbatch", args...)
	if err != nil {
		fail(fmt.Errorf("%w: stage %s, %d attempt(s): %w", ErrSubmit, stage, len(ats), err))
		return
	}
	job, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if _, err := strconv.ParseUint(job, 10, 64); err != nil {
		fail(fmt.Errorf("%w: sbatch printed %q, not a job ID", ErrSubmit, out))
		return
	}
	d.cfg.Log("submitted job %s: %d attempt(s) of stage %s", job, len(ats), stage)
	var cancelled []string
	b := &batch{base: base, left: len(ats)}
	d.mu.Lock()
	for i, at := range ats {
		at.batch = b
		at.id = fmt.Sprintf("%s_%d", job, i)
		at.log = filepath.Join(d.cfg.LogDir, fmt.Sprintf("%s_%d.out", job, i))
		d.live[at.id] = at
		if at.cancel {
			cancelled = append(cancelled, at.id)
		}
	}
	d.mu.Unlock()
	for _, id := range cancelled {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		run(ctx, "scancel", id)
		cancel()
	}
}

// follow polls squeue for the attempts in flight and reports each one's end.
func (d *Dispatcher) follow() {
	defer close(d.done)
	tick := time.NewTicker(d.cfg.Poll)
	defer tick.Stop()
	missing := map[string]int{}
	for {
		select {
		case <-d.quit:
			return
		case <-tick.C:
		}
		d.mu.Lock()
		n := len(d.live)
		d.mu.Unlock()
		if n == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		states, err := d.states(ctx)
		cancel()
		d.mu.Lock()
		if err != nil {
			if d.failing.IsZero() {
				d.failing = time.Now()
				d.cfg.Log("squeue failed (%v); retrying", err)
			}
			if time.Since(d.failing) > d.cfg.LostAfter {
				for id, at := range d.live {
					d.ended(at, result{err: fmt.Errorf("%w: squeue has failed for %s while job %s ran: %w", ErrLost, d.cfg.LostAfter, id, err)})
				}
			}
			d.mu.Unlock()
			continue
		}
		d.failing = time.Time{}
		for id, at := range d.live {
			st, ok := states[id]
			if !ok {
				// Not listed: purged after MinJobAge (missed by slow
				// polls) or never listed; give it a few polls.
				if missing[id]++; missing[id] < 5 {
					continue
				}
				st = "GONE"
			}
			if !final(st) {
				continue
			}
			delete(missing, id)
			d.ended(at, result{ended: pipeline.Ended{State: st, Log: at.log}})
		}
		d.mu.Unlock()
	}
}

// states lists the jobs named d.name, one entry per array element:
// "<job>_<index>" (or "<job>" for a job that is no array) → state.
func (d *Dispatcher) states(ctx context.Context) (map[string]string, error) {
	out, err := run(ctx, "squeue", "-h", "-r", "-t", "all", "--name", d.name, "-o", "%i %T")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if id, st, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			m[id] = st
		}
	}
	return m, nil
}

// final reports whether a job state is one a job never leaves.
func final(state string) bool {
	switch state {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "GONE":
		return true
	}
	return false
}

// run runs a Slurm command and returns its standard output; the error
// carries its standard error.
func run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "", fmt.Errorf("%s did not answer within %s (is slurmctld running and SLURM_CONF right?)", name, commandTimeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("%s: %s", name, msg)
	}
	return stdout.String(), nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

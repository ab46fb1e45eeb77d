package slurm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"zorepro/pipeline"
)

// Config is how jobs are submitted and followed. Zero fields take the
// defaults noted.
type Config struct {
	// Binary is the pipeline binary the runners run ("": this one); DAG
	// is the dag file the run loaded. Both are copied into the store
	// (content-addressed) at Open, and the runners run the copies.
	Binary, DAG string
	// Store is the store root (on the shared file system); its resolved
	// path and the user name this store's jobs.
	Store     string
	Partition string   // sbatch --partition ("": the cluster's default)
	Account   string   // sbatch --account
	Time      string   // sbatch --time, a runner's time limit (e.g. 2:00:00; "": the partition's)
	CPUs      int      // sbatch --cpus-per-task, a runner's worker threads (0: 1)
	Mem       string   // sbatch --mem (e.g. 4G; "": the partition's default)
	Args      []string // more sbatch arguments, as given
	// LogDir receives one log per runner, <job>_<index>.out ("":
	// <store>/slurm/logs).
	LogDir string
	// MaxJobs is the most runner jobs queued or running at once (0: 100).
	MaxJobs int
	// Poll is the time between two squeue calls (0: 2s). Attempts'
	// ends are seen sooner, from the runners' end markers.
	Poll time.Duration
	// Idle is how long a runner waits for another attempt before it
	// exits (0: 20s).
	Idle time.Duration
	// LostAfter is how long the controller may fail to answer before an
	// attempt that shows no sign of life meanwhile fails (ErrLost), and
	// how long a submission is retried (0: 10m).
	LostAfter time.Duration
	// StallAfter is how long the run may make no progress at all (no
	// runner starts, no attempt is taken, ends or writes) before the
	// attempts in flight fail (ErrStalled) (0: 2h).
	StallAfter time.Duration
	// Log receives one line per notable event: submissions, pending
	// reasons, retries, adoption (nil: discard).
	Log func(format string, args ...any)
}

// Dispatcher runs attempts on runner jobs and follows them.
type Dispatcher struct {
	cfg    Config
	name   string   // the job name of this store's runners
	user   string   // whose jobs they are
	root   string   // <store>/slurm
	build  buildDir // the build this coordinator's runners serve
	script string
	start  time.Time

	mu         sync.Mutex
	seq        int
	live       map[string]*attempt     // ticket → attempt in flight
	runners    map[string]*runnerState // job ID → a runner of this store, any build
	gone       map[string]bool         // runners seen ended (squeue lists them a while longer)
	adoptable  map[string]claimed      // spec path → a live runner's claimed ticket, found by Open
	submitting int                     // runners being submitted
	progress   time.Time               // the run's last sign of progress
	failing    time.Time               // since when squeue fails (zero: it answers)
	blocked    time.Time               // no submission before this (after a permanent sbatch error)
	queuedAt   time.Time               // when the queue last held a ticket
	halt       error                   // why every attempt fails at once (ErrStalled)
	said       string                  // the last runner summary logged
	saidAt     time.Time
	stats      overhead

	ctx  context.Context // ends with Close: background commands
	end  context.CancelFunc
	wake chan struct{}
	quit chan struct{}
	done sync.WaitGroup
}

var (
	_ pipeline.Dispatcher = (*Dispatcher)(nil)
	_ pipeline.Adopter    = (*Dispatcher)(nil)
)

// attempt is one attempt in flight: queued, or claimed by a runner.
type attempt struct {
	a      pipeline.Attempt
	ticket string
	build  buildDir
	runner string    // the runner that claimed it ("" while queued or unknown)
	queued time.Time // when its ticket was published
	sign   time.Time // its last sign of life (queued, claimed, its file grew)
	size   int64     // its attempt file's size at the last look
	end    chan result
}

type result struct {
	ended pipeline.Ended
	err   error
}

// claimed is a ticket a live runner holds.
type claimed struct {
	build          buildDir
	runner, ticket string
}

// Defaults of Config's zero fields.
const (
	defaultMaxJobs    = 100
	defaultPoll       = 2 * time.Second
	defaultIdle       = 20 * time.Second
	defaultLostAfter  = 10 * time.Minute
	defaultStallAfter = 2 * time.Hour
	// markerPoll is how often the coordinator looks for end markers.
	markerPoll = 100 * time.Millisecond
	// cancelWait bounds how long a cancelled attempt is waited for.
	cancelWait = 15 * time.Second
	// maxArray is the most elements of one job array (Slurm's default
	// MaxArraySize is 1001).
	maxArray = 1000
)

// Open checks that Slurm can take jobs (commands installed, controller
// answering, partition present), copies the binary and the dag file into
// the store, and takes over what an earlier coordinator of the same store
// left: its runners are adopted (the attempts they run are waited for,
// through Adopt), its queued tickets withdrawn. Close stops it.
func Open(ctx context.Context, cfg Config) (*Dispatcher, error) {
	if err := cfg.defaults(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	for _, cmd := range []string{"sbatch", "squeue", "scancel", "sinfo"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return nil, fmt.Errorf("%w: %s is not on PATH: install Slurm's client commands (Debian: slurm-client) or run with --executor local", ErrUnavailable, cmd)
		}
	}
	u, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("%w: who runs the jobs: %w", ErrUnavailable, err)
	}
	d := &Dispatcher{
		cfg: cfg, user: u.Username, root: filepath.Join(cfg.Store, "slurm"), start: time.Now(),
		name:      fmt.Sprintf("zorepro-%012x", xxhash.Sum64String(u.Username+"\x00"+cfg.Store)&(1<<48-1)),
		live:      map[string]*attempt{},
		runners:   map[string]*runnerState{},
		gone:      map[string]bool{},
		adoptable: map[string]claimed{},
		progress:  time.Now(),
		queuedAt:  time.Now(),
		wake:      make(chan struct{}, 1),
		quit:      make(chan struct{}),
	}
	if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
		return nil, err
	}
	if err := d.checkCluster(ctx); err != nil {
		return nil, err
	}
	if err := d.freezeBuild(); err != nil {
		return nil, err
	}
	if err := d.takeOver(ctx); err != nil {
		return nil, err
	}
	d.stats.load(filepath.Join(d.root, "overhead.json"))
	d.ctx, d.end = context.WithCancel(context.Background())
	d.done.Add(2)
	go d.every(markerPoll, d.wake, d.lookAtMarkers)
	go d.every(d.cfg.Poll, nil, d.pollJobs) // one squeue call per Poll
	return d, nil
}

func (c *Config) defaults() error {
	if c.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		c.Binary = exe
	}
	store, err := filepath.Abs(c.Store)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(store, 0o755); err != nil {
		return err
	}
	// The store's resolved path names its jobs: the same store reached
	// through a symbolic link is the same store.
	if c.Store, err = filepath.EvalSymlinks(store); err != nil {
		return err
	}
	if c.LogDir == "" {
		c.LogDir = filepath.Join(c.Store, "slurm", "logs")
	}
	if c.LogDir, err = filepath.Abs(c.LogDir); err != nil {
		return err
	}
	c.CPUs = max(c.CPUs, 1)
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Poll, defaultPoll)
	def(&c.Idle, defaultIdle)
	def(&c.LostAfter, defaultLostAfter)
	def(&c.StallAfter, defaultStallAfter)
	if c.MaxJobs <= 0 {
		c.MaxJobs = defaultMaxJobs
	}
	if c.Log == nil {
		c.Log = func(string, ...any) {}
	}
	return nil
}

// checkCluster checks, within seconds, that the controller answers and the
// partition exists.
func (d *Dispatcher) checkCluster(ctx context.Context) error {
	if _, err := run(ctx, "sinfo", "-h", "-o", "%P"); err != nil {
		return fmt.Errorf("%w: the controller does not answer: %w", ErrUnavailable, err)
	}
	if p := d.cfg.Partition; p != "" {
		out, err := run(ctx, "sinfo", "-h", "-p", p, "-o", "%P")
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		if strings.TrimSpace(out) == "" {
			all, _ := run(ctx, "sinfo", "-h", "-o", "%P")
			return fmt.Errorf("%w: partition %q does not exist (sinfo lists: %s)", ErrUnavailable, p, strings.Join(strings.Fields(all), ", "))
		}
	}
	return nil
}

// freezeBuild copies the binary and the dag file into the store and
// writes the runners' batch script.
func (d *Dispatcher) freezeBuild() error {
	bin, binSum, err := freeze(d.cfg.Binary, filepath.Join(d.root, "bin"), "pipeline-", "", 0o755)
	if err != nil {
		return fmt.Errorf("%w: the binary: %w", ErrUnavailable, err)
	}
	dag, dagSum, err := freeze(d.cfg.DAG, filepath.Join(d.root, "dag"), "", ".yaml", 0o644)
	if err != nil {
		return fmt.Errorf("%w: the dag file: %w", ErrUnavailable, err)
	}
	d.build = buildDir(filepath.Join(d.root, "runs", fmt.Sprintf("%s-%s-c%d", binSum, dagSum, d.cfg.CPUs)))
	if err := d.build.make(); err != nil {
		return err
	}
	d.script = filepath.Join(string(d.build), "runner.sh")
	script := fmt.Sprintf("#!/bin/sh\n# A runner of store %s (job name %s): it takes attempts from\n# %s until none comes for %s.\nexec %s worker --runner %s --dag %s --jobs %d --idle %s\n",
		d.cfg.Store, d.name, d.build.queue(), d.cfg.Idle, shellQuote(bin), shellQuote(string(d.build)), shellQuote(dag), d.cfg.CPUs, d.cfg.Idle)
	return publish(d.script, []byte(script))
}

// takeOver adopts the runners an earlier coordinator of this store left
// (their claimed attempts become adoptable), withdraws its queued tickets
// and removes what no live runner needs.
func (d *Dispatcher) takeOver(ctx context.Context) error {
	jobs, err := d.jobs(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	live := map[string]bool{}
	for _, j := range jobs {
		if final(j.State) {
			continue
		}
		b := buildDir(filepath.Dir(j.Script))
		if filepath.Base(j.Script) != "runner.sh" || filepath.Dir(string(b)) != filepath.Join(d.root, "runs") {
			d.cfg.Log("cancelling job %s of this store, which runs %s rather than a runner", j.ID, j.Script)
			retry(ctx, commandTimeout, d.cfg.Log, "scancel", j.ID)
			continue
		}
		live[j.ID] = true
		d.runners[j.ID] = &runnerState{job: j, build: b, submitted: time.Now(), seen: time.Now()}
	}
	inFlight := 0
	for _, b := range buildDirs(filepath.Join(d.root, "runs")) {
		for _, t := range names(b.queue()) {
			b.withdraw(t) // its coordinator is gone; the engine dispatches the task anew
		}
		keep := map[string]bool{}
		for _, r := range b.runners() {
			if !live[r] {
				os.RemoveAll(b.claimed(r)) // what it left is in its attempt files
				continue
			}
			for _, t := range names(b.claimed(r)) {
				if _, ended, _ := b.readMarker(t); ended {
					continue
				}
				if spec, err := b.specOf(r, t); err == nil {
					d.adoptable[strings.TrimSpace(spec)] = claimed{build: b, runner: r, ticket: t}
					keep[t] = true
					inFlight++
				}
			}
		}
		for _, dir := range []string{"ended", "cancel"} {
			for _, t := range names(filepath.Join(string(b), dir)) {
				if !keep[t] {
					os.Remove(filepath.Join(string(b), dir, t))
				}
			}
		}
		if b != d.build && len(b.runners()) == 0 {
			os.RemoveAll(string(b))
		}
	}
	if len(live) > 0 {
		d.cfg.Log("adopting %d runner job(s) an earlier coordinator of this store left, running %d attempt(s)", len(live), inFlight)
	}
	var keep []string
	for _, b := range buildDirs(filepath.Join(d.root, "runs")) {
		keep = append(keep, filepath.Base(string(b)))
	}
	pruneCopies(filepath.Join(d.root, "bin"), keep)
	pruneCopies(filepath.Join(d.root, "dag"), keep)
	return nil
}

// Name is the job name of this store's runners (squeue --name).
func (d *Dispatcher) Name() string { return d.name }

// User is whose jobs they are (squeue --user).
func (d *Dispatcher) User() string { return d.user }

// Dispatch queues the attempt for a runner (starting runners as needed)
// and waits until it has ended. If ctx is cancelled, the attempt is
// withdrawn from the queue or, if a runner has it, stopped (it records its
// latest checkpoint) and waited for, at most cancelWait.
func (d *Dispatcher) Dispatch(ctx context.Context, a pipeline.Attempt) (pipeline.Ended, error) {
	d.mu.Lock()
	if d.halt != nil {
		d.mu.Unlock()
		return pipeline.Ended{}, d.halt
	}
	if len(d.live) == 0 {
		d.progress = time.Now() // the stall clock starts with work in flight
	}
	d.seq++
	ticket := fmt.Sprintf("%013d-%06d-%s", d.start.UnixMilli(), d.seq, strings.ReplaceAll(a.Name, "/", "-"))
	now := time.Now()
	at := &attempt{a: a, ticket: ticket, build: d.build, queued: now, sign: now, end: make(chan result, 1)}
	d.live[ticket] = at
	d.mu.Unlock()
	if err := d.build.enqueue(ticket, a.Spec); err != nil {
		d.mu.Lock()
		delete(d.live, ticket)
		d.mu.Unlock()
		return pipeline.Ended{}, err
	}
	d.poke()
	return d.await(ctx, at)
}

// Adopt takes over the attempt if a runner of an earlier coordinator has
// it (Open found it claimed) and waits for it as Dispatch does.
func (d *Dispatcher) Adopt(ctx context.Context, a pipeline.Attempt) (pipeline.Ended, bool, error) {
	d.mu.Lock()
	c, ok := d.adoptable[a.Spec]
	delete(d.adoptable, a.Spec)
	if r := d.runners[c.runner]; !ok || r == nil || d.gone[c.runner] {
		d.mu.Unlock()
		return pipeline.Ended{}, false, nil
	}
	now := time.Now()
	at := &attempt{a: a, ticket: c.ticket, build: c.build, runner: c.runner, queued: now, sign: now, end: make(chan result, 1)}
	d.live[c.ticket] = at
	d.mu.Unlock()
	d.poke()
	e, err := d.await(ctx, at)
	return e, true, err
}

// await waits for an attempt's end, or stops it when ctx ends.
func (d *Dispatcher) await(ctx context.Context, at *attempt) (pipeline.Ended, error) {
	select {
	case r := <-at.end:
		return r.ended, r.err
	case <-ctx.Done():
	}
	if at.build.withdraw(at.ticket) {
		d.mu.Lock()
		delete(d.live, at.ticket)
		d.mu.Unlock()
		return pipeline.Ended{State: "NOT_STARTED"}, ctx.Err()
	}
	publish(at.build.cancel(at.ticket), nil) // the runner stops it within a second
	select {
	case r := <-at.end:
		return r.ended, r.err
	case <-time.After(cancelWait):
	}
	d.mu.Lock()
	delete(d.live, at.ticket)
	runner := at.runner
	d.mu.Unlock()
	d.cfg.Log("attempt %s (runner %s) did not confirm within %s that it stopped; its runner is cancelled as the run ends", at.a.Name, runner, cancelWait)
	return pipeline.Ended{State: "CANCELLING"}, ctx.Err()
}

// poke makes the followers look at once (a new ticket may need a runner).
func (d *Dispatcher) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// finish reports an attempt's end (d.mu held).
func (d *Dispatcher) finish(at *attempt, e pipeline.Ended, err error) {
	if d.live[at.ticket] != at {
		return
	}
	delete(d.live, at.ticket)
	at.end <- result{ended: e, err: err}
}

// logOf is a runner's log file.
func (d *Dispatcher) logOf(runner string) string {
	if runner == "" {
		return ""
	}
	return filepath.Join(d.cfg.LogDir, runner+".out")
}

// Close stops following, cancels this store's runner jobs and waits,
// boundedly, until squeue shows them gone. Attempts still in flight are
// not waited for; cancel their Dispatch contexts first.
func (d *Dispatcher) Close() error {
	close(d.quit)
	d.end()
	d.done.Wait()
	d.stats.save(filepath.Join(d.root, "overhead.json"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	left := d.cancelAll(ctx)
	if len(left) > 0 {
		return fmt.Errorf("slurm: %d runner job(s) of this store are not confirmed gone: %s (cancel them with: scancel --name %s --user %s)", len(left), strings.Join(left, " "), d.name, d.user)
	}
	for _, r := range d.build.runners() {
		os.RemoveAll(d.build.claimed(r))
	}
	return nil
}

// cancelAll sends scancel for this store's jobs until squeue lists none
// that has not ended (or ctx ends) and returns those still listed.
func (d *Dispatcher) cancelAll(ctx context.Context) []string {
	var left []string
	for {
		jobs, err := d.jobs(ctx)
		if err == nil {
			left = left[:0]
			for id, j := range jobs {
				if !final(j.State) {
					left = append(left, id)
				}
			}
			slices.Sort(left)
			if len(left) == 0 {
				return nil
			}
			run(ctx, "scancel", "--name", d.name, "--user", d.user)
		}
		select {
		case <-ctx.Done():
			return left
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// cancelRunners sends scancel for some runners (best effort: watchJobs
// sees them end).
func (d *Dispatcher) cancelRunners(ids []string) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	if _, err := retry(ctx, commandTimeout, d.cfg.Log, "scancel", ids...); err != nil {
		d.cfg.Log("scancel %s: %v (retried at the next poll)", strings.Join(ids, " "), err)
	}
}

// parseJobID reads the job ID sbatch --parsable prints.
func parseJobID(out string) (string, error) {
	job, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if _, err := strconv.ParseUint(job, 10, 64); err != nil {
		return "", fmt.Errorf("%w: sbatch printed %q, not a job ID", ErrSubmit, out)
	}
	return job, nil
}

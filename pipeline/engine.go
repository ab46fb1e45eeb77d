package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"zorepro/pipeline/atomicfile"
	"zorepro/pipeline/crashpoint"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
)

// Options control one run.
type Options struct {
	Jobs               int           // workers; at least 1
	Force              bool          // ignore the action cache
	CheckpointInterval time.Duration // minimum time between checkpoints of one task
	// SnapshotInterval is how often a running run refreshes the event log's
	// snapshot, which read-only commands of other processes read while the
	// run holds the log (0: never). The first comes after one interval, so
	// short runs copy nothing; an interval is stretched to 20 times the
	// last copy's duration, so copying a large log takes at most 5% of it.
	SnapshotInterval time.Duration
	FiguresDir       string    // where plot outputs are exported ("" = none)
	Log              io.Writer // progress and log lines (nil = discard)
	Terminal         bool      // draw a progress bar instead of log lines
	Args             []string  // recorded with the run
	// Predicted is each task's predicted time, by path (the dry run's,
	// provenance.Schedule.Times): the progress's time left weighs the
	// tasks by it. Display only.
	Predicted map[string]time.Duration
	Profile   string // recorded with the run
	// MaxAttempts bounds the attempts of a task, in a row, that a
	// Dispatcher runs and that end killed without a new checkpoint (0: 4).
	MaxAttempts int
	// NoCohorts runs every task alone: the tasks of a cohort (task.Cohort)
	// then compute their shared values each for itself, as on a cluster.
	// The bits are the same; it is for measurements and tests.
	NoCohorts bool
	// StopGrace is how long a cancelled run waits for its running tasks to
	// notice (0: DefaultStopGrace). A task still inside one long step after
	// it (an eigendecomposition at d = 1000, a whole evaluation) is
	// recorded as interrupted and left behind: the run returns, so that
	// Ctrl-C stops it within seconds; a rerun resumes the task from its
	// last checkpoint.
	StopGrace time.Duration
}

// DefaultStopGrace is Options.StopGrace's default.
const DefaultStopGrace = time.Second

// Engine runs a plan.
type Engine struct {
	Plan     *dag.Plan
	Store    *store.Store
	Events   *events.Log
	Code     CodeIdentity
	Platform Platform
	Opt      Options
	// Dispatcher, if set, runs the tasks that must execute in other
	// processes (see dispatch.go); nil runs them in this one.
	Dispatcher Dispatcher
}

// FigureFile is one exported figure file.
type FigureFile struct {
	Path string `json:"path"`
	ID   string `json:"id"`
}

// Result summarises a run. Task lists are in plan order.
type Result struct {
	Run         uint64                `json:"run"`
	Executed    []string              `json:"executed"`
	Cached      []string              `json:"cached"`
	Failed      []string              `json:"failed"`
	Skipped     []string              `json:"skipped"`
	Interrupted []string              `json:"interrupted,omitempty"`
	Figures     map[string]FigureFile `json:"figures"`
	Errors      map[string]string     `json:"errors,omitempty"`
}

type status int

const (
	pending status = iota
	running
	done
	cached
	failed
	skipped
	interrupted
)

type outcome struct {
	t      *dag.Task
	status status
	output string
	err    error
	// damaged names an upstream task whose output the task found missing
	// or corrupt in the store: the loop recomputes it, then retries.
	damaged string
	// release is set on the outcome that gives back the worker token its
	// task ran on: every task's but a cohort's (cohort.go) last.
	release bool
}

// Run executes the plan: cached tasks are reused, the rest run on up to
// Opt.Jobs workers. It returns ErrTaskFailed, ErrInterrupted or
// ErrWriteFailed (wrapped) alongside a complete Result.
func (e *Engine) Run(ctx context.Context) (*Result, error) {
	if e.Opt.Jobs < 1 {
		e.Opt.Jobs = 1
	}
	info, _ := json.Marshal(map[string]any{
		"args": e.Opt.Args, "profile": e.Opt.Profile, "dag": e.Plan.File, "jobs": e.Opt.Jobs,
		"go": e.Platform.GoVersion, "goarch": e.Platform.GOARCH, "tasks": len(e.Plan.Tasks),
	})
	run, err := e.Events.BeginRun(info, time.Now().UnixNano())
	if err != nil {
		return nil, fmt.Errorf("begin run: %w", err)
	}
	rctx, stop := context.WithCancel(ctx) // stopped early by a failed write
	defer stop()
	r := &runner{
		e: e, run: run, ctx: rctx, stop: stop,
		tokens:    make(chan struct{}, e.Opt.Jobs),
		state:     make([]status, len(e.Plan.Tasks)),
		outputs:   map[string]string{},
		results:   make(chan outcome),
		abandoned: make(chan struct{}),
		prog:      newProgress(e.Opt.Log, e.Opt.Terminal, len(e.Plan.Tasks)),
	}
	paths := make([]string, len(e.Plan.Tasks))
	for i, t := range e.Plan.Tasks {
		paths[i] = t.Path
	}
	r.prog.weigh(paths, e.Opt.Predicted)
	w := e.Events.NewWriter(events.WriterOptions{OnError: r.writeFailed})
	r.w, r.flush, r.checkpoints = w, w.Flush, e.Events
	stopSnapshots := e.snapshots()
	res := r.loop()
	res.Run = run
	r.prog.finish()
	if err := e.exportFigures(res, r.outputs); err != nil {
		res.Errors["figures"] = err.Error()
		res.Failed = append(res.Failed, "figures")
	}
	state := events.RunFinished
	var runErr error
	switch {
	case r.writeError() != nil:
		state = events.RunInterrupted
	case len(res.Interrupted) > 0 || ctx.Err() != nil:
		state, runErr = events.RunInterrupted, ErrInterrupted
	case len(res.Failed) > 0:
		state, runErr = events.RunFailed, ErrTaskFailed
	}
	sum, _ := json.Marshal(map[string]int{"executed": len(res.Executed), "cached": len(res.Cached), "failed": len(res.Failed), "skipped": len(res.Skipped), "interrupted": len(res.Interrupted)})
	w.Append(events.Event{Type: events.TypeRun, Run: run, State: state, Time: time.Now().UnixNano(), Data: sum})
	cerr := w.Close()
	stopSnapshots()
	if err := r.writeError(); err != nil {
		return res, fmt.Errorf("%w: %w. The run was stopped; progress up to the last successful write is kept "+
			"(store %s, event log %s). Fix the cause (e.g. free disk space) and run again to resume",
			ErrWriteFailed, err, e.Store.Root(), e.Events.Path())
	}
	if cerr != nil {
		return res, fmt.Errorf("event log %s: %w", e.Events.Path(), cerr)
	}
	return res, runErr
}

// One is the outcome of RunOne.
type One struct {
	// Run is the run RunOne recorded.
	Run uint64
	// Output is the task's output ID when it finished.
	Output string
	// Stopped reports that the task stopped at RunOne's until.
	Stopped bool
	// Err is the task's own failure, if it failed.
	Err error
}

// RunOne executes t alone, as a run of its own recorded with info, from
// the given input outputs (task path → output ID, present in e.Store),
// ignoring the action cache; until > 0 stops the task once it records that
// iteration. Replay and verify re-execute recorded tasks with it. It
// returns an error wrapping ErrInterrupted if ctx was cancelled, and the
// log's error if the run could not be recorded.
func (e *Engine) RunOne(ctx context.Context, t *dag.Task, deps map[string]string, until int64, info json.RawMessage) (*One, error) {
	run, err := e.Events.BeginRun(info, time.Now().UnixNano())
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := e.Events.NewWriter(events.WriterOptions{})
	r := &runner{
		e: e, run: run, w: w, ctx: tctx,
		tokens:    make(chan struct{}, max(e.Opt.Jobs, 1)),
		state:     make([]status, len(e.Plan.Tasks)),
		outputs:   map[string]string{},
		prog:      newProgress(nil, false, 1),
		stopAfter: until, stop: cancel, checkpoints: e.Events, flush: w.Flush,
	}
	r.tokens <- struct{}{} // the task's own worker token, as the scheduler holds it
	o := r.execute(t, deps)
	state := events.RunFinished
	if o.status != done {
		state = events.RunInterrupted
	}
	w.Append(events.Event{Type: events.TypeRun, Run: run, State: state, Time: time.Now().UnixNano()})
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("event log %s: %w", e.Events.Path(), err)
	}
	one := &One{Run: run}
	switch {
	case o.status == done:
		one.Output = o.output
	case o.status == interrupted && until > 0 && ctx.Err() == nil:
		one.Stopped = true
	case o.status == interrupted:
		return one, ErrInterrupted
	default:
		one.Err = o.err
	}
	return one, nil
}

// snapshots removes the snapshot a previous run may have left (killed
// before it could remove it), then refreshes the log's snapshot every
// Opt.SnapshotInterval until the returned function is called; that
// function removes the snapshot, since the log itself is readable once
// the run releases it. A snapshot is thus always of the run in progress.
func (e *Engine) snapshots() (stop func()) {
	warn := func(err error) {
		if err != nil && e.Opt.Log != nil {
			fmt.Fprintf(e.Opt.Log, "warning: %v\n", err)
		}
	}
	warn(e.Events.RemoveSnapshot())
	if e.Opt.SnapshotInterval <= 0 {
		return func() {}
	}
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		wait := e.Opt.SnapshotInterval
		for {
			select {
			case <-time.After(wait):
				t0 := time.Now()
				warn(e.Events.Snapshot())
				wait = max(e.Opt.SnapshotInterval, 20*time.Since(t0))
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
		warn(e.Events.RemoveSnapshot())
	}
}

type runner struct {
	e       *Engine
	run     uint64
	w       recorder
	ctx     context.Context
	tokens  chan struct{}
	state   []status
	outputs map[string]string // task path → output ID (done or cached)
	results chan outcome
	prog    *progress
	// abandoned is closed when a stopping run stops waiting for its running
	// tasks (Options.StopGrace): their workers then drop their outcomes.
	abandoned chan struct{}

	// stopAfter > 0 cancels the run (through stop) once a task records
	// that iteration: replay --until.
	stopAfter int64
	stop      context.CancelFunc

	writeErr atomic.Pointer[error] // the first failed write (writeFailed)

	// checkpoints finds a task's latest checkpoint: the event log, or, in a
	// worker, the one its spec names.
	checkpoints checkpointSource
	// flush commits every event recorded so far (nil: nothing to commit).
	flush func() error
}

// recorder takes a task's events: the event log's writer, or a worker's
// attempt file.
type recorder interface {
	Append(events.Event)
}

// checkpointSource finds the latest checkpoint of an action.
type checkpointSource interface {
	Checkpoint(action string) (events.CheckpointRecord, bool, error)
}

// writeFailed records a failed write to the store (any Store.Put error) or
// the event log (a commit error) and stops the run as an interrupt does:
// no task starts any more and running tasks stop at their next iteration
// boundary, since their work could no longer be recorded. Only the first
// error is kept. It is safe for concurrent use.
func (r *runner) writeFailed(err error) {
	if r.writeErr.CompareAndSwap(nil, &err) && r.stop != nil {
		r.stop()
	}
}

// writeError returns the error writeFailed recorded, or nil.
func (r *runner) writeError() error {
	if p := r.writeErr.Load(); p != nil {
		return *p
	}
	return nil
}

// graph is the loop's view of the plan: for every task, its downstream
// tasks, how many of its dependencies it still waits for, and the ready
// queue. Only the loop goroutine touches it.
type graph struct {
	tasks   []*dag.Task
	byPath  map[string]*dag.Task
	down    [][]*dag.Task
	waiting []int
	ready   []*dag.Task // sorted by index
	retried []bool      // a damaged input has been recomputed once
}

func newGraph(tasks []*dag.Task) *graph {
	g := &graph{
		tasks: tasks, byPath: map[string]*dag.Task{},
		down: make([][]*dag.Task, len(tasks)), waiting: make([]int, len(tasks)), retried: make([]bool, len(tasks)),
	}
	for _, t := range tasks {
		g.byPath[t.Path] = t
		g.waiting[t.Index] = len(t.Deps)
		for _, d := range t.Deps {
			g.down[d.Index] = append(g.down[d.Index], t)
		}
	}
	for _, t := range tasks {
		if g.waiting[t.Index] == 0 {
			g.push(t)
		}
	}
	return g
}

// push adds t to the ready queue in index order.
func (g *graph) push(t *dag.Task) {
	i := sort.Search(len(g.ready), func(i int) bool { return g.ready[i].Index > t.Index })
	g.ready = append(g.ready, nil)
	copy(g.ready[i+1:], g.ready[i:])
	g.ready[i] = t
}

// pop removes and returns the ready task of lowest index.
func (g *graph) pop() *dag.Task {
	t := g.ready[0]
	g.ready = g.ready[1:]
	return t
}

func (r *runner) loop() *Result {
	g := newGraph(r.e.Plan.Tasks)
	res := &Result{Figures: map[string]FigureFile{}, Errors: map[string]string{}}
	inflight := 0
	stopping := false
	var grace <-chan time.Time
	for {
		if r.ctx.Err() != nil {
			stopping = true
		}
		if inflight == 0 && (len(g.ready) == 0 || stopping) {
			break
		}
		if stopping && grace == nil && r.e.Dispatcher == nil {
			grace = time.After(cmp.Or(r.e.Opt.StopGrace, DefaultStopGrace))
		}
		var acquire chan<- struct{}
		if len(g.ready) > 0 && !stopping {
			acquire = r.tokens
		}
		select {
		case acquire <- struct{}{}:
			t := g.pop()
			if key := cohortKey(t); key != "" && r.e.Dispatcher == nil && !r.e.Opt.NoCohorts {
				if more := g.takeCohort(key); len(more) > 0 {
					r.startCohort(append([]*dag.Task{t}, more...))
					inflight += 1 + len(more)
					continue
				}
			}
			r.start(t)
			inflight++
		case o := <-r.results:
			if o.release {
				<-r.tokens
			}
			inflight--
			r.finish(g, o, res)
		case <-r.ctx.Done():
			stopping = true
		case <-grace:
			r.abandon()
			return r.result(res)
		}
	}
	return r.result(res)
}

// abandon records every running task as interrupted and stops waiting for
// them: a stopping run whose tasks did not notice within the grace period.
func (r *runner) abandon() {
	close(r.abandoned)
	for _, t := range r.e.Plan.Tasks {
		if r.state[t.Index] == running {
			r.state[t.Index] = interrupted
			r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateInterrupted, Time: time.Now().UnixNano()})
			r.prog.event("interrupted", t.Path, nil)
		}
	}
}

// start runs t on a worker goroutine, which reports its outcome on
// r.results.
func (r *runner) start(t *dag.Task) {
	r.state[t.Index] = running
	deps := map[string]string{}
	for _, d := range t.Deps {
		deps[d.Path] = r.outputs[d.Path]
	}
	go func() {
		o := r.execute(t, deps)
		o.release = true
		select {
		case r.results <- o:
		case <-r.abandoned:
		}
	}()
}

// finish records a task's outcome: a finished task releases its
// downstream tasks; a failed one skips them, unless it found an upstream
// output damaged, in which case that upstream reruns first (redo).
func (r *runner) finish(g *graph, o outcome, res *Result) {
	r.state[o.t.Index] = o.status
	switch o.status {
	case done, cached:
		r.outputs[o.t.Path] = o.output
		for _, d := range g.down[o.t.Index] {
			g.waiting[d.Index]--
			if g.waiting[d.Index] == 0 && r.state[d.Index] == pending {
				g.push(d)
			}
		}
	case failed:
		if o.damaged != "" && r.writeError() == nil && r.redo(g, o.t, o.damaged) {
			return
		}
		res.Errors[o.t.Path] = o.err.Error()
		if r.writeError() == nil { // else the run stops: descendants stay pending
			r.skip(g, o.t, o.t.Path)
		}
	}
	r.prog.event(o.status.String(), o.t.Path, o.err)
}

// skip marks every pending descendant of t skipped, because cause failed.
func (r *runner) skip(g *graph, t *dag.Task, cause string) {
	for _, d := range g.down[t.Index] {
		if r.state[d.Index] == pending {
			r.state[d.Index] = skipped
			r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: d.Path, State: events.StateSkipped, Time: time.Now().UnixNano(), Error: "upstream " + cause + " failed"})
			r.prog.event("skipped", d.Path, nil)
			r.skip(g, d, cause)
		}
	}
}

// redo recomputes the task at upPath, whose output t found damaged, and
// re-arms t (and every other pending downstream of it) to wait for it
// again. Once per task: a second failure is final.
func (r *runner) redo(g *graph, t *dag.Task, upPath string) bool {
	up := g.byPath[upPath]
	if up == nil || g.retried[t.Index] {
		return false
	}
	switch r.state[up.Index] {
	case done, cached:
		r.state[up.Index] = pending
		delete(r.outputs, up.Path)
		for _, d := range g.down[up.Index] {
			if d != t && r.state[d.Index] == pending {
				g.waiting[d.Index]++
			}
		}
		g.push(up)
		r.prog.logf("%s: the output of %s is damaged in the store; recomputing it", t.Path, up.Path)
	case pending, running: // already being recomputed for another task
	default:
		return false
	}
	g.retried[t.Index] = true
	g.waiting[t.Index]++
	r.state[t.Index] = pending
	return true
}

// result lists every task by its final state, in plan order.
func (r *runner) result(res *Result) *Result {
	for _, t := range r.e.Plan.Tasks {
		switch r.state[t.Index] {
		case done:
			res.Executed = append(res.Executed, t.Path)
		case cached:
			res.Cached = append(res.Cached, t.Path)
		case failed:
			res.Failed = append(res.Failed, t.Path)
		case skipped:
			res.Skipped = append(res.Skipped, t.Path)
		case interrupted:
			res.Interrupted = append(res.Interrupted, t.Path)
		}
	}
	for _, l := range []*[]string{&res.Executed, &res.Cached, &res.Failed, &res.Skipped} {
		if *l == nil {
			*l = []string{}
		}
	}
	return res
}

func (s status) String() string {
	return [...]string{"pending", "running", "done", "cached", "failed", "skipped", "interrupted"}[s]
}

// execute resolves one task: a verified cache hit, or a run.
func (r *runner) execute(t *dag.Task, deps map[string]string) outcome {
	return r.executeShared(t, deps, nil)
}

// executeShared is execute for a member of a cohort (share is nil for a
// task that runs alone).
func (r *runner) executeShared(t *dag.Task, deps map[string]string, share *member) (o outcome) {
	o.t = t
	defer func() {
		if p := recover(); p != nil {
			o.status, o.err = failed, fmt.Errorf("%s: panic: %v", t.Path, p)
			r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateFailed, Time: time.Now().UnixNano(), Error: o.err.Error()})
		}
	}()
	lines, err := Transcript(t, r.e.Code, r.e.Platform, deps)
	if err != nil {
		o.status, o.err = failed, err
		r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateFailed, Time: time.Now().UnixNano(), Error: err.Error()})
		return o
	}
	act := Action(lines)
	if !r.e.Opt.Force {
		if rec, ok, err := r.e.Events.Action(act.String()); err == nil && ok {
			if verr := r.e.VerifyOutput(rec.Output); verr == nil {
				r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateCached, Action: act.String(), Output: rec.Output, Time: time.Now().UnixNano()})
				o.status, o.output = cached, rec.Output
				return o
			} else {
				r.prog.logf("%s: cached output unusable (%v); recomputing", t.Path, verr)
			}
		}
	}
	r.prog.event("start", t.Path, nil) // only tasks that execute: cached ones are summed up
	if r.e.Dispatcher != nil {
		return r.dispatch(t, act, lines, deps)
	}
	return r.attempt(t, act, lines, deps, share)
}

// attempt runs t in this process, recording its events through r.w: the
// run's own work, or a worker's (Engine.Work).
func (r *runner) attempt(t *dag.Task, act ActionID, lines []string, deps map[string]string, share *member) (o outcome) {
	o.t = t
	r.w.Append(events.Event{Type: events.TypeTranscript, Run: r.run, Task: t.Path, Action: act.String(), Transcript: strings.Join(lines, "\n")})
	r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateStarted, Action: act.String(), Time: time.Now().UnixNano()})
	env, err := newTaskEnv(r, t, act, deps)
	env.share = share
	if err == nil {
		err = t.Runner.Run(r.ctx, env)
	}
	env.flushIters()
	env.recordStreams()
	if err == nil {
		var out string
		out, err = env.publish()
		if err == nil {
			crashpoint.Hit("engine.published")
			r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateDone, Action: act.String(), Output: out, Time: time.Now().UnixNano(), Data: env.doneData()})
			o.status, o.output = done, out
			return o
		}
	}
	if r.ctx.Err() != nil && errors.Is(err, r.ctx.Err()) {
		r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateInterrupted, Action: act.String(), Time: time.Now().UnixNano()})
		o.status, o.err = interrupted, err
		return o
	}
	o.status, o.err = failed, fmt.Errorf("%s: %w", t.Path, err)
	var data json.RawMessage
	if o.damaged = env.damagedInput(); o.damaged != "" {
		data, _ = json.Marshal(FailedData{DamagedInput: o.damaged})
	}
	r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateFailed, Action: act.String(), Time: time.Now().UnixNano(), Error: err.Error(), Data: data})
	return o
}

// FailedData is the data of a failed state event.
type FailedData struct {
	// DamagedInput names the upstream task whose output the task found
	// missing or corrupt in the store, if that is why it failed.
	DamagedInput string `json:"damaged_input,omitempty"`
}

// VerifyOutput checks that an output manifest and every output it names are
// present and intact in the store.
func (e *Engine) VerifyOutput(out string) error {
	_, err := e.Outputs(out)
	return err
}

// Manifest returns the entries of the output manifest out as it names
// them, without checking the entries themselves.
func (e *Engine) Manifest(out string) ([]OutputEntry, error) {
	id, err := store.ParseID(out)
	if err != nil {
		return nil, err
	}
	data, err := e.Store.Get(id)
	if err != nil {
		return nil, err
	}
	es, err := DecodeOutputs(data)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", out, err)
	}
	return es, nil
}

// Outputs returns the entries of the output manifest out, checking that the
// manifest and every entry it names are present and intact in the store.
// The error names the first bad entry and wraps store.ErrNotFound or
// store.ErrCorrupt.
func (e *Engine) Outputs(out string) ([]OutputEntry, error) {
	es, err := e.Manifest(out)
	if err != nil {
		return nil, err
	}
	for _, en := range es {
		if err := e.Store.Check(en.ID); err != nil {
			return nil, fmt.Errorf("output %s: entry %s: %w", out, en.Name, err)
		}
	}
	return es, nil
}

// FigureExporter is implemented by runners whose outputs are figure files
// to be copied under the figures directory.
type FigureExporter interface {
	ExportFigures() bool
}

func (e *Engine) exportFigures(res *Result, outputs map[string]string) error {
	if e.Opt.FiguresDir == "" {
		return nil
	}
	// Temp files of an export that was killed (a run holds the log's lock,
	// so no other export is writing here now).
	stale, _ := filepath.Glob(filepath.Join(e.Opt.FiguresDir, atomicfile.TempPrefix+"*"))
	for _, f := range stale {
		os.Remove(f)
	}
	if err := os.MkdirAll(e.Opt.FiguresDir, 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	var errs []error
	written := map[string][]exportedFile{} // this export's files, by task
	for _, t := range e.Plan.Tasks {
		fx, ok := t.Runner.(FigureExporter)
		out, have := outputs[t.Path]
		if !ok || !fx.ExportFigures() || !have {
			continue
		}
		es, err := e.Outputs(out)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.Path, err))
			continue
		}
		written[t.Path] = []exportedFile{}
		for _, en := range es {
			data, err := e.Store.Get(en.ID)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if en.Name != filepath.Base(en.Name) || en.Name == "." || en.Name == ".." {
				errs = append(errs, fmt.Errorf("%s: output %q is not a plain file name; not exported", t.Path, en.Name))
				continue
			}
			path := filepath.Join(e.Opt.FiguresDir, en.Name)
			if err := atomicfile.WriteFile(path, data); err != nil {
				errs = append(errs, err)
				continue
			}
			res.Figures[en.Name] = FigureFile{Path: path, ID: en.ID.String()}
			written[t.Path] = append(written[t.Path], exportedFile{Name: en.Name, ID: en.ID.String()})
		}
	}
	errs = append(errs, updateExportIndex(e.Opt.FiguresDir, written))
	return errors.Join(errs...)
}

package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"zorepro/pipeline/atomicfile"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
)

// A Dispatcher runs task attempts in other processes, each as the worker
// command (`pipeline worker SPEC`, which calls Engine.Work): package
// slurm's runs them as Slurm jobs. The engine calls Dispatch from one
// goroutine per attempt in flight, at most Opt.Jobs at a time.
type Dispatcher interface {
	// Dispatch starts the attempt and returns once its process has ended,
	// however it ended: by itself, killed, or cancelled because ctx was
	// (then Dispatch cancels it and waits for it to end). It returns an
	// error only if the attempt could not be started or followed.
	Dispatch(ctx context.Context, a Attempt) (Ended, error)
}

// An Adopter is a Dispatcher that can take over an attempt which a job of
// an earlier coordinator of the same store is still running, so that a
// restarted coordinator loses none of that job's work.
type Adopter interface {
	// Adopt reports whether the attempt is still live in such a job; if
	// it is, Adopt waits, as Dispatch does, until it has ended.
	Adopt(ctx context.Context, a Attempt) (Ended, bool, error)
}

// Attempt is one attempt of a task, run as `pipeline worker Spec`.
type Attempt struct {
	Task  string // the task's path
	Stage string // its stage: a dispatcher may group one stage's attempts (e.g. in one job array)
	Name  string // unique in the store: "<action ID>/<n>"
	Spec  string // the spec file the worker reads (absolute path)
}

// Ended is how an attempt's process ended, as its dispatcher saw it.
type Ended struct {
	State string // e.g. Slurm's job state: COMPLETED, FAILED, TIMEOUT, CANCELLED, NODE_FAIL; Refused
	Log   string // the file its output went to ("" if none)
	// Detail is the worker's own account of why it stopped, where it gave
	// one (a refusal's reason, naming the node).
	Detail string
}

// Refused is the State of an attempt whose worker refused to run it
// because its action ID differed from the coordinator's (ErrRefused); the
// task fails at once, with Ended.Detail, instead of being resubmitted.
const Refused = "REFUSED"

// Spec is everything a worker needs to run one attempt: the coordinator
// writes it as JSON beside the attempt's event file. Paths are absolute,
// since the worker may start elsewhere.
type Spec struct {
	Version int `json:"version"`
	// Dir is the coordinator's working directory: relative paths in the
	// dag file (e.g. a data directory) mean the same to the worker.
	Dir     string `json:"dir"`
	DAG     string `json:"dag"`
	Profile string `json:"profile"`
	Store   string `json:"store"`
	Task    string `json:"task"`
	// Action is the task's action ID as the coordinator computed it; the
	// worker refuses to run if its own differs (another binary, dag file,
	// profile or native library), naming the lines of Origin's transcript
	// that differ.
	Action  string  `json:"action"`
	Origin  *Origin `json:"origin,omitempty"`
	Attempt string  `json:"attempt"`
	// Events is the attempt file the worker creates (events.CreateAttempt).
	Events string            `json:"events"`
	Deps   map[string]string `json:"deps"` // upstream task path → output ID
	// Checkpoint is the latest checkpoint the coordinator knows of, which
	// the task resumes from.
	Checkpoint         *events.CheckpointRecord `json:"checkpoint,omitempty"`
	CheckpointInterval time.Duration            `json:"checkpoint_interval"`
}

// Origin is where and from what the coordinator computed a spec's action
// ID: its host, its CPU and the action's transcript (Transcript).
type Origin struct {
	Host       string   `json:"host"`
	CPU        string   `json:"cpu"`
	Transcript []string `json:"transcript"`
}

// SpecVersion is the version of Spec's layout; bump it by hand when it
// changes, so that an old worker refuses a new spec.
const SpecVersion = 2

// ReadSpec reads a spec file.
func ReadSpec(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("worker spec: %w", err)
	}
	var s Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("worker spec %s: %w", path, err)
	}
	if s.Version != SpecVersion {
		return nil, fmt.Errorf("worker spec %s: version %d, this binary reads version %d (is the same build on every node?)", path, s.Version, SpecVersion)
	}
	return &s, nil
}

// attemptsDir holds, under the store root, one directory per action with
// the spec and event file of each attempt not yet merged into the log.
const attemptsDir = "attempts"

// attemptEnd is what merging an attempt's event file found.
type attemptEnd int

const (
	ended      attemptEnd = iota // the task finished, failed or stopped on request: o is final
	unfinished                   // killed before it finished, or its file was rejected: resubmit
)

// dispatch runs t as attempts through the Dispatcher until one finishes,
// resubmitting an attempt that was killed (from its latest checkpoint); it
// gives up after Opt.MaxAttempts attempts in a row that recorded no new
// checkpoint, and at once when a worker refused the attempt (its action ID
// differs there). What a previous coordinator left is taken over first: an
// attempt one of its jobs still runs is adopted (if the Dispatcher is an
// Adopter) and waited for, and the attempt files it left are merged; a
// finished one is adopted instead of rerunning.
func (r *runner) dispatch(t *dag.Task, act ActionID, lines []string, deps map[string]string) outcome {
	dir := filepath.Join(r.e.Store.Root(), attemptsDir, act.String())
	fail := func(err error) outcome {
		r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateFailed, Action: act.String(), Time: time.Now().UnixNano(), Error: err.Error()})
		return outcome{t: t, status: failed, err: fmt.Errorf("%s: %w", t.Path, err)}
	}
	var last *events.CheckpointRecord
	if rec, ok, err := r.checkpoints.Checkpoint(act.String()); err != nil {
		return fail(err)
	} else if ok {
		last = &rec
	}
	o, done, adopted := r.adopt(t, act, dir, &last)
	if done {
		return o
	}
	n, left := leftAttempts(dir)
	n = max(n, adopted)
	for _, k := range left {
		o, end := r.merge(t, act, dir, k, Ended{State: "left by an earlier coordinator"}, &last)
		if end == ended && o.status != interrupted {
			r.prog.logf("%s: adopted attempt %d, which an earlier coordinator's job finished", t.Path, k)
			return o
		}
	}
	base, err := r.specBase(t, act, lines, deps)
	if err != nil {
		return fail(err)
	}
	for tries := 1; ; tries++ {
		n++
		spec := base
		spec.Attempt = fmt.Sprintf("%s/%d", act, n)
		spec.Events = filepath.Join(dir, strconv.Itoa(n)+".attempt")
		spec.Checkpoint = last
		data, _ := json.MarshalIndent(spec, "", "  ")
		specPath := filepath.Join(dir, strconv.Itoa(n)+".spec.json")
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			err = atomicfile.WriteFile(specPath, data)
		}
		if err != nil {
			r.writeFailed(err)
			return fail(err)
		}
		how, err := r.e.Dispatcher.Dispatch(r.ctx, Attempt{Task: t.Path, Stage: t.Stage.Name, Name: spec.Attempt, Spec: specPath})
		if err != nil {
			if r.ctx.Err() != nil {
				// Its job may still be stopping: the spec stays for the
				// next coordinator to adopt the attempt, or to remove.
				return outcome{t: t, status: interrupted, err: r.ctx.Err()}
			}
			os.Remove(specPath)
			return fail(err)
		}
		if how.State == Refused {
			os.Remove(specPath)
			os.Remove(dir) // once empty
			why, ok := strings.CutPrefix(how.Detail, ErrRefused.Error())
			if !ok {
				why = ": " + how.Detail
			}
			return fail(fmt.Errorf("%w%s%s", ErrRefused, why, logNote(how.Log)))
		}
		before := last
		o, end := r.merge(t, act, dir, n, how, &last)
		if end == ended {
			return o
		}
		if r.ctx.Err() != nil {
			return outcome{t: t, status: interrupted, err: r.ctx.Err()}
		}
		if last != before {
			tries = 0 // it got further: a long task may need many jobs (e.g. a time limit)
		}
		if tries >= r.e.maxAttempts() {
			return fail(fmt.Errorf("gave up after %d attempts in a row that ended without a new checkpoint: the last ended %s%s%s", tries, how.State, detailNote(how.Detail), logNote(how.Log)))
		}
		from := "the beginning"
		if last != nil {
			from = fmt.Sprintf("iteration %d", last.Iteration)
		}
		r.prog.logf("%s: attempt %d ended %s without finishing%s%s; resubmitting, from %s", t.Path, n, how.State, detailNote(how.Detail), logNote(how.Log), from)
	}
}

// specBase is the part of t's attempt specs that every attempt shares.
func (r *runner) specBase(t *dag.Task, act ActionID, lines []string, deps map[string]string) (Spec, error) {
	store, err := filepath.Abs(r.e.Store.Root())
	if err != nil {
		return Spec{}, err
	}
	dagFile, err := filepath.Abs(r.e.Plan.File)
	if err != nil {
		return Spec{}, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return Spec{}, err
	}
	host := Host()
	return Spec{
		Version: SpecVersion, Dir: wd, DAG: dagFile, Profile: r.e.Plan.Profile, Store: store,
		Task: t.Path, Action: act.String(), Origin: &Origin{Host: host.Name, CPU: host.CPU, Transcript: lines},
		Deps: deps, CheckpointInterval: r.e.Opt.CheckpointInterval,
	}, nil
}

// adopt takes over the latest attempt of t's action if a job of an
// earlier coordinator still runs it (the Dispatcher is an Adopter): it
// waits for the job and merges what the attempt recorded. It reports
// whether that gave t's outcome, and the attempt's number (0: none
// adopted).
func (r *runner) adopt(t *dag.Task, act ActionID, dir string, last **events.CheckpointRecord) (outcome, bool, int) {
	ad, ok := r.e.Dispatcher.(Adopter)
	if !ok {
		return outcome{}, false, 0
	}
	k := latestSpec(dir)
	if k == 0 {
		return outcome{}, false, 0
	}
	spec := filepath.Join(dir, strconv.Itoa(k)+".spec.json")
	how, live, err := ad.Adopt(r.ctx, Attempt{Task: t.Path, Stage: t.Stage.Name, Name: fmt.Sprintf("%s/%d", act, k), Spec: spec})
	if !live || err != nil {
		return outcome{}, false, 0 // what it left is merged as any attempt file is
	}
	r.prog.logf("%s: adopted attempt %d, which a job of an earlier coordinator was running", t.Path, k)
	o, end := r.merge(t, act, dir, k, how, last)
	return o, end == ended && o.status != interrupted, k
}

// latestSpec returns the highest attempt number with a spec file in dir
// (0: none).
func latestSpec(dir string) int {
	names, _ := os.ReadDir(dir)
	k := 0
	for _, de := range names {
		if num, ok := strings.CutSuffix(de.Name(), ".spec.json"); ok {
			if n, err := strconv.Atoi(num); err == nil {
				k = max(k, n)
			}
		}
	}
	return k
}

func detailNote(detail string) string {
	if detail == "" {
		return ""
	}
	return ": " + detail
}

func logNote(path string) string {
	if path == "" {
		return ""
	}
	return " (log " + path + ")"
}

func (e *Engine) maxAttempts() int {
	if e.Opt.MaxAttempts > 0 {
		return e.Opt.MaxAttempts
	}
	return 4
}

// leftAttempts returns the highest attempt number used in dir and the
// attempts whose event files are still there (left by a coordinator that
// died before merging them), in order. Their spec files are removed.
func leftAttempts(dir string) (highest int, left []int) {
	names, _ := os.ReadDir(dir)
	for _, de := range names {
		num, kind, ok := strings.Cut(de.Name(), ".")
		k, err := strconv.Atoi(num)
		if !ok || err != nil {
			continue
		}
		highest = max(highest, k)
		switch kind {
		case "attempt":
			left = append(left, k)
		case "spec.json":
			os.Remove(filepath.Join(dir, de.Name()))
		}
	}
	slices.Sort(left)
	return highest, left
}

// merge validates the event file of attempt n and records it in the log
// under this run. A finished attempt (its file complete) is recorded whole
// and its outcome returned. Of an attempt killed before it finished, only
// what precedes its latest checkpoint is recorded (as an interrupted run
// of the task would have it), and *last moves to that checkpoint. A file
// that is corrupt, belongs to another task or names outputs the store does
// not hold is rejected: renamed to *.rejected and not recorded. The file
// is removed once recorded.
func (r *runner) merge(t *dag.Task, act ActionID, dir string, n int, how Ended, last **events.CheckpointRecord) (outcome, attemptEnd) {
	path := filepath.Join(dir, strconv.Itoa(n)+".attempt")
	a, err := events.ReadAttempt(path)
	if errors.Is(err, fs.ErrNotExist) {
		r.prog.logf("%s: attempt %d ended %s before its worker started%s%s", t.Path, n, how.State, detailNote(how.Detail), logNote(how.Log))
		return outcome{}, unfinished
	}
	if err == nil {
		err = r.checkAttempt(a, t, act, n)
	}
	if err != nil {
		r.prog.logf("%s: attempt %d (ended %s%s) rejected: %v", t.Path, n, how.State, logNote(how.Log), err)
		os.Rename(path, path+".rejected")
		return outcome{}, unfinished
	}
	evs := a.Events
	if !a.Complete {
		cut := 0
		for i, ev := range evs {
			if ev.Type == events.TypeCheckpoint {
				cut = i + 1
			}
		}
		evs = evs[:cut]
	}
	var o outcome
	o.t = t
	for _, ev := range evs {
		ev.Run = r.run
		r.w.Append(ev)
		switch {
		case ev.Type == events.TypeCheckpoint:
			*last = &events.CheckpointRecord{Task: t.Path, Run: r.run, Content: ev.Checkpoint.Content, Iteration: ev.Checkpoint.Iteration}
		case ev.Type != events.TypeState:
		case ev.State == events.StateDone:
			o.status, o.output = done, ev.Output
		case ev.State == events.StateFailed:
			o.status, o.err = failed, fmt.Errorf("%s: %s%s", t.Path, ev.Error, logNote(how.Log))
			var fd FailedData
			if json.Unmarshal(ev.Data, &fd) == nil {
				o.damaged = fd.DamagedInput
			}
		case ev.State == events.StateInterrupted:
			o.status, o.err = interrupted, ErrInterrupted
		}
	}
	end := ended
	if !a.Complete {
		r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateInterrupted, Action: act.String(), Time: time.Now().UnixNano(),
			Error: fmt.Sprintf("attempt %d ended %s without finishing%s", n, how.State, logNote(how.Log))})
		end = unfinished
	} else if o.status == interrupted && r.ctx.Err() == nil {
		end = unfinished // stopped by a signal the coordinator did not send (preemption, a time limit)
	}
	if r.flush != nil {
		if err := r.flush(); err != nil {
			return outcome{t: t, status: failed, err: err}, ended
		}
	}
	os.Remove(path)
	os.Remove(filepath.Join(dir, strconv.Itoa(n)+".spec.json"))
	os.Remove(dir) // once empty
	return o, end
}

// checkAttempt checks that an attempt file is the record of attempt n of
// t's action and, if it finished, that the outputs it names are in the
// store.
func (r *runner) checkAttempt(a *events.Attempt, t *dag.Task, act ActionID, n int) error {
	want := events.AttemptHeader{Task: t.Path, Action: act.String(), Attempt: fmt.Sprintf("%s/%d", act, n)}
	if a.Header != want {
		return fmt.Errorf("its header names task %s, action %s, attempt %s; expected %s, %s, %s", a.Header.Task, a.Header.Action, a.Header.Attempt, want.Task, want.Action, want.Attempt)
	}
	finals := 0
	for _, ev := range a.Events {
		if ev.Action != "" && ev.Action != want.Action {
			return fmt.Errorf("a %s event names action %s", ev.Type, ev.Action)
		}
		if ev.Type != events.TypeState {
			continue
		}
		switch ev.State {
		case events.StateDone:
			if err := r.e.VerifyOutput(ev.Output); err != nil {
				return fmt.Errorf("its output is not intact in the store: %w", err)
			}
			finals++
		case events.StateFailed, events.StateInterrupted:
			finals++
		}
	}
	if a.Complete && finals != 1 {
		return fmt.Errorf("it is complete but records %d final states (done, failed or interrupted), not one", finals)
	}
	return nil
}

// Work runs one attempt in this process, as a worker: the task the spec
// names, from the inputs and checkpoint it names, recording every event in
// the spec's attempt file (never in an event log, which the coordinator
// alone writes). It refuses to run if its own action ID for the task
// differs from the spec's. The task's own failure is recorded in the file
// and returned; so is an interrupt (ErrInterrupted).
func (e *Engine) Work(ctx context.Context, spec *Spec) error {
	t := e.Plan.Task(spec.Task)
	if t == nil {
		return fmt.Errorf("%w: task %s is not in %s under profile %s on %s (another dag file than the coordinator's)", ErrRefused, spec.Task, e.Plan.File, e.Plan.Profile, Host())
	}
	lines, err := Transcript(t, e.Code, e.Platform, spec.Deps)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	act := Action(lines)
	if act.String() != spec.Action {
		return refusal(t.Path, act.String(), lines, spec)
	}
	w, err := events.CreateAttempt(spec.Events, events.AttemptHeader{Task: t.Path, Action: spec.Action, Attempt: spec.Attempt})
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &runner{
		e: e, ctx: tctx, stop: cancel,
		tokens:      make(chan struct{}, max(e.Opt.Jobs, 1)),
		state:       make([]status, len(e.Plan.Tasks)),
		outputs:     map[string]string{},
		prog:        newProgress(e.Opt.Log, false, 1),
		checkpoints: specCheckpoint{action: spec.Action, rec: spec.Checkpoint},
	}
	r.w = &attemptRecorder{w: w, failed: r.writeFailed}
	r.tokens <- struct{}{} // the task's own worker token, as the scheduler holds it
	o := r.attemptSafe(t, act, lines, spec.Deps)
	cerr := w.Close()
	if err := r.writeError(); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if cerr != nil {
		return fmt.Errorf("worker: %w", cerr)
	}
	switch o.status {
	case done:
		return nil
	case interrupted:
		return ErrInterrupted
	}
	return o.err
}

// refusal explains why a worker's action ID for a task differs from the
// coordinator's: the node, and the lines of the two transcripts that
// differ, with what such a line means.
func refusal(task, act string, here []string, spec *Spec) error {
	var there []string
	origin := "the coordinator"
	if o := spec.Origin; o != nil {
		there = o.Transcript
		origin = "the coordinator on " + HostInfo{Name: o.Host, CPU: o.CPU}.String()
	}
	onlyHere, onlyThere := lineDiff(here, there), lineDiff(there, here)
	msg := fmt.Sprintf("task %s has action %s on %s, but %s computed %s", task, act, Host(), origin, spec.Action)
	if spec.Origin == nil {
		return fmt.Errorf("%w: %s (the binary, %s or the profile differ between them: run the same build, on the shared file system)", ErrRefused, msg, spec.DAG)
	}
	quote := func(lines []string) string {
		if len(lines) == 0 {
			return "nothing"
		}
		out := strconv.Quote(lines[0])
		if len(lines) > 1 {
			out += fmt.Sprintf(" and %d more line(s)", len(lines)-1)
		}
		return out
	}
	msg += fmt.Sprintf(": here its transcript has %s, there %s", quote(onlyHere), quote(onlyThere))
	first := append(append([]string{}, onlyHere...), onlyThere...)[0:1]
	if len(first) == 0 {
		return fmt.Errorf("%w: %s", ErrRefused, msg)
	}
	switch kind, _, _ := strings.Cut(first[0], " "); kind {
	case "native":
		msg += " (this node's native libraries differ: another CPU type or library build computes other bits; run on nodes like the coordinator's, e.g. sbatch's --constraint or --nodelist through --slurm-args)"
	case "code", "build", "go", "goarch", "kind", "kind-version":
		msg += " (another build of the binary: run the same build on every node)"
	default:
		msg += fmt.Sprintf(" (another dag file or profile than the coordinator's %s)", spec.DAG)
	}
	return fmt.Errorf("%w: %s", ErrRefused, msg)
}

// lineDiff returns the lines of a that b lacks, in a's order.
func lineDiff(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, l := range b {
		in[l] = true
	}
	var out []string
	for _, l := range a {
		if !in[l] {
			out = append(out, l)
		}
	}
	return out
}

// attemptSafe is attempt, with a panic recorded as the task's failure.
func (r *runner) attemptSafe(t *dag.Task, act ActionID, lines []string, deps map[string]string) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = outcome{t: t, status: failed, err: fmt.Errorf("%s: panic: %v", t.Path, p)}
			r.w.Append(events.Event{Type: events.TypeState, Run: r.run, Task: t.Path, State: events.StateFailed, Action: act.String(), Time: time.Now().UnixNano(), Error: o.err.Error()})
		}
	}()
	return r.attempt(t, act, lines, deps, nil)
}

// specCheckpoint is a worker's checkpoint source: the one its spec names.
type specCheckpoint struct {
	action string
	rec    *events.CheckpointRecord
}

func (s specCheckpoint) Checkpoint(action string) (events.CheckpointRecord, bool, error) {
	if s.rec == nil || action != s.action {
		return events.CheckpointRecord{}, false, nil
	}
	return *s.rec, true, nil
}

// attemptRecorder records a worker's events in its attempt file, synced
// after every checkpoint so that a killed job keeps it. A failed write
// stops the task as a failed write to the log would.
type attemptRecorder struct {
	w      *events.AttemptWriter
	failed func(error)
}

func (a *attemptRecorder) Append(ev events.Event) {
	err := a.w.Append(ev)
	if err == nil && ev.Type == events.TypeCheckpoint {
		err = a.w.Sync()
	}
	if err != nil {
		a.failed(err)
	}
}

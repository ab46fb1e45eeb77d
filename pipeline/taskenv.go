package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"zorepro/pipeline/crashpoint"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// taskEnv is the task.Env of one running task: what the task sees of the
// engine (inputs, streams, outputs, events, checkpoints, the worker pool).
type taskEnv struct {
	r       *runner
	t       *dag.Task
	act     ActionID
	inputs  map[string][]task.Input
	streams *stream.Log

	mu       sync.Mutex
	outputs  map[string]OutputEntry
	lastCkpt time.Time
	iters    []task.Iter   // iterations not yet handed to the writer
	metrics  []task.Metric // backing array of the iters' metrics, appended to
	itersAt  time.Time     // when iters was last handed over
	span     iterSpan      // the first sequence of iterations, timed

	damaged atomic.Pointer[string] // an upstream whose output was found damaged

	// share is the task's cohort (cohort.go), nil when it runs alone.
	share   *member
	started time.Time
	// parNanos is the time per index of the task's last Parallel call.
	parNanos atomic.Int64
}

// parMinNanos is the least work (time per index × indices, as the task's
// previous Parallel call measured it) worth a helper goroutine.
const parMinNanos = 200_000

// Sharer implements task.ShareEnv.
func (e *taskEnv) Sharer() task.Sharer {
	if e.share == nil {
		return nil
	}
	return e.share
}

var _ task.ShareEnv = (*taskEnv)(nil)

// damaged reports whether a store read failed because an entry is missing
// or corrupt (as opposed to, say, a permission error).
func damaged(err error) bool {
	return errors.Is(err, store.ErrCorrupt) || errors.Is(err, store.ErrNotFound)
}

// damagedInput returns the upstream task whose output this task found
// missing or corrupt, or "".
func (e *taskEnv) damagedInput() string {
	if p := e.damaged.Load(); p != nil {
		return *p
	}
	return ""
}

// Iteration events are handed to the writer in blocks: one bbolt value per
// block instead of one per iteration keeps recording cheap next to tiny
// iterations. A block is handed over when full, when it is older than
// iterFlushAge, before every checkpoint and when the task ends, so every
// iteration up to a checkpoint is committed before the checkpoint is.
const (
	iterBlock    = 512
	iterFlushAge = time.Second
)

var _ task.Env = (*taskEnv)(nil)

func newTaskEnv(r *runner, t *dag.Task, act ActionID, deps map[string]string) (*taskEnv, error) {
	e := &taskEnv{r: r, t: t, act: act, inputs: map[string][]task.Input{}, streams: &stream.Log{}, outputs: map[string]OutputEntry{}, lastCkpt: time.Now(), itersAt: time.Now(), started: time.Now()}
	for slot, ups := range t.Inputs {
		for _, up := range ups {
			es, err := r.e.Outputs(deps[up.Path])
			if err != nil {
				if damaged(err) {
					e.damaged.Store(&up.Path)
				}
				return e, fmt.Errorf("input %s from %s: %w", slot, up.Path, err)
			}
			in := &input{st: r.e.Store, path: up.Path, coords: up.Coords, entries: map[string]OutputEntry{}, damaged: &e.damaged}
			for _, en := range es {
				in.entries[en.Name] = en
			}
			e.inputs[slot] = append(e.inputs[slot], in)
		}
	}
	return e, nil
}

func (e *taskEnv) Path() string         { return e.t.Path }
func (e *taskEnv) Coords() []task.Coord { return e.t.Coords }
func (e *taskEnv) Seed() (uint64, bool) { return e.t.Seed, e.t.HasSeed }
func (e *taskEnv) Streams() stream.Source {
	if p := e.t.Parent; p != nil {
		return stream.New(p.Seed, p.Path, e.streams)
	}
	return stream.New(e.t.Seed, e.t.Path, e.streams)
}
func (e *taskEnv) Inputs(slot string) []task.Input { return e.inputs[slot] }

func (e *taskEnv) Output(name string, data []byte) error {
	if !validOutputName(name) {
		return fmt.Errorf("output %q: a name must be non-empty and without white space", name)
	}
	id, err := e.r.e.Store.Put(data)
	if err != nil {
		e.r.writeFailed(err)
		return fmt.Errorf("output %s: %w", name, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, dup := e.outputs[name]; dup {
		return fmt.Errorf("output %s written twice", name)
	}
	e.outputs[name] = OutputEntry{Name: name, ID: id, Size: int64(len(data))}
	return nil
}

func (e *taskEnv) publish() (string, error) {
	e.mu.Lock()
	es := make([]OutputEntry, 0, len(e.outputs))
	for _, en := range e.outputs {
		es = append(es, en)
	}
	e.mu.Unlock()
	id, err := e.r.e.Store.Put(encodeOutputs(es))
	if err != nil {
		e.r.writeFailed(err)
		return "", fmt.Errorf("output manifest: %w", err)
	}
	return id.String(), nil
}

func (e *taskEnv) Iteration(it task.Iter) {
	now := time.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.iters) > 0 && e.iters[len(e.iters)-1].Iteration >= it.Iteration {
		e.flushItersLocked() // a new sequence (e.g. evaluation after training)
	}
	if e.iters == nil {
		e.iters = make([]task.Iter, 0, iterBlock)
	}
	// The caller may reuse its metrics slice: copy it into the block's own
	// backing array (the block is handed to the writer whole).
	if n := len(it.Metrics); n > 0 {
		if cap(e.metrics)-len(e.metrics) < n {
			e.metrics = make([]task.Metric, 0, max(n*iterBlock, 64))
		}
		at := len(e.metrics)
		e.metrics = append(e.metrics, it.Metrics...)
		it.Metrics = e.metrics[at : at+n : at+n]
	}
	e.iters = append(e.iters, it)
	e.span.add(it, now)
	if len(e.iters) >= iterBlock || now.Sub(e.itersAt) >= iterFlushAge {
		e.flushItersLocked()
	}
	if e.r.stopAfter > 0 && it.Iteration >= e.r.stopAfter {
		e.r.stop()
	}
}

func (e *taskEnv) flushItersLocked() {
	if len(e.iters) > 0 {
		e.r.w.Append(events.Event{Type: events.TypeIter, Run: e.r.run, Task: e.t.Path, Iters: e.iters})
		e.iters = nil
	}
	e.itersAt = time.Now()
}

// iterSpan times a task's first sequence of iterations: from its first
// iteration to its last, the samples and wall time in between, which is
// the task's speed without its set-up and tear-down (for estimates; wall
// time never reaches a result).
type iterSpan struct {
	n                  int
	closed             bool
	last               int64
	samples0, samples1 int64
	t0, t1             time.Time
}

func (s *iterSpan) add(it task.Iter, now time.Time) {
	switch {
	case s.closed:
	case s.n > 0 && it.Iteration <= s.last:
		s.closed = true // a second sequence (e.g. an evaluation after training)
	default:
		if s.n == 0 {
			s.samples0, s.t0 = it.Samples, now
		}
		s.samples1, s.t1, s.last = it.Samples, now, it.Iteration
		s.n++
	}
}

// SpanData is the "span" of a done event's data.
type SpanData struct {
	Samples int64 `json:"samples"` // between the first and the last iteration
	Nanos   int64 `json:"ns"`
}

// DoneData is the data of a done event, each part when there is one.
type DoneData struct {
	// Span times the task's iterations (not for a cohort's members, whose
	// iterations wait for each other's).
	Span *SpanData `json:"span,omitempty"`
	// BusyNanos is, for a member of a cohort, the time it ran without
	// waiting for its turn: its own share of the cohort's time, which is
	// its task time.
	BusyNanos int64 `json:"busy_ns,omitempty"`
}

// doneData returns the data of the task's done event (nil when empty).
func (e *taskEnv) doneData() json.RawMessage {
	var d DoneData
	if e.share != nil {
		d.BusyNanos = max(1, (time.Since(e.started) - e.share.Waited()).Nanoseconds())
	} else {
		e.mu.Lock()
		s := e.span
		e.mu.Unlock()
		if s.n >= 2 && s.samples1 > s.samples0 && s.t1.After(s.t0) {
			d.Span = &SpanData{Samples: s.samples1 - s.samples0, Nanos: s.t1.Sub(s.t0).Nanoseconds()}
		}
	}
	if d == (DoneData{}) {
		return nil
	}
	b, _ := json.Marshal(d)
	return b
}

// flushIters hands buffered iterations to the writer.
func (e *taskEnv) flushIters() {
	e.mu.Lock()
	e.flushItersLocked()
	e.mu.Unlock()
}

func (e *taskEnv) Note(kind string, v any) {
	val, err := json.Marshal(v)
	if err != nil {
		val, _ = json.Marshal(fmt.Sprint(v))
	}
	data, _ := json.Marshal(task.NoteData{Kind: kind, Value: val})
	e.r.w.Append(events.Event{Type: events.TypeNote, Run: e.r.run, Task: e.t.Path, Data: data})
}

func (e *taskEnv) Resume() ([]byte, int64, bool, error) {
	rec, ok, err := e.r.checkpoints.Checkpoint(e.act.String())
	if err != nil || !ok {
		return nil, 0, false, err
	}
	id, err := store.ParseID(rec.Content)
	if err != nil {
		return nil, 0, false, nil
	}
	state, err := e.r.e.Store.Get(id)
	if err != nil {
		e.Logf("checkpoint %s unusable (%v); starting from the beginning", rec.Content, err)
		return nil, 0, false, nil
	}
	data, _ := json.Marshal(map[string]any{"from_run": rec.Run, "iteration": rec.Iteration, "checkpoint": rec.Content})
	e.r.w.Append(events.Event{Type: events.TypeState, Run: e.r.run, Task: e.t.Path, State: events.StateResumed, Action: e.act.String(), Time: time.Now().UnixNano(), Data: data})
	e.Logf("resumed after iteration %d, from the checkpoint run %d recorded", rec.Iteration, rec.Run)
	return state, rec.Iteration, true, nil
}

func (e *taskEnv) CheckpointDue() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Since(e.lastCkpt) >= e.r.e.Opt.CheckpointInterval
}

func (e *taskEnv) Checkpoint(state []byte, iteration int64) error {
	id, err := e.r.e.Store.Put(state)
	if err != nil {
		e.r.writeFailed(err)
		return fmt.Errorf("checkpoint: %w", err)
	}
	crashpoint.Hit("engine.checkpoint")
	e.flushIters()
	e.r.w.Append(events.Event{Type: events.TypeCheckpoint, Run: e.r.run, Task: e.t.Path, Action: e.act.String(), Checkpoint: &events.Checkpoint{Content: id.String(), Iteration: iteration}, Time: time.Now().UnixNano()})
	e.mu.Lock()
	e.lastCkpt = time.Now()
	e.mu.Unlock()
	return nil
}

// Parallel runs fn(0..n-1): the calling goroutine works through the
// indices, with a helper on every worker token that is free when it is
// called. Tokens are taken without waiting, and a call whose work the
// task's previous call says is under parMinNanos runs on this goroutine
// alone: a call then costs no goroutine (an iteration of ARS at d = 10
// takes microseconds; a MuJoCo rollout milliseconds). Which indices run
// where never reaches a result: fn writes only index-owned slots.
func (e *taskEnv) Parallel(ctx context.Context, n int, fn func(i int) error) error {
	if n <= 0 {
		return nil
	}
	t0 := time.Now()
	if small := e.parNanos.Load() * int64(n); n == 1 || cap(e.r.tokens) == 1 || small > 0 && small < parMinNanos || len(e.r.tokens) == cap(e.r.tokens) {
		defer func() { e.parNanos.Store(max(1, time.Since(t0).Nanoseconds()/int64(n))) }()
		// No helper can join: the indices in order on this goroutine,
		// stopping at the first error (the lowest failing index).
		for i := 0; i < n; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(i); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	errs := make([]error, n)
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n || ctx.Err() != nil {
				return
			}
			errs[i] = fn(i)
		}
	}
	var wg sync.WaitGroup
	helpers := 0
take:
	for helpers < min(n-1, cap(e.r.tokens)-1) {
		select {
		case e.r.tokens <- struct{}{}:
			helpers++
			wg.Add(1)
			go func() {
				defer wg.Done()
				work()
				<-e.r.tokens
			}()
		default:
			break take
		}
	}
	work()
	wg.Wait()
	e.parNanos.Store(max(1, time.Since(t0).Nanoseconds()*int64(1+helpers)/int64(n)))
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *taskEnv) Progress(done, total int64) { e.r.prog.task(e.t.Path, done, total) }

func (e *taskEnv) Logf(format string, args ...any) {
	e.r.prog.logf("%s: %s", e.t.Path, fmt.Sprintf(format, args...))
}

func (e *taskEnv) recordStreams() {
	fams := e.streams.Families()
	if len(fams) == 0 {
		return
	}
	data, _ := json.Marshal(map[string]any{"derivation": stream.Derivation, "families": fams})
	e.r.w.Append(events.Event{Type: events.TypeStreams, Run: e.r.run, Task: e.t.Path, Action: e.act.String(), Data: data})
}

// input is one upstream task's outputs.
type input struct {
	st      *store.Store
	path    string
	coords  []task.Coord
	entries map[string]OutputEntry
	damaged *atomic.Pointer[string] // the task's: set when a read finds damage
}

func (in *input) Task() string         { return in.path }
func (in *input) Coords() []task.Coord { return in.coords }
func (in *input) Coord(axis string) (string, bool) {
	for _, c := range in.coords {
		if c.Axis == axis {
			return c.Value, true
		}
	}
	return "", false
}

func (in *input) Names() []string {
	out := make([]string, 0, len(in.entries))
	for k := range in.entries {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (in *input) Read(name string) ([]byte, error) {
	en, ok := in.entries[name]
	if !ok {
		return nil, fmt.Errorf("%s has no output %q (has %v)", in.path, name, in.Names())
	}
	b, err := in.st.Get(en.ID)
	if err != nil && damaged(err) && in.damaged != nil {
		in.damaged.Store(&in.path)
	}
	return b, err
}

func (in *input) ID(name string) string {
	if en, ok := in.entries[name]; ok {
		return en.ID.String()
	}
	return ""
}

package provenance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
	"zorepro/pipeline/task"
)

// Scratch is a throwaway content store and event log that tasks are
// re-executed into, so that replay and verify never touch the real store.
type Scratch struct {
	Dir    string
	Store  *store.Store
	Events *events.Log
}

// OpenScratch creates (or reuses) a scratch area under dir.
func OpenScratch(dir string) (*Scratch, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("scratch %s: %w", dir, err)
	}
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		return nil, err
	}
	log, err := events.Open(filepath.Join(dir, "events.db"), events.Options{Timeout: time.Second})
	if err != nil {
		return nil, err
	}
	return &Scratch{Dir: dir, Store: st, Events: log}, nil
}

// Close closes the scratch event log.
func (s *Scratch) Close() error { return s.Events.Close() }

// Reexecution is one task run again from its recorded inputs.
type Reexecution struct {
	Task     string      `json:"task"`
	Recorded *Production `json:"-"`
	Run      uint64      `json:"scratch_run"`
	Output   string      `json:"output,omitempty"` // "" when stopped early or failed
	Stopped  bool        `json:"stopped,omitempty"`
	Err      error       `json:"-"`
}

// IdentityError reports that a task's identity today differs from the
// recorded run's; Diff lists the transcript lines ("- recorded", "+ now").
type IdentityError struct {
	Task, Recorded, Current string
	Diff                    []string
}

func (e *IdentityError) Error() string {
	return fmt.Sprintf("%s: the recorded action %s is not what this binary and DAG would run (%s now): %s",
		e.Task, e.Recorded, e.Current, describeDiff(e.Diff))
}

func (e *IdentityError) Unwrap() error { return ErrIdentityChanged }

// Production returns the recorded production of the output this binary
// and dag.yaml would reuse for task: the one recorded for the action its
// plan gives it, from its ancestors' such outputs. Where that action has
// no recorded output (other code, parameters or inputs since) it returns
// the task's latest recorded production, with planned false, for the
// caller to say so: a store can hold several actions of one task path
// (another profile's, or an older binary's, run in the same store), and the
// latest is not necessarily the plan's.
func (r *Record) Production(task string) (p *Production, planned bool, err error) {
	t, err := Find(r.eng.Plan, task)
	if err != nil {
		return nil, false, err
	}
	return r.production(t, map[*dag.Task]string{})
}

// production is Production with a memo of planned outputs shared across
// calls.
func (r *Record) production(t *dag.Task, memo map[*dag.Task]string) (*Production, bool, error) {
	out, err := r.plannedOutput(t, memo)
	if err != nil {
		return nil, false, err
	}
	if out != "" {
		p, err := Produced(r.eng.Events, t.Path, out)
		return p, err == nil, err
	}
	p, err := r.LastProduction(t.Path)
	return p, false, err
}

// plannedOutput returns the output recorded for the action this binary and
// dag.yaml give t, or "" where there is none (for t or an ancestor),
// memoizing every task it computes. Unlike Explain it reads no output's
// bytes: callers check the production they read.
func (r *Record) plannedOutput(t *dag.Task, memo map[*dag.Task]string) (string, error) {
	if out, ok := memo[t]; ok {
		return out, nil
	}
	deps := map[string]string{}
	for _, d := range t.Deps {
		out, err := r.plannedOutput(d, memo)
		if err != nil || out == "" {
			memo[t] = ""
			return "", err
		}
		deps[d.Path] = out
	}
	lines, err := pipeline.Transcript(t, r.eng.Code, r.eng.Platform, deps)
	if err != nil {
		return "", err
	}
	rec, ok, err := r.eng.Events.Action(pipeline.Action(lines).String())
	if err != nil {
		return "", err
	}
	memo[t] = ""
	if ok {
		memo[t] = rec.Output
	}
	return memo[t], nil
}

// LastProduction returns the recorded production of the task's latest
// output (from its last "done" or "cached" state).
func (r *Record) LastProduction(task string) (*Production, error) {
	if _, err := Find(r.eng.Plan, task); err != nil {
		return nil, err
	}
	evs, err := r.eng.Events.Events(task)
	if err != nil {
		return nil, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.Type == events.TypeState && (ev.State == events.StateDone || ev.State == events.StateCached) && ev.Output != "" {
			return Produced(r.eng.Events, task, ev.Output)
		}
	}
	return nil, notRecordedf("%s has never finished: nothing recorded to replay", task)
}

// Reexecute runs the task of a recorded production again, into sc, from
// the recorded input outputs: the same action, or an *IdentityError when
// the code, parameters or platform changed since. until > 0 stops the
// task once it records that iteration. Inputs are copied into the scratch
// store first; the real store and log are only read.
func (r *Record) Reexecute(ctx context.Context, p *Production, sc *Scratch, until int64) (*Reexecution, error) {
	t, err := Find(r.eng.Plan, p.Task)
	if err != nil {
		return nil, err
	}
	deps := map[string]string{}
	for _, in := range p.Inputs() {
		deps[in.Task] = in.Output
	}
	lines, err := pipeline.Transcript(t, r.eng.Code, r.eng.Platform, deps)
	if err != nil {
		return nil, err
	}
	if act := pipeline.Action(lines).String(); act != p.Action {
		return nil, &IdentityError{Task: p.Task, Recorded: p.Action, Current: act, Diff: pipeline.DiffTranscripts(p.Transcript, lines)}
	}
	info, _ := json.Marshal(map[string]any{"reexecute": p.Task, "action": p.Action, "recorded_run": p.Run, "until": until})
	one, err := r.Execute(ctx, t, deps, sc, until, info)
	if err != nil {
		return nil, err
	}
	return &Reexecution{Task: p.Task, Recorded: p, Run: one.Run, Output: one.Output, Stopped: one.Stopped, Err: one.Err}, nil
}

// Execute runs task t into sc, as a run recorded there with info, from the
// given input outputs (task path → output ID in the real store), which are
// copied into the scratch store first; the real store and log are only
// read. until > 0 stops the task once it records that iteration.
func (r *Record) Execute(ctx context.Context, t *dag.Task, deps map[string]string, sc *Scratch, until int64, info json.RawMessage) (*pipeline.One, error) {
	for _, out := range slices.Sorted(maps.Values(deps)) {
		if err := copyOutput(r.eng.Store, sc.Store, out); err != nil {
			return nil, fmt.Errorf("%s: copy input %s to scratch: %w", t.Path, out, err)
		}
	}
	sub := &pipeline.Engine{Plan: r.eng.Plan, Store: sc.Store, Events: sc.Events, Code: r.eng.Code, Platform: r.eng.Platform,
		Opt: pipeline.Options{Jobs: max(r.eng.Opt.Jobs, 1), Force: true, CheckpointInterval: time.Duration(math.MaxInt64)}}
	one, err := sub.RunOne(ctx, t, deps, until, info)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	return one, nil
}

// copyOutput copies an output manifest and its entries between stores.
func copyOutput(from, to *store.Store, out string) error {
	id, err := store.ParseID(out)
	if err != nil {
		return err
	}
	data, err := from.Get(id)
	if err != nil {
		return err
	}
	es, err := pipeline.DecodeOutputs(data)
	if err != nil {
		return fmt.Errorf("output %s: %w", out, err)
	}
	for _, en := range es {
		b, err := from.Get(en.ID)
		if err != nil {
			return fmt.Errorf("%s: %w", en.Name, err)
		}
		if _, err := to.Put(b); err != nil {
			return err
		}
	}
	_, err = to.Put(data)
	return err
}

// IterDiff is the first difference between recorded and recomputed
// iteration events.
type IterDiff struct {
	Index      int        `json:"index"`
	Field      string     `json:"field"`
	Recorded   *task.Iter `json:"recorded,omitempty"`
	Recomputed *task.Iter `json:"recomputed,omitempty"`
}

// SameIter reports whether two iteration events are equal bit for bit.
func SameIter(a, b task.Iter) bool {
	_, d := CompareIters([]task.Iter{a}, []task.Iter{b})
	return d == nil
}

// CompareIters compares two iteration event sequences bit for bit: the
// iteration, samples, parameter digest and every metric. It returns the
// number of equal leading events and the first difference (nil if none).
func CompareIters(rec, got []task.Iter) (int, *IterDiff) {
	n := min(len(rec), len(got))
	for i := 0; i < n; i++ {
		a, b := rec[i], got[i]
		field := ""
		switch {
		case a.Iteration != b.Iteration:
			field = "iteration"
		case a.Samples != b.Samples:
			field = "samples"
		case a.Digest != b.Digest:
			field = "digest"
		case len(a.Metrics) != len(b.Metrics):
			field = "metrics"
		default:
			for j := range a.Metrics {
				if a.Metrics[j].Name != b.Metrics[j].Name || math.Float64bits(a.Metrics[j].Value) != math.Float64bits(b.Metrics[j].Value) {
					field = "metric " + a.Metrics[j].Name
					break
				}
			}
		}
		if field != "" {
			return i, &IterDiff{Index: i, Field: field, Recorded: &a, Recomputed: &b}
		}
	}
	if len(rec) != len(got) {
		d := &IterDiff{Index: n, Field: "count"}
		if n < len(rec) {
			d.Recorded = &rec[n]
		}
		if n < len(got) {
			d.Recomputed = &got[n]
		}
		return n, d
	}
	return n, nil
}

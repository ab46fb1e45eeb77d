package provenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"zorepro/pipeline"
	"zorepro/pipeline/dag"
	"zorepro/pipeline/events"
	"zorepro/pipeline/store"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// ReplayReport compares a task's recorded events with a re-execution's.
type ReplayReport struct {
	Task           string    `json:"task"`
	Action         string    `json:"action"`
	RecordedRun    uint64    `json:"recorded_run"`
	Segments       []Segment `json:"segments"`
	Until          int64     `json:"until,omitempty"`
	Recorded       int       `json:"recorded_events"`
	Recomputed     int       `json:"recomputed_events"`
	Equal          int       `json:"equal_events"`
	Diff           *IterDiff `json:"first_difference,omitempty"`
	StreamsEqual   bool      `json:"streams_equal"`
	RecordedOutput string    `json:"recorded_output"`
	Output         string    `json:"output,omitempty"` // "" when stopped at Until
	Stopped        bool      `json:"stopped,omitempty"`
	Error          string    `json:"error,omitempty"` // the re-execution failed

	// The compared events, for showing them one by one.
	RecordedEvents   []task.Iter `json:"-"`
	RecomputedEvents []task.Iter `json:"-"`
}

// OK reports whether the replay reproduced everything it compared.
func (r *ReplayReport) OK() bool {
	return r.Error == "" && r.Diff == nil && r.StreamsEqual && (r.Stopped || r.Output == r.RecordedOutput)
}

// Replay re-executes a task's recorded output (the one Production picks)
// into sc and compares the recomputed iteration events, streams and output
// with the recorded ones. until > 0 stops after that iteration and
// compares up to it.
func (r *Record) Replay(ctx context.Context, task string, until int64, sc *Scratch) (*ReplayReport, error) {
	p, _, err := r.Production(task)
	if err != nil {
		return nil, err
	}
	if _, err := r.Checked(task, p.Output); err != nil {
		return nil, fmt.Errorf("the recorded output a replay compares with: %w", err)
	}
	rec, err := p.Iterations(r.eng.Events)
	if err != nil {
		return nil, err
	}
	x, err := r.Reexecute(ctx, p, sc, until)
	if err != nil {
		return nil, err
	}
	rep := &ReplayReport{Task: task, Action: p.Action, RecordedRun: p.Run, Segments: p.Segments, Until: until,
		RecordedOutput: p.Output, Output: x.Output, Stopped: x.Stopped}
	if x.Err != nil {
		rep.Error = x.Err.Error()
	}
	got, err := sc.Events.Iterations(task, x.Run)
	if err != nil {
		return nil, err
	}
	if until > 0 {
		rec, got = upTo(rec, until), upTo(got, until)
	}
	rep.Recorded, rep.Recomputed = len(rec), len(got)
	rep.RecordedEvents, rep.RecomputedEvents = rec, got
	rep.Equal, rep.Diff = CompareIters(rec, got)
	again, err := Produced(sc.Events, task, x.Output)
	switch {
	case x.Output == "":
		// Stopped or failed: compare the streams event of the scratch run.
		evs, err := sc.Events.RunEvents(x.Run)
		if err != nil {
			return nil, err
		}
		for _, ev := range evs {
			if ev.Type == events.TypeStreams && ev.Task == task {
				var s Streams
				if json.Unmarshal(ev.Data, &s) == nil {
					rep.StreamsEqual = sameStreams(p.Streams, &s, until > 0)
				}
			}
		}
		if p.Streams == nil && !slices.ContainsFunc(evs, func(ev events.Event) bool { return ev.Type == events.TypeStreams }) {
			rep.StreamsEqual = true
		}
	case err != nil:
		return nil, err
	default:
		rep.StreamsEqual = sameStreams(p.Streams, again.Streams, false)
	}
	return rep, nil
}

// upTo keeps the leading events up to iteration until.
func upTo(its []task.Iter, until int64) []task.Iter {
	n := 0
	for n < len(its) && its[n].Iteration <= until {
		n++
	}
	return its[:n]
}

// sameStreams compares recorded stream families; a run stopped early may
// have drawn from fewer of them (subset).
func sameStreams(rec, got *Streams, subset bool) bool {
	if rec == nil || got == nil {
		return rec == nil && got == nil || subset && got == nil
	}
	if rec.Derivation != got.Derivation {
		return false
	}
	if subset {
		for _, f := range got.Families {
			if !slices.Contains(rec.Families, f) {
				return false
			}
		}
		return true
	}
	return slices.Equal(rec.Families, got.Families)
}

// Verdicts of Verify: the first reproduced, the others a task that did
// not reproduce its recorded output or could not be checked.
const (
	Reproduced    = "reproduced"     // re-executed; the same output ID
	Differs       = "differs"        // re-executed; another output ID
	Failed        = "failed"         // the re-execution failed
	CorruptOutput = "corrupt output" // the recorded output fails its hash check
	MissingOutput = "missing output" // the recorded output is not in the store
	CorruptInput  = "corrupt input"  // an input's recorded output fails its hash check
	MissingInput  = "missing input"  // an input's recorded output is not in the store
	Changed       = "changed"        // the identity changed (code, param, ...): not the same action
	CorruptRecord = "corrupt record" // the event log's record of the output is damaged
)

// Verified is one task's verification: its recorded output recomputed, or
// why that could not be done.
type Verified struct {
	Task     string   `json:"task"`
	Verdict  string   `json:"verdict"`
	Reason   string   `json:"reason,omitempty"` // what is damaged or changed
	Recorded string   `json:"recorded"`
	Output   string   `json:"output,omitempty"`
	Match    bool     `json:"match"`            // Verdict == Reproduced
	Differ   []string `json:"differ,omitempty"` // entries whose content differs
	Error    string   `json:"error,omitempty"`
}

// VerifyCandidates returns, for every plan task with a recorded output, in
// plan order, the production Production picks (the plan's, else the
// latest): everything verify is asked to check.
func (r *Record) VerifyCandidates() ([]*Production, error) {
	var out []*Production
	memo := map[*dag.Task]string{}
	for _, t := range r.eng.Plan.Tasks {
		p, _, err := r.production(t, memo)
		switch {
		case errors.Is(err, ErrNotRecorded):
			d, err := r.damagedRecord(t, memo)
			if err != nil {
				return nil, err
			}
			if d != nil {
				out = append(out, d)
			}
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// damagedRecord returns, for a task production found no recorded run of,
// a Production holding only the damage when the event log nevertheless
// records an output for it (the action index, or a state event, names an
// output no done event of the task produced: a damaged log), else nil.
func (r *Record) damagedRecord(t *dag.Task, memo map[*dag.Task]string) (*Production, error) {
	if out := memo[t]; out != "" {
		return &Production{Task: t.Path, Output: out, Damage: fmt.Sprintf("the event log's action index records output %s for this task's action, but no done event of the task produced it: the event log is damaged", out)}, nil
	}
	evs, err := r.eng.Events.Events(t.Path)
	if err != nil {
		return nil, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if ev := evs[i]; ev.Type == events.TypeState && (ev.State == events.StateDone || ev.State == events.StateCached) && ev.Output != "" {
			return &Production{Task: t.Path, Output: ev.Output, Damage: fmt.Sprintf("the event log's %s event %d records output %s, but no done event of the task produced it: the event log is damaged", ev.State, ev.Seq, ev.Output)}, nil
		}
	}
	return nil, nil
}

// Sample picks n of xs with a stream seeded by seed (the same seed picks
// the same items), returned in their order. n <= 0 or n >= len(xs) returns
// them all.
func Sample[T any](xs []T, n int, seed uint64) []T {
	if n <= 0 || n >= len(xs) {
		return xs
	}
	idx := rand.New(stream.New(seed, "verify", nil).PCG("sample")).Perm(len(xs))[:n]
	slices.Sort(idx)
	out := make([]T, n)
	for i, j := range idx {
		out[i] = xs[j]
	}
	return out
}

// Verify checks each recorded production: that its output and its inputs
// are intact in the store, that this binary and DAG would run the same
// action, and then, re-executed into sc, that it gives the recorded output
// ID. Every production gets a Verified, passed to report as it is known.
func (r *Record) Verify(ctx context.Context, ps []*Production, sc *Scratch, report func(Verified)) ([]Verified, error) {
	var out []Verified
	for _, p := range ps {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("verify: %w", pipeline.ErrInterrupted)
		}
		v := Verified{Task: p.Task, Recorded: p.Output}
		v.Verdict, v.Reason = r.checkable(p)
		if v.Verdict == "" {
			re, err := r.Reexecute(ctx, p, sc, 0)
			var idErr *IdentityError
			switch {
			case err != nil && ctx.Err() != nil:
				return out, fmt.Errorf("verify: %w", pipeline.ErrInterrupted)
			case errors.As(err, &idErr):
				v.Verdict, v.Reason = Changed, describeDiff(idErr.Diff)
			case err != nil:
				v.Verdict, v.Error = Failed, err.Error()
			case re.Err != nil:
				v.Verdict, v.Error = Failed, re.Err.Error()
			case re.Output == p.Output:
				v.Verdict, v.Output = Reproduced, re.Output
			default:
				v.Verdict, v.Output = Differs, re.Output
				v.Differ = r.differingEntries(p.Task, v.Recorded, v.Output, sc)
			}
		}
		v.Match = v.Verdict == Reproduced
		out = append(out, v)
		if report != nil {
			report(v)
		}
	}
	return out, nil
}

// checkable returns "" if p's output and inputs are intact in the store,
// or the verdict and reason that keep it from being checked.
func (r *Record) checkable(p *Production) (verdict, reason string) {
	if p.Damage != "" {
		return CorruptRecord, p.Damage
	}
	if _, err := r.Checked(p.Task, p.Output); err != nil {
		return damage(err, CorruptOutput, MissingOutput), err.Error()
	}
	for _, in := range p.Inputs() {
		if _, err := r.Checked(in.Task, in.Output); err != nil {
			return damage(err, CorruptInput, MissingInput), in.Task + ": " + err.Error()
		}
	}
	return "", ""
}

// damage picks the corrupt or the missing verdict for a store error.
func damage(err error, corrupt, missing string) string {
	if errors.Is(err, store.ErrNotFound) {
		return missing
	}
	return corrupt
}

// differingEntries names the entries of two output manifests (recorded in
// e's store, recomputed in sc's) whose content differs.
func (r *Record) differingEntries(task, recorded, recomputed string, sc *Scratch) []string {
	a, err := r.OutputEntries(task, recorded)
	if err != nil {
		return []string{"(recorded manifest unreadable: " + err.Error() + ")"}
	}
	scratch := New(&pipeline.Engine{Store: sc.Store})
	b, err := scratch.OutputEntries(task, recomputed)
	if err != nil {
		return []string{"(recomputed manifest unreadable: " + err.Error() + ")"}
	}
	var out []string
	for _, name := range sortedNames(a) {
		if id, ok := b[name]; !ok {
			out = append(out, name+" (missing)")
		} else if id != a[name] {
			out = append(out, fmt.Sprintf("%s (%s recorded, %s now)", name, a[name], id))
		}
	}
	for _, name := range sortedNames(b) {
		if _, ok := a[name]; !ok {
			out = append(out, name+" (new)")
		}
	}
	return out
}

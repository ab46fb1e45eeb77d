package tune

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"zorepro/algos"
	"zorepro/pipeline/task"
)

// Kind is the tune stage kind.
type Kind struct {
	Trainers algos.Trainers
}

// Name implements task.Kind.
func (k *Kind) Name() string { return "tune" }

// Version implements task.Kind.
func (k *Kind) Version() int { return 1 }

// Slots implements task.Kind.
func (k *Kind) Slots() []task.Slot {
	return []task.Slot{{Name: "data", Required: true, Many: true}}
}

// ScoreSamples is the score name that ranks trials by the samples they used.
const ScoreSamples = "samples"

var own = []string{"env", "method", "algo", "budget", "strict_budget", "seeds", "grid", "score", "select", "reference", "budget_per"}

// point is one feasible grid point: its configuration and the choice it
// makes (the JSON of its hyperparameters, as chosen.json records it).
type point struct {
	setup  algos.Setup
	choice json.RawMessage
	vals   map[string]any // the choice decoded, for tables and logs
}

// Plan implements task.Kind.
func (k *Kind) Plan(p *task.Params) task.Runner {
	r := &runner{}
	tr, ok := k.Trainers.Decode(p)
	r.budget = algos.DecodeBudget(p, algos.Budget{}, true)
	r.seeds = p.Ints("seeds", task.Required(), task.NonEmpty(), task.Min(0))
	r.sel = p.String("select", task.Default("min"), task.OneOf("min", "max"))
	grid, haveGrid := p.Sub("grid", task.Required())
	var ref *task.Params
	if p.Has("reference") {
		ref, _ = p.Sub("reference")
	}
	if !ok || !haveGrid {
		return nil
	}
	r.trainer = tr
	metrics := tr.Metrics()
	// "samples" scores a trial by the samples it used (e.g. LQR's steps to
	// stationarity, §5.4) instead of by an evaluation metric.
	r.score = p.String("score", task.Default(metrics[0]), task.OneOf(append(slices.Clone(metrics), ScoreSamples)...))
	r.scoreIdx = slices.Index(metrics, r.score)
	base := map[string]any{}
	for _, key := range p.Keys() {
		if !slices.Contains(own, key) {
			v, _ := p.Raw(key)
			base[key] = v
		}
	}
	// The grid's axes, in the method's loop order.
	var values [][]any
	for _, h := range tr.Hyper() {
		v, ok := grid.Raw(h)
		if !ok {
			continue
		}
		l, isList := v.([]any)
		if !isList || len(l) == 0 {
			p.Errorf("grid."+h, "must be a non-empty list")
			continue
		}
		r.axes = append(r.axes, h)
		values = append(values, l)
	}
	if ref != nil {
		r.reference = map[string]any{}
		for _, h := range tr.Hyper() {
			if v, ok := ref.Raw(h); ok {
				r.reference[h] = v
			}
		}
	}
	// Problems at grid points, grouped by message: "<field>: <msg>" → points.
	var msgs []string
	where := map[string][]string{}
	for _, combo := range product(values) {
		vals := maps.Clone(base)
		at := map[string]any{}
		for i, h := range r.axes {
			vals[h] = combo[i]
			at[h] = combo[i]
		}
		cp := task.NewParams(p.File(), p.Stage(), vals)
		setup := tr.Decode(cp)
		if err := cp.Err(); err != nil {
			if setup.Validate() != nil {
				continue
			}
			for _, m := range problems(err) {
				if where[m] == nil {
					msgs = append(msgs, m)
				}
				where[m] = append(where[m], describe(r.axes, at))
			}
			continue
		}
		if setup.Validate() != nil {
			continue
		}
		pt, err := newPoint(setup, r.axes)
		if err != nil {
			p.Errorf("grid", "at %s: %v", describe(r.axes, at), err)
			continue
		}
		r.points = append(r.points, pt)
	}
	for _, m := range msgs {
		pts := where[m]
		more := ""
		if len(pts) > 1 {
			more = fmt.Sprintf(" (and %d more grid points)", len(pts)-1)
		}
		p.Errorf("grid", "at %s%s: %s", pts[0], more, m)
	}
	if len(r.points) == 0 && len(msgs) == 0 {
		p.Errorf("grid", "has no feasible point")
	}
	return r
}

// newPoint records a grid point's choice: the typed configuration's
// hyperparameters on the grid's axes.
func newPoint(setup algos.Setup, axes []string) (point, error) {
	choice, err := setup.Choice(axes)
	if err != nil {
		return point{}, err
	}
	var vals map[string]any
	if err := json.Unmarshal(choice, &vals); err != nil {
		return point{}, err
	}
	return point{setup: setup, choice: choice, vals: vals}, nil
}

// problems flattens a joined parameter error into "field: message" texts.
func problems(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, problems(e)...)
		}
		return out
	}
	var pe *task.Error
	if errors.As(err, &pe) {
		return []string{pe.Field + ": " + pe.Msg}
	}
	return []string{err.Error()}
}

func product(values [][]any) [][]any {
	out := [][]any{{}}
	for _, vs := range values {
		var next [][]any
		for _, prefix := range out {
			for _, v := range vs {
				next = append(next, append(slices.Clone(prefix), v))
			}
		}
		out = next
	}
	return out
}

func text(v any) string {
	switch x := v.(type) {
	case float64:
		return task.FormatFloat(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

func describe(axes []string, vals map[string]any) string {
	var parts []string
	for _, a := range axes {
		parts = append(parts, a+"="+text(vals[a]))
	}
	return strings.Join(parts, " ")
}

type runner struct {
	trainer   algos.Trainer
	budget    algos.Budget
	seeds     []int64
	sel       string
	score     string
	scoreIdx  int
	axes      []string
	points    []point
	reference map[string]any
}

func (r *runner) Components() []any { return r.trainer.Components() }

// Cost implements task.Costed: every trial's budget.
func (r *runner) Cost() int64 { return int64(len(r.points)*len(r.seeds)) * r.budget.Samples }

func (r *runner) Run(ctx context.Context, env task.Env) error {
	insts := make([]algos.Instance, len(r.seeds))
	// Data without a seed coordinate (e.g. MNIST) serves every seed; it is
	// loaded once.
	var shared algos.Instance
	for i, s := range r.seeds {
		want := strconv.FormatInt(s, 10)
		for _, in := range env.Inputs("data") {
			v, ok := in.Coord("seed")
			if !ok {
				if shared == nil {
					var err error
					if shared, err = r.trainer.LoadInput(in); err != nil {
						return fmt.Errorf("%s: %w", in.Task(), err)
					}
				}
				insts[i] = shared
				continue
			}
			if v == want {
				var err error
				if insts[i], err = r.trainer.LoadInput(in); err != nil {
					return fmt.Errorf("%s: %w", in.Task(), err)
				}
			}
		}
		if insts[i] == nil {
			return fmt.Errorf("no data input for tuning seed %d (add it to the upstream stage's seed axis)", s)
		}
	}
	n := len(r.points) * len(r.seeds)
	scores := make([]float64, n)
	done := make([]bool, n)
	if state, _, ok, err := env.Resume(); err != nil {
		return err
	} else if ok {
		if err := decodeState(state, done, scores); err != nil {
			env.Logf("ignoring unreadable checkpoint: %v", err)
			clear(done)
		}
	}
	var mu sync.Mutex
	finished := int64(0)
	for _, d := range done {
		if d {
			finished++
		}
	}
	src := env.Streams()
	err := env.Parallel(ctx, n, func(i int) error {
		mu.Lock()
		skip := done[i]
		mu.Unlock()
		if skip {
			return nil
		}
		pi, si := i/len(r.seeds), i%len(r.seeds)
		pt, seed := r.points[pi], r.seeds[si]
		tsrc := src.Sub("seed="+strconv.FormatInt(seed, 10), uint64(seed))
		m, err := pt.setup.New(insts[si], tsrc)
		if err != nil {
			return err
		}
		traj, err := algos.Run(ctx, m, r.budget, algos.Schedule{Every: math.MaxInt64}, nil) // trials are summarised by notes
		if err != nil {
			return err
		}
		last := traj.Points[len(traj.Points)-1]
		score := float64(last.Samples)
		if r.scoreIdx >= 0 {
			vals, err := insts[si].Evaluate(last.Params, pt.setup.Header(), tsrc.Rand("eval", uint64(last.Iteration)))
			if err != nil {
				return err
			}
			score = vals[r.scoreIdx]
		}
		mu.Lock()
		defer mu.Unlock()
		scores[i], done[i] = score, true
		finished++
		env.Note("trial", map[string]any{"point": pi, "params": pt.vals, "seed": seed, "score": jsonFloat(score), "iterations": last.Iteration, "samples": last.Samples})
		env.Progress(finished, int64(n))
		if env.CheckpointDue() {
			return env.Checkpoint(encodeState(done, scores), finished)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			mu.Lock()
			cerr := env.Checkpoint(encodeState(done, scores), finished)
			mu.Unlock()
			if cerr != nil {
				return cerr
			}
		}
		return err
	}
	return r.publish(env, scores)
}

// jsonFloat keeps non-finite scores encodable.
func jsonFloat(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return task.FormatFloat(x)
	}
	return x
}

func better(sel string, a, b float64) bool {
	if math.IsNaN(a) {
		return false
	}
	if math.IsNaN(b) {
		return true
	}
	if sel == "max" {
		return a > b
	}
	return a < b
}

func (r *runner) publish(env task.Env, scores []float64) error {
	ns := len(r.seeds)
	means := make([]float64, len(r.points))
	best := -1
	refIdx := -1
	for pi, pt := range r.points {
		sum := 0.0
		for si := 0; si < ns; si++ {
			sum += scores[pi*ns+si]
		}
		means[pi] = sum / float64(ns)
		if best < 0 || better(r.sel, means[pi], means[best]) {
			best = pi
		}
		if r.reference != nil && refIdx < 0 {
			match := true
			for k, v := range r.reference {
				if text(pt.vals[k]) != text(v) {
					match = false
				}
			}
			if match {
				refIdx = pi
			}
		}
	}
	var b bytes.Buffer
	head := append([]string{"point"}, r.axes...)
	head = append(head, "mean_"+r.score)
	for _, s := range r.seeds {
		head = append(head, fmt.Sprintf("%s_seed_%d", r.score, s))
	}
	head = append(head, "chosen", "reference")
	b.WriteString(strings.Join(head, ",") + "\n")
	for pi, pt := range r.points {
		row := []string{strconv.Itoa(pi)}
		for _, a := range r.axes {
			row = append(row, text(pt.vals[a]))
		}
		row = append(row, task.FormatFloat(means[pi]))
		for si := 0; si < ns; si++ {
			row = append(row, task.FormatFloat(scores[pi*ns+si]))
		}
		mark := func(ok bool) string {
			if ok {
				return "yes"
			}
			return ""
		}
		row = append(row, mark(pi == best), mark(pi == refIdx))
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	if err := env.Output("table.csv", b.Bytes()); err != nil {
		return err
	}
	chosen := map[string]any{
		"params": r.points[best].choice, "point": best, "score_name": r.score, "select": r.sel,
		"score": jsonFloat(means[best]), "seeds": r.seeds,
	}
	if r.reference != nil {
		chosen["reference"] = r.reference
		chosen["reference_point"] = refIdx
		if refIdx >= 0 {
			chosen["reference_score"] = jsonFloat(means[refIdx])
		}
	}
	data, err := json.MarshalIndent(chosen, "", "  ")
	if err != nil {
		return err
	}
	ref := "none given"
	if r.reference != nil {
		ref = describe(r.axes, r.reference)
	}
	env.Logf("chosen %s (mean %s %s); reference %s", describe(r.axes, r.points[best].vals), r.score, task.FormatFloat(means[best]), ref)
	return env.Output("chosen.json", append(data, '\n'))
}

func encodeState(done []bool, scores []float64) []byte {
	out := binary.AppendUvarint(nil, uint64(len(done)))
	for i := range done {
		d := byte(0)
		if done[i] {
			d = 1
		}
		out = append(out, d)
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(scores[i]))
	}
	return out
}

func decodeState(b []byte, done []bool, scores []float64) error {
	n, k := binary.Uvarint(b)
	if k <= 0 || n != uint64(len(done)) || len(b) != k+9*len(done) {
		return fmt.Errorf("tune checkpoint: want %d trials", len(done))
	}
	b = b[k:]
	for i := range done {
		done[i] = b[0] == 1
		scores[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[1:9]))
		b = b[9:]
	}
	return nil
}

package tune

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

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
func (k *Kind) Version() int { return 2 }

// Slots implements task.Kind.
func (k *Kind) Slots() []task.Slot {
	return []task.Slot{{Name: "data", Required: true, Many: true}, {Name: "carry"}}
}

// ScoreSamples is the score name that ranks trials by the samples they used.
const ScoreSamples = "samples"

var own = []string{"env", "method", "algo", "budget", "strict_budget", "seeds", "grid", "score", "select", "reference", "budget_per", "carry", "extend"}

// point is one feasible grid point: its configuration and the choice it
// makes (the JSON of its hyperparameters, as chosen.json records it).
type point struct {
	setup  algos.Setup
	choice json.RawMessage
	vals   map[string]any // the choice decoded, for tables and logs
	raw    map[string]any // the grid's values at the point, as the file gives them
	round  int            // the extension round that added it (0: the grid)
}

// Plan implements task.Kind.
func (k *Kind) Plan(p *task.Params) task.Runner {
	r := &runner{kind: k}
	tr, ok := k.Trainers.Decode(p)
	r.budget = algos.DecodeBudget(p, algos.Budget{}, true)
	r.seeds = p.Ints("seeds", task.Required(), task.NonEmpty(), task.Min(0))
	r.sel = p.String("select", task.Default("min"), task.OneOf("min", "max"))
	// Up to this many rounds that extend an axis whose chosen value is at
	// its edge (extend.go); 0 keeps the grid as it is.
	r.extend = int(p.Int("extend", task.Default(0), task.Min(0), task.Max(MaxExtend)))
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
	values := r.decodeAxes(p, grid)
	r.decodeCarry(p)
	if ref != nil {
		r.reference = map[string]any{}
		for _, h := range tr.Hyper() {
			if v, ok := ref.Raw(h); ok {
				r.reference[h] = v
			}
		}
		r.checkReference(p, base, values)
	}
	r.enumerate(p, base, values, nil)
	r.params, r.base, r.values = p, base, values
	return r
}

// decodeAxes reads the grid's axes, in the method's loop order, and
// returns each axis's values as the file gives them.
func (r *runner) decodeAxes(p, grid *task.Params) [][]any {
	var values [][]any
	for _, h := range r.trainer.Hyper() {
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
	return values
}

// decodeCarry reads "carry": hyperparameters taken from the choice of the
// tune task bound to the "carry" slot (e.g. a longer horizon tuning the
// step size only, with N and ν carried from a shorter one); the stage's
// own values of them serve when no task is bound.
func (r *runner) decodeCarry(p *task.Params) {
	if !p.Has("carry") {
		return
	}
	hyper := r.trainer.Hyper()
	r.carry = p.Strings("carry", task.NonEmpty())
	for _, k := range r.carry {
		switch {
		case !slices.Contains(hyper, k):
			p.Errorf("carry", "%q is not a hyperparameter of %s (%s)", k, p.Stage(), strings.Join(hyper, ", "))
		case slices.Contains(r.axes, k):
			p.Errorf("carry", "%q is also a grid axis", k)
		}
	}
}

// enumerate decodes every grid point as the parameters it stands for. A
// value that the same parameter would reject is an error, reported once
// per problem with the axis it is on; the points whose only problems are
// conflicts between valid values (task.Error.Conflict, e.g. top-b above
// the number of directions) or whose configuration does not validate are
// infeasible: skipped, each with its reason (Skipped, skipped.csv).
//
// keep, when not nil, picks the combinations to enumerate (an extension
// round's new points); the points are appended to r.points.
func (r *runner) enumerate(p *task.Params, base map[string]any, values [][]any, keep func(combo []any) bool) {
	var msgs []string
	where := map[string][]string{}
	for _, combo := range product(values) {
		if keep != nil && !keep(combo) {
			continue
		}
		vals := maps.Clone(base)
		at := map[string]any{}
		for i, h := range r.axes {
			vals[h] = combo[i]
			at[h] = combo[i]
		}
		cp := task.NewParams(p.File(), p.Stage(), vals)
		setup := r.trainer.Decode(cp)
		invalid, conflicts := classify(cp.Problems(), r.axes)
		for _, m := range invalid {
			if where[m] == nil {
				msgs = append(msgs, m)
			}
			where[m] = append(where[m], describe(r.axes, at))
		}
		if len(invalid) > 0 {
			continue
		}
		if len(conflicts) == 0 {
			if err := setup.Validate(); err != nil {
				conflicts = []string{err.Error()}
			}
		}
		if len(conflicts) > 0 {
			r.skipped = append(r.skipped, Skip{Point: describe(r.axes, at), Reason: strings.Join(conflicts, "; "), raw: at})
			continue
		}
		pt, err := newPoint(setup, r.axes)
		if err != nil {
			p.Errorf("grid", "at %s: %v", describe(r.axes, at), err)
			continue
		}
		pt.raw = at
		r.points = append(r.points, pt)
	}
	for _, m := range msgs {
		field, msg, _ := strings.Cut(m, "\x00")
		pts := where[m]
		more := ""
		if len(pts) > 1 {
			more = fmt.Sprintf(" (and %d more grid points)", len(pts)-1)
		}
		if strings.HasPrefix(field, "grid.") {
			p.Errorf(field, "%s", msg) // the value is in the message; every point holding it has the problem
			continue
		}
		p.Errorf(field, "%s (with the grid at %s%s)", msg, pts[0], more)
	}
	if keep == nil && len(r.points) == 0 && len(r.skipped) > 0 && len(msgs) == 0 {
		p.Errorf("grid", "has no feasible point (%d skipped: %s)", len(r.skipped), r.skipped[0].Reason)
	}
}

// trialKeys are the tune parameters a trial's identity keeps; the others
// (grid, seeds, select, reference) are about the whole grid.
var trialKeys = []string{"env", "method", "algo", "budget", "strict_budget", "budget_per", "score", "carry"}

// Parts implements task.Splitter: one trial per grid point and tuning
// seed, point-major (the order scores are reduced in), with the trial's
// own parameters (the point's values over the base, with the trainer,
// budget and score) and coordinates naming the point and the seed. They
// are decoded here, not in Plan, since only the plan that runs needs them.
func (r *runner) Parts() []task.Part {
	parts := make([]task.Part, 0, len(r.points)*len(r.seeds))
	for pi, pt := range r.points {
		var coords []task.Coord
		for _, h := range r.axes {
			coords = append(coords, task.Coord{Axis: h, Value: text(pt.raw[h])})
		}
		for _, seed := range r.seeds {
			tr, tp, err := r.trialAt(pi, pt, seed)
			if err != nil {
				r.params.Errorf("grid", "trial at %s: %v", describe(r.axes, pt.vals), err)
				return nil
			}
			parts = append(parts, task.Part{
				Coords: append(slices.Clone(coords), task.Coord{Axis: "seed", Value: strconv.FormatInt(seed, 10)}),
				Params: tp,
				Runner: tr,
			})
		}
	}
	return parts
}

// trialAt decodes the trial of grid point pi on a tuning seed: the
// point's values over the base, with the trainer, budget and score (its
// own parameters, the identity of a part).
func (r *runner) trialAt(pi int, pt point, seed int64) (*trial, *task.Params, error) {
	p := r.params
	vals := maps.Clone(r.base)
	for _, h := range r.axes {
		vals[h] = pt.raw[h]
	}
	for _, k := range trialKeys {
		if v, ok := p.Raw(k); ok {
			vals[k] = v
		}
	}
	tp := p.Derive(vals)
	tr, _ := r.kind.Trainers.Decode(tp)
	budget := algos.DecodeBudget(tp, algos.Budget{}, true)
	tp.String("score", task.Default(r.score))
	if len(r.carry) > 0 {
		tp.Strings("carry")
	}
	setup := tr.Decode(tp)
	if err := tp.Err(); err != nil {
		return nil, nil, err
	}
	t := &trial{trainer: tr, setup: setup, budget: budget, scoreIdx: r.scoreIdx, point: pi, vals: pt.vals, seed: seed, carry: r.carry}
	if dk, ok := setup.(drawKeyer); ok {
		if k, shares := dk.DrawKey(); shares {
			t.cohort = fmt.Sprintf("%s seed=%d %s", r.identity(), seed, k)
		}
	}
	return t, tp, nil
}

// drawKeyer is implemented by the setups of algorithms whose draws from
// the problem depend on a few hyperparameters only, on environments that
// can share them (algos.DrawKeyer, algos.DrawSharer).
type drawKeyer interface {
	DrawKey() (string, bool)
}

// identity returns a short digest naming the tune task (its stage and
// every resolved parameter), for its trials' cohort keys.
func (r *runner) identity() string {
	if r.ident == "" {
		h := fnv.New64a()
		h.Write([]byte(r.params.Stage() + "\n" + strings.Join(r.params.Resolved(), "\n")))
		r.ident = fmt.Sprintf("%s#%016x", r.params.Stage(), h.Sum64())
	}
	return r.ident
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

// classify splits a grid point's parameter problems into invalid values
// ("<field>\x00<message>", the field a grid axis's "grid.<axis>" when it is
// one) and conflicts between valid values ("<field>: <message>").
func classify(problems []error, axes []string) (invalid, conflicts []string) {
	for _, err := range problems {
		field, msg := "grid", err.Error()
		var pe *task.Error
		if errors.As(err, &pe) {
			field, msg = strings.TrimPrefix(pe.Field, "params."), pe.Msg
			if pe.Conflict {
				conflicts = append(conflicts, field+": "+msg)
				continue
			}
			if slices.Contains(axes, field) {
				field = "grid." + field
			}
		}
		invalid = append(invalid, field+"\x00"+msg)
	}
	return invalid, conflicts
}

// checkReference decodes the reference point as the parameters it stands
// for (its values over the base and, on axes it leaves out, the grid's
// first values) and reports each problem of a value it gives under
// "reference.<field>".
func (r *runner) checkReference(p *task.Params, base map[string]any, values [][]any) {
	vals := maps.Clone(base)
	for i, h := range r.axes {
		vals[h] = values[i][0]
	}
	maps.Copy(vals, r.reference)
	cp := task.NewParams(p.File(), p.Stage(), vals)
	r.trainer.Decode(cp)
	for _, err := range cp.Problems() {
		var pe *task.Error
		if !errors.As(err, &pe) {
			continue
		}
		field := strings.TrimPrefix(pe.Field, "params.")
		if _, given := r.reference[field]; given {
			p.Errorf("reference."+field, "%s", pe.Msg)
		}
	}
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
	kind      *Kind
	trainer   algos.Trainer
	budget    algos.Budget
	seeds     []int64
	sel       string
	score     string
	scoreIdx  int
	axes      []string
	points    []point
	skipped   []Skip
	reference map[string]any
	carry     []string       // hyperparameters taken from the "carry" input's choice
	params    *task.Params   // the stage's, for Parts
	base      map[string]any // the parameters that are not the tune stage's own
	ident     string         // identity's digest, once computed
	extend    int            // extension rounds at most (extend.go)
	values    [][]any        // each axis's values as the file gives them
}

var _ task.Splitter = (*runner)(nil)

// Skip is an infeasible grid point the tune stage leaves out: the point
// ("axis=value …", in grid loop order) and why.
type Skip struct {
	Point  string         `json:"point"`
	Reason string         `json:"reason"`
	raw    map[string]any // the point's values as the file gives them
}

// Skipped returns the grid points left out as infeasible, in grid order,
// for the plan to show (`pipeline dag`, `run --dry-run`).
func (r *runner) Skipped() []Skip { return r.skipped }

func (r *runner) Components() []any { return r.trainer.Components() }

// Run reads the trials' scores (its parts, in trial order) and selects.
func (r *runner) Run(ctx context.Context, env task.Env) error {
	ins := env.Inputs(task.PartsSlot)
	if len(ins) != len(r.points)*len(r.seeds) {
		return fmt.Errorf("%d trial inputs for %d points × %d seeds", len(ins), len(r.points), len(r.seeds))
	}
	scores := make([]float64, len(ins))
	for i, in := range ins {
		b, err := in.Read(scoreFile)
		if err != nil {
			return fmt.Errorf("trial %s: %w", in.Task(), err)
		}
		var res trialResult
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("trial %s: %s: %w", in.Task(), scoreFile, err)
		}
		if scores[i], err = strconv.ParseFloat(res.Score, 64); err != nil {
			return fmt.Errorf("trial %s: %s: %w", in.Task(), scoreFile, err)
		}
	}
	c, from, err := carried(env, r.carry)
	if err != nil {
		return err
	}
	var search *Search
	if r.extend > 0 {
		if scores, search, err = r.extendEdges(ctx, env, scores); err != nil {
			return err
		}
	}
	return r.publish(env, scores, c, from, search)
}

// scoreFile is a trial's output.
const scoreFile = "score.json"

// trialResult is a trial's output: its score (exact: FormatFloat text,
// NaN and infinities included) and how far it ran.
type trialResult struct {
	Score      string `json:"score"`
	Iterations int64  `json:"iterations"`
	Samples    int64  `json:"samples"`
}

// trial runs one grid point on one tuning seed, to the budget, and scores
// it by one final evaluation (or by the samples it used).
type trial struct {
	trainer  algos.Trainer
	setup    algos.Setup
	budget   algos.Budget
	scoreIdx int
	point    int
	vals     map[string]any
	seed     int64
	carry    []string
	// cohort is the trial's task.Cohort key: the trials of one tune task
	// and seed whose configurations draw the same batches ("" for none).
	cohort string
}

func (t *trial) Components() []any { return t.trainer.Components() }

// CohortKey implements task.Cohort.
func (t *trial) CohortKey() string { return t.cohort }

// Cost implements task.Costed: the trial's budget.
func (t *trial) Cost() int64 { return t.budget.Samples }

func (t *trial) Run(ctx context.Context, env task.Env) error {
	res, err := t.run(ctx, env)
	if err != nil {
		return err
	}
	out, _ := json.Marshal(res)
	return env.Output(scoreFile, append(out, '\n'))
}

// run runs the trial and returns its result: in a part's task (Run), or
// in its tune task when an extension round adds it (extend.go).
func (t *trial) run(ctx context.Context, env task.Env) (trialResult, error) {
	var inst algos.Instance
	for _, in := range env.Inputs("data") {
		// Data without a seed coordinate (e.g. MNIST) serves every seed.
		if v, ok := in.Coord("seed"); ok && v != strconv.FormatInt(t.seed, 10) {
			continue
		}
		var err error
		if inst, err = t.trainer.LoadInput(in); err != nil {
			return trialResult{}, fmt.Errorf("%s: %w", in.Task(), err)
		}
		// In a cohort, the trials on this data draw their batches once.
		if se, ok := env.(task.ShareEnv); ok && t.cohort != "" {
			inst = algos.WithSharer(inst, se.Sharer(), in.ID("data"))
		}
		break
	}
	if inst == nil {
		return trialResult{}, fmt.Errorf("no data input for tuning seed %d (add it to the upstream stage's seed axis)", t.seed)
	}
	// All grid points of one seed share the seed's streams: the tune
	// task's (a part draws from its parent's), scope "seed=<s>".
	tsrc := env.Streams().Sub("seed="+strconv.FormatInt(t.seed, 10), uint64(t.seed))
	setup := t.setup
	if c, _, err := carried(env, t.carry); err != nil {
		return trialResult{}, err
	} else if c != nil {
		if setup, err = setup.Tuned(c); err != nil {
			return trialResult{}, err
		}
	}
	m, err := setup.New(inst, tsrc)
	if err != nil {
		return trialResult{}, err
	}
	if pm, ok := m.(algos.Parallelizer); ok { // a job with several CPUs spreads a trial's rollouts over them
		pm.SetParallel(func(n int, fn func(i int) error) error { return env.Parallel(ctx, n, fn) })
	}
	traj, err := algos.Run(ctx, m, t.budget, algos.Schedule{Every: math.MaxInt64}, nil) // trials are summarised by notes
	if err != nil {
		return trialResult{}, err
	}
	last := traj.Points[len(traj.Points)-1]
	score := float64(last.Samples)
	if t.scoreIdx >= 0 {
		vals, err := inst.Evaluate(last.Params, setup.Header(), tsrc.Rand("eval", uint64(last.Iteration)))
		if err != nil {
			return trialResult{}, err
		}
		score = vals[t.scoreIdx]
	}
	env.Note("trial", map[string]any{"point": t.point, "params": t.vals, "seed": t.seed, "score": jsonFloat(score), "iterations": last.Iteration, "samples": last.Samples})
	return trialResult{Score: task.FormatFloat(score), Iterations: last.Iteration, Samples: last.Samples}, nil
}

// carried returns the JSON object of the keys taken from the choice of the
// tune task bound to the "carry" slot, and that task; nil when there are no
// keys or no task is bound (the stage's own values then serve).
func carried(env task.Env, keys []string) (json.RawMessage, string, error) {
	ins := env.Inputs("carry")
	if len(keys) == 0 || len(ins) == 0 {
		return nil, "", nil
	}
	in := ins[0]
	data, err := in.Read("chosen.json")
	if err != nil {
		return nil, "", err
	}
	var chosen struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(data, &chosen); err != nil {
		return nil, "", fmt.Errorf("%s chosen.json: %w", in.Task(), err)
	}
	out := map[string]json.RawMessage{}
	for _, k := range keys {
		v, ok := chosen.Params[k]
		if !ok {
			return nil, "", fmt.Errorf("%s chosen.json: no %q to carry", in.Task(), k)
		}
		out[k] = v
	}
	b, err := json.Marshal(out) // keys sorted
	return b, in.Task(), err
}

// jsonFloat keeps non-finite scores encodable.
func jsonFloat(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return task.FormatFloat(x)
	}
	return x
}

// skippedTable is skipped.csv: one row per infeasible grid point, its
// values and the reason.
func (r *runner) skippedTable() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(append(slices.Clone(r.axes), "reason"))
	for _, sk := range r.skipped {
		var row []string
		for _, a := range r.axes {
			row = append(row, text(sk.raw[a]))
		}
		w.Write(append(row, sk.Reason))
	}
	w.Flush()
	return b.Bytes()
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

// publish writes table.csv, skipped.csv (when points were infeasible) and
// chosen.json: the best point's choice, with the carried hyperparameters
// (carry, from the task from) laid under it.
func (r *runner) publish(env task.Env, scores []float64, carry json.RawMessage, from string, search *Search) error {
	means, best, refIdx := r.selectPoint(scores)
	if err := env.Output("table.csv", r.table(scores, means, best, refIdx, search != nil)); err != nil {
		return err
	}
	if len(r.skipped) > 0 {
		if err := env.Output("skipped.csv", r.skippedTable()); err != nil {
			return err
		}
	}
	data, err := r.chosen(means, best, refIdx, carry, from, search)
	if err != nil {
		return err
	}
	if search != nil {
		env.Logf("search: %d extension round(s); %s", search.Rounds, search.Stopped)
	}
	ref := "none given"
	if r.reference != nil {
		ref = describe(r.axes, r.reference)
	}
	env.Logf("chosen %s (mean %s %s); reference %s", describe(r.axes, r.points[best].vals), r.score, task.FormatFloat(means[best]), ref)
	if carry != nil {
		env.Logf("carried from %s: %s", from, carry)
	}
	return env.Output("chosen.json", data)
}

// selectPoint averages each point's scores over the seeds (in seed order)
// and returns the means, the best point (ties to the first) and the
// reference point (-1 when none is on the grid).
func (r *runner) selectPoint(scores []float64) (means []float64, best, refIdx int) {
	ns := len(r.seeds)
	means = make([]float64, len(r.points))
	best, refIdx = -1, -1
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
	return means, best, refIdx
}

// table is table.csv: every point's values, mean and per-seed scores, the
// chosen and the reference point marked.
//
// With extension rounds (rounds), a last column "round" gives the round
// that added each point (0: the grid).
func (r *runner) table(scores, means []float64, best, refIdx int, rounds bool) []byte {
	ns := len(r.seeds)
	var b bytes.Buffer
	head := append([]string{"point"}, r.axes...)
	head = append(head, "mean_"+r.score)
	for _, s := range r.seeds {
		head = append(head, fmt.Sprintf("%s_seed_%d", r.score, s))
	}
	head = append(head, "chosen", "reference")
	if rounds {
		head = append(head, "round")
	}
	b.WriteString(strings.Join(head, ",") + "\n")
	mark := func(ok bool) string {
		if ok {
			return "yes"
		}
		return ""
	}
	for pi, pt := range r.points {
		row := []string{strconv.Itoa(pi)}
		for _, a := range r.axes {
			row = append(row, text(pt.vals[a]))
		}
		row = append(row, task.FormatFloat(means[pi]))
		for si := 0; si < ns; si++ {
			row = append(row, task.FormatFloat(scores[pi*ns+si]))
		}
		row = append(row, mark(pi == best), mark(pi == refIdx))
		if rounds {
			row = append(row, strconv.Itoa(pt.round))
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	return b.Bytes()
}

// chosen is chosen.json: the best point's choice with the carried
// hyperparameters laid under it, its score, and the reference's.
//
// With extension rounds, "search" records them (Search).
func (r *runner) chosen(means []float64, best, refIdx int, carry json.RawMessage, from string, search *Search) ([]byte, error) {
	params := r.points[best].choice
	if carry != nil {
		var merged map[string]json.RawMessage
		if err := json.Unmarshal(carry, &merged); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(params, &merged); err != nil {
			return nil, err
		}
		var err error
		if params, err = json.Marshal(merged); err != nil {
			return nil, err
		}
	}
	chosen := map[string]any{
		"params": params, "point": best, "score_name": r.score, "select": r.sel,
		"score": jsonFloat(means[best]), "seeds": r.seeds,
	}
	if carry != nil {
		chosen["carried"], chosen["carried_from"] = carry, from
	}
	if search != nil {
		chosen["search"] = search
	}
	if r.reference != nil {
		chosen["reference"] = r.reference
		chosen["reference_point"] = refIdx
		if refIdx >= 0 {
			chosen["reference_score"] = jsonFloat(means[refIdx])
		}
	}
	data, err := json.MarshalIndent(chosen, "", "  ")
	return append(data, '\n'), err
}

package tune

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"zorepro/pipeline/task"
)

// MaxExtend bounds the parameter "extend": the extension rounds of a tune
// task.
const MaxExtend = 3

// Search is how a tune task with extension rounds ("extend" > 0) searched,
// as chosen.json records it: the values each round added and why the
// search stopped.
type Search struct {
	Rounds   int         `json:"rounds"`
	Extended []Extension `json:"extended,omitempty"`
	Stopped  string      `json:"stopped"`
}

// Extension is one value an extension round added to an axis.
type Extension struct {
	Round int    `json:"round"`
	Axis  string `json:"axis"`
	Value any    `json:"value"`
	// Edge is "smallest" or "largest": the end of the axis the chosen
	// value was at, beyond which the value was added.
	Edge string `json:"edge"`
}

// extendEdges runs the extension rounds of a tune task after its grid's
// trials (scores, in trial order): while the best point's value on an
// axis of at least three numeric values is that axis's smallest or
// largest, and fewer than r.extend rounds have run, every such axis gets
// one more value beyond that edge (extendValue) and the new points of the
// grid so extended (every combination holding a new value; infeasible ones
// skipped, as in the grid) are tried on every tuning seed. A round's
// trials run in this task, as its parts would (the same streams, hence
// the same scores), through Env.Parallel, and the task checkpoints after
// each round. It returns the scores of the grid and every round's trials,
// in point order, and the Search.
func (r *runner) extendEdges(ctx context.Context, env task.Env, scores []float64) ([]float64, *Search, error) {
	search := &Search{}
	var done [][]float64 // the rounds' scores, as checkpointed
	if state, _, ok, err := env.Resume(); err != nil {
		return nil, nil, err
	} else if ok {
		if err := json.Unmarshal(state, &done); err != nil {
			return nil, nil, fmt.Errorf("extension checkpoint: %w", err)
		}
	}
	ns := len(r.seeds)
	for {
		_, best, _ := r.selectPoint(scores)
		exts := r.edgeExtensions(best, search.Rounds+1)
		switch {
		case len(exts) == 0:
			search.Stopped = "the chosen point is inside the grid on every axis of three or more values"
			if search.Rounds > 0 {
				search.Stopped = fmt.Sprintf("the chosen point is inside the extended grid after %d round(s)", search.Rounds)
			}
			return scores, search, nil
		case search.Rounds == r.extend:
			search.Stopped = fmt.Sprintf("the chosen point is still at an edge after %d extension round(s), the most allowed (extend: %d)", search.Rounds, r.extend)
			return scores, search, nil
		}
		before := len(r.points)
		r.extendGrid(exts)
		search.Rounds++
		for i := before; i < len(r.points); i++ {
			r.points[i].round = search.Rounds
		}
		search.Extended = append(search.Extended, exts...)
		if len(r.points) == before {
			search.Stopped = fmt.Sprintf("round %d added no feasible point (%s)", search.Rounds, describeExts(exts))
			return scores, search, nil
		}
		var round []float64
		if search.Rounds <= len(done) {
			round = done[search.Rounds-1]
			if len(round) != (len(r.points)-before)*ns {
				return nil, nil, fmt.Errorf("extension checkpoint: round %d has %d scores, want %d", search.Rounds, len(round), (len(r.points)-before)*ns)
			}
		} else {
			env.Logf("extension round %d: %s, %d new points", search.Rounds, describeExts(exts), len(r.points)-before)
			var err error
			if round, err = r.runTrials(ctx, env, before); err != nil {
				return nil, nil, err
			}
			done = append(done, round)
			state, _ := json.Marshal(done)
			if err := env.Checkpoint(state, int64(search.Rounds)); err != nil {
				return nil, nil, err
			}
		}
		scores = append(scores, round...)
	}
}

// runTrials runs the trials of the points from index first on, on every
// tuning seed, and returns their scores in trial order.
func (r *runner) runTrials(ctx context.Context, env task.Env, first int) ([]float64, error) {
	ns := len(r.seeds)
	out := make([]float64, (len(r.points)-first)*ns)
	trials := make([]*trial, len(out)) // decoded here: parameters are not safe for concurrent use
	for i := range trials {
		pi := first + i/ns
		tr, _, err := r.trialAt(pi, r.points[pi], r.seeds[i%ns])
		if err != nil {
			return nil, fmt.Errorf("extension trial at %s: %w", describe(r.axes, r.points[pi].vals), err)
		}
		trials[i] = tr
	}
	err := env.Parallel(ctx, len(out), func(i int) error {
		pi, seed, tr := first+i/ns, r.seeds[i%ns], trials[i]
		res, err := tr.run(ctx, env)
		if err != nil {
			return fmt.Errorf("extension trial at %s, seed %d: %w", describe(r.axes, r.points[pi].vals), seed, err)
		}
		out[i], err = strconv.ParseFloat(res.Score, 64)
		return err
	})
	return out, err
}

// edgeExtensions returns, for each axis of at least three numeric values
// (as gridEdges of the report counts them) on which the point best sits at
// the smallest or largest value, the value one step beyond (extendValue),
// for the given round; axes whose step cannot be taken are left out.
func (r *runner) edgeExtensions(best, round int) []Extension {
	var out []Extension
	for i, axis := range r.axes {
		vals, isInt, ok := numeric(r.values[i])
		if !ok || len(vals) < 3 {
			continue
		}
		v, _ := toFloat(r.points[best].raw[axis])
		var edge string
		switch v {
		case slices.Min(vals):
			edge = "smallest"
		case slices.Max(vals):
			edge = "largest"
		default:
			continue
		}
		nv, ok := extendValue(vals, edge == "smallest", isInt)
		if !ok {
			continue
		}
		var value any = nv
		if isInt {
			value = int(nv)
		}
		out = append(out, Extension{Round: round, Axis: axis, Value: value, Edge: edge})
	}
	return out
}

// extendValue returns the value one step beyond the smallest (low) or the
// largest of vals (at least two distinct values): by the ratio of the two
// outermost values when both are positive (a geometric step, as the
// step-size grids are), else by their difference; rounded to three
// significant digits, or to an integer for an integer axis. ok is false
// when the step gives no new value (or, for an integer axis, none ≥ 1).
func extendValue(vals []float64, low, isInt bool) (float64, bool) {
	s := slices.Sorted(slices.Values(vals))
	edge, next := s[len(s)-1], s[len(s)-2]
	if low {
		edge, next = s[0], s[1]
	}
	v := edge + (edge - next)
	if edge > 0 && next > 0 {
		v = edge * (edge / next)
	}
	if isInt {
		v = math.Round(v)
		if v < 1 {
			return 0, false
		}
	} else {
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || slices.Contains(s, v) {
		return 0, false
	}
	return v, true
}

// extendGrid adds each extension's value to its axis and appends the new
// feasible points: every combination of the extended axes' values that
// holds at least one new value.
func (r *runner) extendGrid(exts []Extension) {
	values := make([][]any, len(r.values))
	isNew := make([]any, len(r.axes))
	for i := range r.values {
		values[i] = slices.Clone(r.values[i])
		for _, e := range exts {
			if e.Axis == r.axes[i] {
				values[i] = append(values[i], e.Value)
				isNew[i] = e.Value
			}
		}
	}
	r.enumerate(r.params, r.base, values, func(combo []any) bool {
		for i, v := range combo {
			if isNew[i] != nil && v == isNew[i] {
				return true
			}
		}
		return false
	})
	r.values = values
}

// numeric returns an axis's values as floats, whether they are all
// integers, and false when one is not a number.
func numeric(vs []any) ([]float64, bool, bool) {
	out := make([]float64, 0, len(vs))
	allInt := true
	for _, v := range vs {
		f, isInt := toFloat(v)
		if math.IsNaN(f) {
			return nil, false, false
		}
		allInt = allInt && isInt
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, allInt, true
}

// toFloat returns a grid value as a float (NaN when it is not a number)
// and whether it is an integer.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, false
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return math.NaN(), false
}

func describeExts(exts []Extension) string {
	var parts []string
	for _, e := range exts {
		parts = append(parts, fmt.Sprintf("%s=%s beyond its %s", e.Axis, text(e.Value), e.Edge))
	}
	return strings.Join(parts, ", ")
}

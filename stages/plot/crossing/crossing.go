package crossing

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"zorepro/stages/plot/seedscsv"
)

// Key is one horizon of one body: the leader's per-seed values and each
// rival's, index-aligned by seed (paired).
type Key struct {
	At     float64
	Leader []float64
	Rivals [][]float64
}

// Side is where the leader stands at a key.
type Side int

// Sides.
const (
	Undecided Side = iota // neither clearly ahead of every rival nor clearly behind one
	Ahead                 // the paired interval against every rival is above 0
	Behind                // the paired interval against some rival is below 0
)

// Bracket is one body's crossover horizon: H* in (Lo, Hi] if the leader's
// advantage changes sign once.
type Bracket struct {
	// Lo is the largest key where the leader is clearly behind (0: none);
	// Hi the smallest where it is clearly ahead (+Inf: none).
	Lo, Hi float64
	// Point is where the leader's mean advantage over the best rival's
	// mean last turns positive, interpolated linearly in log key between
	// the two keys around it: NaN when it is positive at every key (H*
	// below the grid) or not at the last (beyond it).
	Point float64
	// Sides is the leader's side at each key, in key order.
	Sides []Side
	// Seeds is the fewest seeds behind any key's intervals.
	Seeds int
	// Unused says why the body takes no part in the analysis (its premise
	// does not hold: Analyze); then Lo is 0, Hi +Inf and Point NaN, a
	// bracket that bounds nothing.
	Unused string
}

// Consistent reports whether the leader is clearly behind only below
// where it is clearly ahead: otherwise the advantage changes sign more
// than once and there is no single crossover.
func (b Bracket) Consistent() bool { return b.Lo < b.Hi }

// Find brackets the crossover of one body from its keys (in increasing
// order of At), each interval at level 1 − alpha.
func Find(keys []Key, alpha float64) Bracket {
	b := Bracket{Lo: 0, Hi: math.Inf(1), Point: math.NaN(), Seeds: math.MaxInt}
	adv := make([]float64, len(keys)) // mean advantage over the best rival's mean
	for i, k := range keys {
		side := Ahead
		adv[i] = math.Inf(1)
		for _, r := range k.Rivals {
			_, lo, hi := PairedT(k.Leader, r, alpha)
			switch {
			case hi < 0:
				side = Behind
			case !(lo > 0) && side == Ahead:
				side = Undecided
			}
			adv[i] = math.Min(adv[i], mean(k.Leader)-mean(r))
		}
		b.Sides = append(b.Sides, side)
		b.Seeds = min(b.Seeds, len(k.Leader))
		switch side {
		case Behind:
			b.Lo = math.Max(b.Lo, k.At)
		case Ahead:
			b.Hi = math.Min(b.Hi, k.At)
		}
	}
	if len(keys) == 0 {
		b.Seeds = 0
		return b
	}
	last := len(adv) - 1
	if adv[last] > 0 {
		j := last
		for j >= 0 && adv[j] > 0 {
			j--
		}
		if j >= 0 { // adv[j] <= 0 < adv[j+1]
			lx, ux := math.Log(keys[j].At), math.Log(keys[j+1].At)
			b.Point = math.Exp(lx + (0-adv[j])/(adv[j+1]-adv[j])*(ux-lx))
		}
	}
	return b
}

// PairedT is the mean of a − b over seeds (a[i], b[i] one seed's) with its
// two-sided Student t interval at level 1 − alpha (NaN bounds from fewer
// than two seeds).
func PairedT(a, b []float64, alpha float64) (m, lo, hi float64) {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	m = mean(d)
	if len(d) < 2 {
		return m, math.NaN(), math.NaN()
	}
	v := 0.0
	for _, x := range d {
		v += (x - m) * (x - m)
	}
	v /= float64(len(d) - 1)
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}.Quantile(1-alpha/2) * math.Sqrt(v/float64(len(d)))
	return m, m - half, m + half
}

// Slopes is the interval of slopes s of the lines log H = c + s·log x
// that pass through every bracket (bracket i at x[i] > 0): [lo, hi], and
// ok false when no line passes through all (or a bracket is inconsistent).
func Slopes(x []float64, bs []Bracket) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(-1), math.Inf(1)
	for i := range bs {
		for j := range bs {
			xi, xj := math.Log(x[i]), math.Log(x[j])
			// log Lo_i − s·x_i ≤ log Hi_j − s·x_j for every i, j.
			room := math.Log(bs[j].Hi) - math.Log(bs[i].Lo)
			switch {
			case xj > xi:
				hi = math.Min(hi, room/(xj-xi))
			case xj < xi:
				lo = math.Max(lo, room/(xj-xi))
			case !(room > 0): // the same x: Lo_i below Hi_j (i = j: consistent)
				return lo, hi, false
			}
		}
	}
	return lo, hi, lo <= hi
}

// Fit is the least-squares slope of log Point against log x over the
// consistent brackets with a point (NaN with fewer than two distinct x),
// and the intercept of the line of slope fixed at s through the same
// points (NaN with none). An inconsistent bracket's point is where its
// last sign change happens, not a crossover: it takes no part.
func Fit(x []float64, bs []Bracket, s float64) (slope, interceptAtS float64) {
	var lx, ly []float64
	for i, b := range bs {
		if !math.IsNaN(b.Point) && b.Consistent() {
			lx, ly = append(lx, math.Log(x[i])), append(ly, math.Log(b.Point))
		}
	}
	if len(lx) == 0 {
		return math.NaN(), math.NaN()
	}
	mx, my := mean(lx), mean(ly)
	var sxy, sxx float64
	for i := range lx {
		sxy += (lx[i] - mx) * (ly[i] - my)
		sxx += (lx[i] - mx) * (lx[i] - mx)
	}
	slope = math.NaN()
	if sxx > 0 {
		slope = sxy / sxx
	}
	return slope, my - s*mx
}

// mean is the arithmetic mean, in order (NaN for none).
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Scaling is the crossover analysis of a figure's bodies (panels): each
// body's bracket, every interval at level 1 − Alpha with Alpha = 0.05
// divided by the intervals taken (Bonferroni), and the slopes of the
// power laws through all brackets.
type Scaling struct {
	Panels   []string
	X        []float64 // each panel's value on the log-log x axis (d/p)
	Brackets []Bracket
	Alpha    float64
	Horizons int // keys over all panels
	Rivals   int
	// Lo and Hi bound the slopes of the lines through every bracket;
	// OK is false when no line passes through all (or a bracket is
	// inconsistent).
	Lo, Hi float64
	OK     bool
}

// Premise is what a body's data must show to take part in the analysis:
// the mean of curves[0] over the mean of curves[1] leaves [Lo, Hi] at one
// key at least. Methods whose mean returns never differ by more than a
// hair (Humanoid at short horizons, where every method's best is to stand
// still and collect the alive bonus: 40.005 to 40.012 at H = 8) can still
// differ clearly under a paired t interval, by a consistent 10⁻⁵ of the
// return, and would bracket a crossover that says nothing about learning.
// The zero Premise admits every body.
type Premise struct{ Lo, Hi float64 }

// Set reports whether p restricts anything.
func (p Premise) Set() bool { return p.Lo < p.Hi }

// check returns why a body with these keys is not used ("" if it is):
// the mean ratio of curves[0] over curves[1] at each key, none outside.
func (p Premise) check(keys []Key, curves []string) string {
	if !p.Set() {
		return ""
	}
	var parts []string
	for _, k := range keys {
		r := mean(k.Leader) / mean(k.Rivals[0])
		if !(r >= p.Lo && r <= p.Hi) {
			return ""
		}
		parts = append(parts, strconv.FormatFloat(r, 'g', 6, 64)+" at "+strconv.FormatFloat(k.At, 'g', -1, 64))
	}
	return fmt.Sprintf("the mean %s / %s is %s, which never leaves [%s, %s]", curves[0], curves[1], strings.Join(parts, ", "),
		strconv.FormatFloat(p.Lo, 'g', -1, 64), strconv.FormatFloat(p.Hi, 'g', -1, 64))
}

// Analyze brackets the horizon from which curves[0] is ahead of every
// other curve in each panel of rows (x: each panel's value), and the
// slopes through the brackets. A body whose keys fail the premise keeps
// its sides but bounds nothing (Bracket.Unused); its intervals still
// count in the Bonferroni division, which the premise (on means, not
// intervals) does not choose.
func Analyze(rows []seedscsv.Row, panels []string, x []float64, curves []string, premise Premise) (Scaling, error) {
	s := Scaling{Panels: panels, X: x, Rivals: len(curves) - 1}
	bodies := make([][]Key, len(panels))
	for i, panel := range panels {
		keys, err := Keys(rows, panel, curves)
		if err != nil {
			return s, err
		}
		bodies[i] = keys
		s.Horizons += len(keys)
	}
	s.Alpha = 0.05 / float64(s.Horizons*s.Rivals)
	for _, keys := range bodies {
		b := Find(keys, s.Alpha)
		if why := premise.check(keys, curves); why != "" {
			b.Lo, b.Hi, b.Point, b.Unused = 0, math.Inf(1), math.NaN(), why
		}
		s.Brackets = append(s.Brackets, b)
	}
	s.Lo, s.Hi, s.OK = Slopes(x, s.Brackets)
	return s, nil
}

// Used is how many bodies take part (their premise holds).
func (s Scaling) Used() int {
	n := 0
	for _, b := range s.Brackets {
		if b.Unused == "" {
			n++
		}
	}
	return n
}

// Keys gathers one panel's keys: at each x (in increasing order), the
// per-seed values of curves[0] and of each other curve over the seeds all
// of them have there, in seed order.
func Keys(rows []seedscsv.Row, panel string, curves []string) ([]Key, error) {
	type at struct {
		x     float64
		curve string
	}
	vals := map[at]map[uint64]float64{}
	var xs []float64
	for _, r := range rows {
		if r.Panel != panel || !slices.Contains(curves, r.Curve) {
			continue
		}
		k := at{r.X, r.Curve}
		if vals[k] == nil {
			vals[k] = map[uint64]float64{}
		}
		if !slices.Contains(xs, r.X) {
			xs = append(xs, r.X)
		}
		vals[k][r.Seed] = r.Y
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("panel %q has no points of %s", panel, strings.Join(curves, ", "))
	}
	slices.Sort(xs)
	var keys []Key
	for _, x := range xs {
		var seeds []uint64
		for s := range vals[at{x, curves[0]}] {
			all := true
			for _, cv := range curves[1:] {
				_, has := vals[at{x, cv}][s]
				all = all && has
			}
			if all {
				seeds = append(seeds, s)
			}
		}
		if len(seeds) < 2 {
			return nil, fmt.Errorf("panel %q at x = %s: %d seed(s) shared by %s; a bracket needs paired values of at least two", panel, strconv.FormatFloat(x, 'g', -1, 64), len(seeds), strings.Join(curves, ", "))
		}
		slices.Sort(seeds)
		k := Key{At: x}
		for _, s := range seeds {
			k.Leader = append(k.Leader, vals[at{x, curves[0]}][s])
		}
		for _, cv := range curves[1:] {
			r := make([]float64, len(seeds))
			for i, s := range seeds {
				r[i] = vals[at{x, cv}][s]
			}
			k.Rivals = append(k.Rivals, r)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"zorepro/stages/plot/seedscsv"
)

// Row is one per-seed point of a figure: a line of "<figure>-seeds.csv",
// read through the format's own package (stages/plot/seedscsv), which
// holds nothing of the plot renderer: editing how figures are drawn
// reruns the report only when a figure's bytes change.
type Row = seedscsv.Row

// Table is a figure's per-seed points, in file order.
type Table []Row

// ParseSeedsCSV reads the plot stage's per-seed CSV.
func ParseSeedsCSV(data []byte) (Table, error) {
	rows, err := seedscsv.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTable, err)
	}
	return Table(rows), nil
}

// Panels returns the panels in the order they first appear.
func (t Table) Panels() []string {
	var out []string
	for _, r := range t {
		if !slices.Contains(out, r.Panel) {
			out = append(out, r.Panel)
		}
	}
	return out
}

// At says where on its curve a claim looks: the zero value is "last".
type At struct {
	// Common: the largest x that every curve of the claim reaches in the
	// panel.
	Common bool
	// Matched: the largest x that every curve reaches in every panel of
	// the claim (a comparison across panels at one budget).
	Matched bool
	// X, if Set, is a given x: the last point at or below it.
	X   float64
	Set bool
}

// Overshoot is how far past the common x a curve's last point may lie and
// still count as reaching it: a method that stops at the first iteration
// past a budget overshoots it by one batch (96 samples past 10^5 is
// 0.1%).
const Overshoot = 0.01

// String is the form the claims file uses: "last", "common", "matched" or
// a number.
func (a At) String() string {
	switch {
	case a.Common:
		return "common"
	case a.Matched:
		return "matched"
	case a.Set:
		return strconv.FormatFloat(a.X, 'g', -1, 64)
	}
	return "last"
}

// ParseAt reads "last", "common", "matched" or a number.
func ParseAt(s string) (At, error) {
	switch s {
	case "", "last":
		return At{}, nil
	case "common":
		return At{Common: true}, nil
	case "matched":
		return At{Matched: true}, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return At{}, fmt.Errorf("%q is not last, common, matched or a finite number", s)
	}
	return At{X: x, Set: true}, nil
}

// Point is the per-seed values of each curve at one x of one panel.
type Point struct {
	Panel string
	// X is the x looked at per curve (they differ under "last").
	X map[string]float64
	// Seeds are each curve's seeds and values, in seed order.
	Seeds  map[string][]uint64
	Values map[string][]float64
}

// Point returns the values of curves at a in panel. A curve without
// points in the panel is an error.
func (t Table) Point(panel string, curves []string, a At) (*Point, error) {
	xs := map[string][]float64{} // curve → its distinct x, increasing
	for _, r := range t {
		if r.Panel == panel && slices.Contains(curves, r.Curve) && !slices.Contains(xs[r.Curve], r.X) {
			xs[r.Curve] = append(xs[r.Curve], r.X)
		}
	}
	target := map[string]float64{}
	common := math.Inf(1)
	for _, c := range curves {
		v := xs[c]
		if len(v) == 0 {
			return nil, noCurve(c, panel)
		}
		slices.Sort(v)
		common = min(common, v[len(v)-1])
	}
	for _, c := range curves {
		v := xs[c]
		switch {
		case a.Common:
			target[c] = lastAtOrBelow(v, common*(1+Overshoot))
		case a.Set:
			target[c] = lastAtOrBelow(v, a.X)
		default:
			target[c] = v[len(v)-1]
		}
		if math.IsNaN(target[c]) {
			return nil, fmt.Errorf("%w: curve %q has no point at or below x = %s in panel %q", ErrTable, c, a, panel)
		}
	}
	p := &Point{Panel: panel, X: target, Seeds: map[string][]uint64{}, Values: map[string][]float64{}}
	for _, c := range curves {
		type sv struct {
			seed uint64
			y    float64
		}
		var got []sv
		for _, r := range t {
			if r.Panel == panel && r.Curve == c && r.X == target[c] {
				got = append(got, sv{r.Seed, r.Y})
			}
		}
		slices.SortStableFunc(got, func(a, b sv) int { return cmp.Compare(a.seed, b.seed) })
		for _, g := range got {
			p.Seeds[c] = append(p.Seeds[c], g.seed)
			p.Values[c] = append(p.Values[c], g.y)
		}
	}
	return p, nil
}

// lastAtOrBelow returns the largest of the sorted xs at or below x, or
// NaN.
func lastAtOrBelow(xs []float64, x float64) float64 {
	out := math.NaN()
	for _, v := range xs {
		if v <= x {
			out = v
		}
	}
	return out
}

// shared reports whether curves a and b have the same seeds at p.
func (p *Point) shared(a, b string) bool { return slices.Equal(p.Seeds[a], p.Seeds[b]) }

// value is curve c's value for seed at p (NaN when it has none).
func (p *Point) value(c string, seed uint64) float64 {
	if i := slices.Index(p.Seeds[c], seed); i >= 0 {
		return p.Values[c][i]
	}
	return math.NaN()
}

// where says at which x a claim's point was taken: one x, or each curve's.
func (p *Point) where(c Claim) string {
	var xs []string
	same := true
	for _, cv := range c.Curves {
		if x, ok := p.X[cv]; ok {
			xs = append(xs, cv+": "+strconv.FormatFloat(x, 'g', -1, 64))
			same = same && x == p.X[c.Curves[0]]
		}
	}
	prefix := "x = "
	if c.Measure == MeasureLogAUC {
		prefix = "log x up to "
	}
	if same && len(xs) > 0 {
		return prefix + strconv.FormatFloat(p.X[c.Curves[0]], 'g', -1, 64)
	}
	return prefix + strings.Join(xs, ", ")
}

// points returns the claim's keys and the curves' values at each: the
// panels (over "panel") or the x values of one panel (over "x"), the
// values being each seed's y there, or its log-AUC up to there.
func (c Claim) points(t Table) ([]string, []*Point, error) {
	var keys []string
	var pts []*Point
	if c.over() == "x" {
		xs, p, err := c.xPoints(t)
		if err != nil {
			return nil, nil, err
		}
		for _, x := range xs {
			keys = append(keys, strconv.FormatFloat(x, 'g', -1, 64))
		}
		pts = p
	} else {
		keys = c.keep(t.Panels())
		if len(keys) == 0 {
			return nil, nil, notComputed("the figure has none of the panels %s: this profile computes %s", strings.Join(c.Keys, ", "), strings.Join(t.Panels(), ", "))
		}
		at := c.At
		if at.Matched {
			x, err := t.matched(keys, c.Curves)
			if err != nil {
				return nil, nil, err
			}
			at = At{X: x, Set: true}
		}
		for _, k := range keys {
			p, err := t.Point(k, c.Curves, at)
			if err != nil {
				return nil, nil, err
			}
			pts = append(pts, p)
		}
	}
	if c.Measure == MeasureLogAUC {
		for _, p := range pts {
			if err := t.logAUC(p, c.Curves); err != nil {
				return nil, nil, err
			}
		}
	}
	return keys, pts, nil
}

// matched is the largest x that every curve reaches in every panel (a
// curve past it by at most Overshoot counts as reaching it).
func (t Table) matched(panels, curves []string) (float64, error) {
	x := math.Inf(1)
	for _, panel := range panels {
		for _, c := range curves {
			last := math.Inf(-1)
			for _, r := range t {
				if r.Panel == panel && r.Curve == c {
					last = max(last, r.X)
				}
			}
			if math.IsInf(last, -1) {
				return 0, noCurve(c, panel)
			}
			x = min(x, last)
		}
	}
	return x * (1 + Overshoot), nil
}

// logAUC replaces p's values by each seed's mean of log₁₀ y over log₁₀ x
// (trapezoids) from the largest first x of the curves to the curve's x at
// p: how low a curve ran over the whole budget on the paper's log axis,
// lower for a method that learns faster.
func (t Table) logAUC(p *Point, curves []string) error {
	x0 := math.Inf(-1)
	for _, c := range curves {
		first := math.Inf(1)
		for _, r := range t {
			if r.Panel == p.Panel && r.Curve == c {
				first = min(first, r.X)
			}
		}
		x0 = max(x0, first)
	}
	for _, c := range curves {
		for i, seed := range p.Seeds[c] {
			var lx, ly []float64
			for _, r := range t {
				if r.Panel == p.Panel && r.Curve == c && r.Seed == seed && r.X > 0 && r.Y > 0 && r.X <= p.X[c] {
					lx, ly = append(lx, math.Log10(r.X)), append(ly, math.Log10(r.Y))
				}
			}
			p.Values[c][i] = meanOverRange(lx, ly, math.Log10(x0))
		}
	}
	return nil
}

// meanOverRange is the mean of the piecewise-linear function through
// (lx, ly), lx increasing, over [from, lx[last]] (interpolated at from; NaN
// when the range is empty).
func meanOverRange(lx, ly []float64, from float64) float64 {
	if len(lx) < 2 || lx[len(lx)-1] <= from {
		return math.NaN()
	}
	var area float64
	for i := 1; i < len(lx); i++ {
		a, b := lx[i-1], lx[i]
		if b <= from {
			continue
		}
		ya, yb := ly[i-1], ly[i]
		if a < from {
			ya += (yb - ya) * (from - a) / (b - a)
			a = from
		}
		area += (b - a) * (ya + yb) / 2
	}
	return area / (lx[len(lx)-1] - from)
}

// xPoints returns the x values curves[0] has in c.Panel, increasing
// (restricted to Keys for an "x" claim), and the curves' values at each.
func (c Claim) xPoints(t Table) ([]float64, []*Point, error) {
	var xs []float64
	for _, r := range t {
		if r.Panel == c.Panel && r.Curve == c.Curves[0] && !slices.Contains(xs, r.X) {
			xs = append(xs, r.X)
		}
	}
	slices.Sort(xs)
	if len(xs) == 0 {
		return nil, nil, noCurve(c.Curves[0], c.Panel)
	}
	if c.over() == "x" && len(c.Keys) > 0 {
		all := xs
		xs = slices.DeleteFunc(slices.Clone(xs), func(x float64) bool { return !slices.Contains(c.Keys, strconv.FormatFloat(x, 'g', -1, 64)) })
		if len(xs) == 0 {
			return nil, nil, &notRunError{keys: c.Keys, panel: c.Panel, have: all}
		}
	}
	pts := make([]*Point, len(xs))
	for i, x := range xs {
		p, err := t.Point(c.Panel, c.Curves, At{X: x, Set: true})
		if err != nil {
			return nil, nil, err
		}
		pts[i] = p
	}
	return xs, pts, nil
}

// keep restricts panels to Keys (a "panel" claim's), in table order.
func (c Claim) keep(panels []string) []string {
	if len(c.Keys) == 0 || c.over() == "x" {
		return panels
	}
	return slices.DeleteFunc(slices.Clone(panels), func(p string) bool { return !slices.Contains(c.Keys, p) })
}

// notRunError is ErrNotRun for an "x" claim whose keys the figure has no
// point at.
type notRunError struct {
	keys  []string
	panel string
	have  []float64 // the x values the figure has
}

func (e *notRunError) Error() string {
	have := make([]string, len(e.have))
	for i, x := range e.have {
		have[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	where := ""
	if e.panel != "" {
		where = fmt.Sprintf(" of panel %s", e.panel)
	}
	return fmt.Sprintf("no point at x = %s%s: this profile computes x = %s", strings.Join(e.keys, ", "), where, strings.Join(have, ", "))
}

func (e *notRunError) Is(target error) bool { return target == ErrNotRun }

package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"zorepro/stages/plot"
)

// Table is a figure's per-seed points (the plot stage's
// "<figure>-seeds.csv", as plot.ReadSeedsCSV reads it), in file order.
type Table []plot.SeedRow

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
	// Common: the largest x that every curve of the claim reaches.
	Common bool
	// X, if Set, is a given x: the last point at or below it.
	X   float64
	Set bool
}

// String is the form the claims file uses: "last", "common" or a number.
func (a At) String() string {
	switch {
	case a.Common:
		return "common"
	case a.Set:
		return strconv.FormatFloat(a.X, 'g', -1, 64)
	}
	return "last"
}

// ParseAt reads "last", "common" or a number.
func ParseAt(s string) (At, error) {
	switch s {
	case "", "last":
		return At{}, nil
	case "common":
		return At{Common: true}, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return At{}, fmt.Errorf("%q is not last, common or a finite number", s)
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
			return nil, fmt.Errorf("%w: curve %q has no points in panel %q", ErrTable, c, panel)
		}
		slices.Sort(v)
		common = min(common, v[len(v)-1])
	}
	for _, c := range curves {
		v := xs[c]
		switch {
		case a.Common:
			target[c] = lastAtOrBelow(v, common)
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

package report

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Row is one per-seed point of a figure: a line of "<figure>-seeds.csv".
// The report reads the file itself rather than through stages/plot, so
// that its code identity does not hold the plot renderer: editing how
// figures are drawn reruns the report only when a figure's bytes change.
type Row struct {
	Panel, Curve string
	Seed         uint64
	X, Y         float64
}

// Table is a figure's per-seed points, in file order.
type Table []Row

// ParseSeedsCSV reads the plot stage's per-seed CSV (header
// panel,curve,seed,x,y; floats as strconv.FormatFloat 'g' -1 writes them,
// NaN and ±Inf included).
func ParseSeedsCSV(data []byte) (Table, error) {
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || !slices.Equal(rows[0], []string{"panel", "curve", "seed", "x", "y"}) {
		return nil, fmt.Errorf("%w: header is not panel,curve,seed,x,y", ErrTable)
	}
	out := make(Table, 0, len(rows)-1)
	for i, r := range rows[1:] {
		seed, err1 := strconv.ParseUint(r[2], 10, 64)
		x, err2 := strconv.ParseFloat(r[3], 64)
		y, err3 := strconv.ParseFloat(r[4], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("%w: line %d: %v is not seed, x, y numbers", ErrTable, i+2, r)
		}
		out = append(out, Row{Panel: r[0], Curve: r[1], Seed: seed, X: x, Y: y})
	}
	return out, nil
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

package crossing

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
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
// brackets with a point (NaN with fewer than two distinct x), and the
// intercept of the line of slope fixed at s through the same points
// (NaN with none).
func Fit(x []float64, bs []Bracket, s float64) (slope, interceptAtS float64) {
	var lx, ly []float64
	for i, b := range bs {
		if !math.IsNaN(b.Point) {
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

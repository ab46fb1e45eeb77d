package report

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Level is the coverage of every interval.
const Level = 0.95

// Reps is the number of bootstrap replicates behind an interval.
const Reps = 2000

// Interval is a statistic's value on the data and its percentile
// bootstrap interval. Lo and Hi are NaN when fewer than half of the
// replicates gave a finite value.
type Interval struct {
	Value, Lo, Hi float64
}

// sample is the values of each curve at each point of a statistic: one map
// per point, curve → per-seed values (a replicate's, or the data's).
type sample []map[string][]float64

// bootstrap computes stat on the values at points and its interval over
// Reps replicates drawn from rng. When every curve at every point has the
// same seeds (a seed fixes the problem instance of every method and every
// key), a replicate resamples those seeds and keeps each seed's values
// together across curves and points (a paired bootstrap). Otherwise each
// point is resampled on its own, pairing its curves when they share seeds.
func bootstrap(points []*Point, curves []string, stat func(sample) float64, rng *rand.Rand) Interval {
	data := make(sample, len(points))
	for i, p := range points {
		data[i] = map[string][]float64{}
		for _, c := range curves {
			data[i][c] = p.Values[c]
		}
	}
	iv := Interval{Value: stat(data), Lo: math.NaN(), Hi: math.NaN()}
	shared := sharedSeeds(points, curves)
	reps := make([]float64, 0, Reps)
	rep := make(sample, len(points))
	for r := 0; r < Reps; r++ {
		var idx []int
		if shared {
			idx = draw(len(points[0].Values[curves[0]]), rng)
		}
		for i, p := range points {
			rep[i] = resample(p, curves, idx, rng)
		}
		if v := stat(rep); !math.IsNaN(v) && !math.IsInf(v, 0) {
			reps = append(reps, v)
		}
	}
	if len(reps) >= Reps/2 {
		slices.Sort(reps)
		iv.Lo, iv.Hi = quantile(reps, (1-Level)/2), quantile(reps, 1-(1-Level)/2)
	}
	return iv
}

// sharedSeeds reports whether every curve at every point has the same
// seeds.
func sharedSeeds(points []*Point, curves []string) bool {
	first := points[0].Seeds[curves[0]]
	for _, p := range points {
		for _, c := range curves {
			if !slices.Equal(p.Seeds[c], first) {
				return false
			}
		}
	}
	return true
}

// draw returns n indices drawn with replacement from [0, n).
func draw(n int, rng *rand.Rand) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = rng.IntN(n)
	}
	return idx
}

// resample draws one replicate of p's values: with the given seed indices
// (all curves), or, without them, pairing the curves when they share
// seeds and resampling each on its own otherwise.
func resample(p *Point, curves []string, idx []int, rng *rand.Rand) map[string][]float64 {
	if idx == nil && sharedSeeds([]*Point{p}, curves) {
		idx = draw(len(p.Values[curves[0]]), rng)
	}
	out := map[string][]float64{}
	for _, c := range curves {
		src := p.Values[c]
		v := make([]float64, len(src))
		for i := range v {
			if idx != nil {
				v[i] = src[idx[i]]
			} else {
				v[i] = src[rng.IntN(len(src))]
			}
		}
		out[c] = v
	}
	return out
}

// quantile is the type-7 quantile of sorted xs: linear interpolation
// between the order statistics around (n−1)q.
func quantile(xs []float64, q float64) float64 {
	h := float64(len(xs)-1) * q
	lo := int(math.Floor(h))
	if lo+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}

// mean is the arithmetic mean, in order (NaN for no values).
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

// olsSlope is the least-squares slope of ys on xs (NaN with fewer than two
// distinct xs).
func olsSlope(xs, ys []float64) float64 {
	mx, my := mean(xs), mean(ys)
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return math.NaN()
	}
	return sxy / sxx
}

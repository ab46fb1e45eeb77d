package plot

import (
	"errors"
	"fmt"
	"math"

	"zorepro/pipeline/task"
)

// AggregateOptions configures AggregateWith.
type AggregateOptions struct {
	// Band selects the band kind; it is required.
	Band Band

	// LoFloor, when non-nil, intersects the band with [*LoFloor, +Inf):
	// Lo = max(Lo, floor) and Hi = max(Hi, floor). The LQR plot (Fig. 3c)
	// uses a floor of 0, because a sample count cannot be negative. Mean is
	// never changed.
	LoFloor *float64
}

// SeriesError reports a problem with one seed's series. It wraps one of
// ErrBadSeries, ErrGridMismatch or ErrDuplicateSeed.
type SeriesError struct {
	Panel, Curve string
	Seed         uint64
	Detail       string
	Err          error
}

func (e *SeriesError) Error() string {
	return fmt.Sprintf("%v: panel %q curve %q seed %d: %s", e.Err, e.Panel, e.Curve, e.Seed, e.Detail)
}

func (e *SeriesError) Unwrap() error { return e.Err }

// Aggregate is AggregateWith(series, AggregateOptions{Band: band}).
func Aggregate(series []Series, band Band) ([]Curve, error) {
	return AggregateWith(series, AggregateOptions{Band: band})
}

// AggregateWith groups series by (Panel, Curve) and reduces each group's
// seeds to a Curve: the mean at each grid point and the band given by
// opts. Output order is panels in order of first appearance in series and,
// within a panel, curves in order of first appearance.
//
// Every seed of a group must have the exact same X grid (bit for bit),
// finite and strictly increasing, and the same length as its Y; a seed may
// appear once per group. All problems are reported at once (errors.Join of
// *SeriesError values).
//
// Means and population standard deviations (ddof 0) are accumulated in the
// input order of the seeds, with explicit roundings that keep the compiler
// from fusing multiply-adds, so the result is bit-identical on every run.
// Non-finite Y values propagate (IEEE semantics) into Mean, Lo and Hi;
// Render treats non-finite points as gaps.
func AggregateWith(series []Series, opts AggregateOptions) ([]Curve, error) {
	switch opts.Band {
	case BandMinMaxStd, BandStdErr:
	default:
		return nil, fmt.Errorf("%w %q (want %q or %q)", ErrUnknownBand, opts.Band, BandMinMaxStd, BandStdErr)
	}
	if opts.LoFloor != nil && math.IsNaN(*opts.LoFloor) {
		return nil, fmt.Errorf("%w: LoFloor is NaN", ErrUnknownBand)
	}
	if len(series) == 0 {
		return nil, ErrNoSeries
	}

	type group struct {
		panel, curve string
		members      []int // indices into series, input order
	}
	type key struct{ panel, curve string }
	var (
		panels     []string             // first-appearance order
		panelCurve = map[string][]int{} // panel -> group indices, first-appearance order
		index      = map[key]int{}      // lookup only; never iterated
		groups     []group
		errs       []error
	)
	for i, s := range series {
		if d := checkSeries(s); d != "" {
			errs = append(errs, &SeriesError{s.Panel, s.Curve, s.Seed, d, ErrBadSeries})
			continue
		}
		k := key{s.Panel, s.Curve}
		gi, ok := index[k]
		if !ok {
			gi = len(groups)
			index[k] = gi
			groups = append(groups, group{panel: s.Panel, curve: s.Curve})
			if _, seen := panelCurve[s.Panel]; !seen {
				panels = append(panels, s.Panel)
			}
			panelCurve[s.Panel] = append(panelCurve[s.Panel], gi)
		}
		g := &groups[gi]
		if len(g.members) > 0 {
			first := series[g.members[0]]
			if d := gridDiff(first, s); d != "" {
				errs = append(errs, &SeriesError{s.Panel, s.Curve, s.Seed, d, ErrGridMismatch})
				continue
			}
			dup := false
			for _, m := range g.members {
				if series[m].Seed == s.Seed {
					dup = true
					break
				}
			}
			if dup {
				errs = append(errs, &SeriesError{s.Panel, s.Curve, s.Seed, "appears more than once", ErrDuplicateSeed})
				continue
			}
		}
		g.members = append(g.members, i)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	out := make([]Curve, 0, len(groups))
	for _, p := range panels {
		for _, gi := range panelCurve[p] {
			g := groups[gi]
			members := make([]Series, len(g.members))
			for j, m := range g.members {
				members[j] = series[m]
			}
			out = append(out, reduce(g.panel, g.curve, members, opts))
		}
	}
	return out, nil
}

// checkSeries returns why s cannot be aggregated, or "".
func checkSeries(s Series) string {
	if len(s.X) != len(s.Y) {
		return fmt.Sprintf("len(X) = %d but len(Y) = %d", len(s.X), len(s.Y))
	}
	if len(s.X) == 0 {
		return "empty series"
	}
	for i, x := range s.X {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprintf("x[%d] = %s is not finite", i, task.FormatFloat(x))
		}
		if i > 0 && !(x > s.X[i-1]) {
			return fmt.Sprintf("x is not strictly increasing at x[%d] = %s", i, task.FormatFloat(x))
		}
	}
	return ""
}

// gridDiff returns how s's grid differs from first's, or "".
func gridDiff(first, s Series) string {
	if len(first.X) != len(s.X) {
		return fmt.Sprintf("x grid has %d points, seed %d's has %d", len(s.X), first.Seed, len(first.X))
	}
	for i := range s.X {
		if math.Float64bits(s.X[i]) != math.Float64bits(first.X[i]) {
			return fmt.Sprintf("x[%d] = %s, seed %d's is %s", i, task.FormatFloat(s.X[i]), first.Seed, task.FormatFloat(first.X[i]))
		}
	}
	return ""
}

// reduce computes one Curve from seeds that share a validated grid.
func reduce(panel, curve string, seeds []Series, opts AggregateOptions) Curve {
	n := len(seeds)
	m := len(seeds[0].X)
	c := Curve{
		Panel: panel,
		Curve: curve,
		X:     append([]float64(nil), seeds[0].X...),
		Mean:  make([]float64, m),
		Lo:    make([]float64, m),
		Hi:    make([]float64, m),
		N:     n,
	}
	fn := float64(n)
	sqrtN := math.Sqrt(fn)
	for i := 0; i < m; i++ {
		sum := 0.0
		lo, hi := seeds[0].Y[i], seeds[0].Y[i]
		for _, s := range seeds {
			y := s.Y[i]
			sum += y
			lo = math.Min(lo, y)
			hi = math.Max(hi, y)
		}
		mean := sum / fn
		ss := 0.0
		for _, s := range seeds {
			d := s.Y[i] - mean
			ss += float64(d * d) // explicit conversion: no fused multiply-add
		}
		std := math.Sqrt(ss / fn)

		var bl, bh float64
		switch opts.Band {
		case BandMinMaxStd:
			bl = math.Max(mean-std, lo)
			bh = math.Min(mean+std, hi)
		case BandStdErr:
			se := std / sqrtN
			bl = mean - se
			bh = mean + se
		}
		if opts.LoFloor != nil {
			f := *opts.LoFloor
			bl = math.Max(bl, f)
			bh = math.Max(bh, f)
		}
		c.Mean[i], c.Lo[i], c.Hi[i] = mean, bl, bh
	}
	return c
}

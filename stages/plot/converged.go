package plot

import (
	"bytes"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"zorepro/pipeline/task"
)

// convergedCount is how many of a curve's seeds converged at one x of a
// panel (their raw y below converged_below, the budget runs stop at).
type convergedCount struct {
	panel, curve string
	x            float64
	ok, n        int
}

// convergedCounts counts, per panel, curve and x, the seeds that
// converged, in panel, curve and x order.
func convergedCounts(fs []final, below float64, panels, curves []string) []convergedCount {
	type key struct {
		panel, curve string
		x            float64
	}
	groups := firstSeen[key]{}
	var out []convergedCount
	for _, f := range fs {
		i, first := groups.index(key{f.panel, f.curve, f.x})
		if first {
			out = append(out, convergedCount{panel: f.panel, curve: f.curve, x: f.x})
		}
		out[i].n++
		if f.raw < below {
			out[i].ok++
		}
	}
	slices.SortStableFunc(out, func(a, b convergedCount) int {
		if d := slices.Index(panels, a.panel) - slices.Index(panels, b.panel); d != 0 {
			return d
		}
		if d := slices.Index(curves, a.curve) - slices.Index(curves, b.curve); d != 0 {
			return d
		}
		return cmpFloat(a.x, b.x)
	})
	return out
}

// convergedCSV is <figure>-converged.csv: per panel, curve and x, the
// seeds that converged, of how many, and the fraction.
func convergedCSV(fs []final, below float64, panels, curves []string) []byte {
	var b bytes.Buffer
	b.WriteString("panel,curve,x,converged,n_seeds,fraction\n")
	for _, c := range convergedCounts(fs, below, panels, curves) {
		fmt.Fprintf(&b, "%s,%s,%s,%d,%d,%s\n", c.panel, c.curve, task.FormatFloat(c.x), c.ok, c.n, task.FormatFloat(float64(c.ok)/float64(c.n)))
	}
	return b.Bytes()
}

// convergedView is the companion figure of the fraction of seeds that
// converged (Fig. 3c: the mean samples count a run that never converged
// at the cap, so the fraction says what the mean cannot), with the
// Clopper–Pearson 95% interval of each fraction as its band (the
// report's fig3c-converged claim gives the same intervals).
func convergedView(s Spec, fs []final, below float64, panels, curves []string, budget string) (Spec, []Curve) {
	var cs []Curve
	for _, c := range convergedCounts(fs, below, panels, curves) {
		i := slices.IndexFunc(cs, func(x Curve) bool { return x.Panel == c.panel && x.Curve == c.curve })
		if i < 0 {
			cs = append(cs, Curve{Panel: c.panel, Curve: c.curve})
			i = len(cs) - 1
		}
		lo, hi := clopperPearson(c.ok, c.n)
		cv := &cs[i]
		cv.X, cv.Mean, cv.Lo, cv.Hi = append(cv.X, c.x), append(cv.Mean, float64(c.ok)/float64(c.n)), append(cv.Lo, lo), append(cv.Hi, hi)
		cv.N = max(cv.N, c.n)
	}
	v := s
	v.Title = "Fraction of seeds that converged within " + budget
	v.Caption = fmt.Sprintf("A companion view of the same runs: the fraction of seeds whose run reached the threshold within %s (the rest count at the cap in the figure's mean). Band: Clopper–Pearson 95%% interval of each fraction. Not a figure of the paper.", budget)
	v.Panels = slices.Clone(s.Panels)
	zero, one := 0.0, 1.0
	for i := range v.Panels {
		v.Panels[i].YLabel = "Fraction converged"
		v.Panels[i].LogY, v.Panels[i].YMin, v.Panels[i].YMax, v.Panels[i].HLines, v.Panels[i].Guides = false, &zero, &one, nil, nil
	}
	v.Inset = nil
	return v, cs
}

// clopperPearson is the exact 95% interval of a binomial fraction k/n.
func clopperPearson(k, n int) (lo, hi float64) {
	lo, hi = 0, 1
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(0.025)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(0.975)
	}
	return lo, hi
}

// firstSeen numbers keys in the order they first appear: the grouping of
// final points by (panel, curve, seed) or (panel, curve, x).
type firstSeen[K comparable] map[K]int

// index returns k's number, and whether k was new (then numbered next).
func (s firstSeen[K]) index(k K) (int, bool) {
	if i, ok := s[k]; ok {
		return i, false
	}
	s[k] = len(s)
	return s[k], true
}

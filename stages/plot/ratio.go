package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"zorepro/pipeline/task"
)

// ratioView is a companion figure of one curve's mean over another's, per
// panel and x (Fig. 3d's ARS/ExAct): where one method leads and by how
// much, on one scale for every panel. A ratio of means is drawn only
// where the denominator's mean is clearly above 0 (its 95% t interval
// over the seeds excludes 0): elsewhere the ratio's Fieller interval is
// unbounded and a drawn point would claim a precision the seeds do not
// have. A panel with fewer than two such points is left out. The caption
// names every x and panel left out.
type ratioView struct {
	num, den string // curve keys
	label    string // e.g. "ARS / ExAct"
}

// ratios is a view's curves and what they leave out.
type ratios struct {
	curves  []Curve              // one "ratio" curve per panel drawn
	skipped map[string]string    // per panel left out, why
	left    map[string][]float64 // per drawn panel, the x left out
	xMin    float64              // the x range of every source curve, so that
	xMax    float64              // the view's panels span the figure's
}

// curves divides the num curve's mean by the den curve's in every panel at
// every x both have where den's mean is clearly above 0 (series gives
// den's per-seed values), as one curve per panel keyed "ratio" (no band).
func (v *ratioView) curves(all []Curve, series []Series) (*ratios, error) {
	r := &ratios{left: map[string][]float64{}, skipped: map[string]string{}, xMin: math.Inf(1), xMax: math.Inf(-1)}
	var panels []string
	for _, c := range all {
		if !slices.Contains(panels, c.Panel) {
			panels = append(panels, c.Panel)
		}
		for _, x := range c.X {
			r.xMin, r.xMax = min(r.xMin, x), max(r.xMax, x)
		}
	}
	for _, p := range panels {
		num, den := find(all, p, v.num), find(all, p, v.den)
		if num == nil || den == nil {
			return nil, fmt.Errorf("companion_ratio: panel %s lacks curve %s or %s", p, v.num, v.den)
		}
		c := Curve{Panel: p, Curve: "ratio", N: min(num.N, den.N)}
		var left []float64
		for i, x := range num.X {
			j := slices.Index(den.X, x)
			if j < 0 {
				continue
			}
			if !clearlyPositive(seedValues(series, p, v.den, x)) {
				left = append(left, x)
				continue
			}
			q := num.Mean[i] / den.Mean[j]
			c.X, c.Mean, c.Lo, c.Hi = append(c.X, x), append(c.Mean, q), append(c.Lo, q), append(c.Hi, q)
		}
		switch len(c.X) {
		case 0:
			r.skipped[p] = "the denominator's mean return is clearly above 0 at no x"
			continue
		case 1:
			r.skipped[p] = fmt.Sprintf("the denominator's mean return is clearly above 0 at x = %s only (ratio %s)", task.FormatFloat(c.X[0]), sig4(c.Mean[0]))
			continue
		}
		if len(left) > 0 {
			r.left[p] = left
		}
		r.curves = append(r.curves, c)
	}
	return r, nil
}

// drawn is the ratio curves as Render draws them: each x left out is a
// gap (a NaN point), so that the line between the points on either side
// of it does not pass over an x where the ratio is unknown (at paper
// scale Swimmer's ARS/ExAct is 1.9 at H = 30 and 120, but ExAct's return
// at H = 60 is not clearly above 0 and the mean ratio there is 10); a
// point between two gaps is drawn as a dot. The CSV keeps the drawn
// points only.
func (r *ratios) drawn() []Curve {
	out := make([]Curve, len(r.curves))
	for k, c := range r.curves {
		d := Curve{Panel: c.Panel, Curve: c.Curve, N: c.N}
		left := r.left[c.Panel]
		i, j := 0, 0
		for i < len(c.X) || j < len(left) {
			if j == len(left) || (i < len(c.X) && c.X[i] < left[j]) {
				d.X, d.Mean, d.Lo, d.Hi = append(d.X, c.X[i]), append(d.Mean, c.Mean[i]), append(d.Lo, c.Lo[i]), append(d.Hi, c.Hi[i])
				i++
				continue
			}
			nan := math.NaN()
			d.X, d.Mean, d.Lo, d.Hi = append(d.X, left[j]), append(d.Mean, nan), append(d.Lo, nan), append(d.Hi, nan)
			j++
		}
		out[k] = d
	}
	return out
}

// seedValues are a curve's per-seed values at x in a panel, in series order.
func seedValues(series []Series, panel, curve string, x float64) []float64 {
	var out []float64
	for _, s := range series {
		if s.Panel != panel || s.Curve != curve {
			continue
		}
		if i := slices.Index(s.X, x); i >= 0 {
			out = append(out, s.Y[i])
		}
	}
	return out
}

// clearlyPositive reports whether the 95% t interval of the mean of ys
// lies above 0: the condition under which the Fieller interval of a ratio
// with this denominator is bounded (the report's ratio claims use it).
func clearlyPositive(ys []float64) bool {
	n := float64(len(ys))
	if len(ys) < 2 {
		return false
	}
	m, sd := stat.MeanStdDev(ys, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975)
	return m-t*sd/math.Sqrt(n) > 0
}

func sig4(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

func find(cs []Curve, panel, curve string) *Curve {
	for i := range cs {
		if cs[i].Panel == panel && cs[i].Curve == curve {
			return &cs[i]
		}
	}
	return nil
}

// spec is the figure's spec with the ratio on y, a line at 1 (parity),
// one y range for every panel (the ratios' and 1), the figure's x range,
// and its own caption, which names every x a panel leaves out.
func (v *ratioView) spec(s Spec, r *ratios) Spec {
	lo, hi := 1.0, 1.0
	for _, c := range r.curves {
		for _, y := range c.Mean {
			lo, hi = min(lo, y), max(hi, y)
		}
	}
	pad := 0.05 * (hi - lo)
	lo, hi = lo-pad, hi+pad
	c := s
	c.Title = v.label + ", the ratio of mean returns"
	c.Caption = fmt.Sprintf("A companion view of the same numbers: %s, the ratio of the mean returns at each x, drawn only where the denominator's mean return is clearly above 0 (its 95%% t interval over the seeds excludes 0; elsewhere the ratio's 95%% interval is unbounded, and the line breaks there); above 1 the first leads. Not a figure of the paper.", v.label)
	c.Panels = nil
	for _, p := range s.Panels {
		if why, ok := r.skipped[p.Key]; ok {
			c.Caption += fmt.Sprintf(" %s: no panel, %s.", panelTitle(s, p.Key), why)
			continue
		}
		if xs := r.left[p.Key]; len(xs) > 0 {
			vs := make([]string, len(xs))
			for i, x := range xs {
				vs[i] = task.FormatFloat(x)
			}
			c.Caption += fmt.Sprintf(" %s: not drawn at x = %s, where the denominator's mean return is not clearly above 0.", panelTitle(s, p.Key), strings.Join(vs, ", "))
		}
		c.Panels = append(c.Panels, p)
	}
	c.Curves = []CurveStyle{{Key: "ratio", Label: v.label, Color: color.Black, NoBand: true}}
	for i := range c.Panels {
		c.Panels[i].YLabel = v.label
		c.Panels[i].LogY, c.Panels[i].YMin, c.Panels[i].YMax = false, &lo, &hi
		if r.xMin < r.xMax && c.Panels[i].XMin == nil && c.Panels[i].XMax == nil {
			c.Panels[i].XMin, c.Panels[i].XMax = &r.xMin, &r.xMax
		}
		c.Panels[i].HLines = []HLine{{Y: 1, Label: "parity"}}
	}
	c.Inset = nil
	return c
}

// panelTitle is a panel's title in s, else its key.
func panelTitle(s Spec, key string) string {
	for _, p := range s.Panels {
		if p.Key == key && p.Title != "" {
			return p.Title
		}
	}
	return key
}

// outputs renders the view: <figure>-ratio-view.png, .svg and .csv, or
// nothing if no panel has a ratio.
func (v *ratioView) outputs(figure string, s Spec, curves []Curve, series []Series) ([]output, error) {
	r, err := v.curves(curves, series)
	if err != nil || len(r.curves) == 0 {
		return nil, err
	}
	png, svg, err := Render(v.spec(s, r), r.drawn())
	if err != nil {
		return nil, err
	}
	return []output{{figure + "-ratio-view.png", png}, {figure + "-ratio-view.svg", svg}, {figure + "-ratio-view.csv", CurvesCSV(r.curves)}}, nil
}

package plot

import (
	"fmt"
	"image/color"
	"slices"
)

// ratioView is a companion figure of one curve's mean over another's, per
// panel and x (Fig. 3d's ARS/ExAct): where one method leads and by how
// much, on one scale for every panel. A ratio of means is drawn only
// where the denominator's mean is positive; the figure says so.
type ratioView struct {
	num, den string // curve keys
	label    string // e.g. "ARS / ExAct"
}

// curves divides the num curve's mean by the den curve's in every panel at
// every x both have, as one curve per panel keyed "ratio" (no band). A
// panel where den's mean is positive at no x has no ratio: it is returned
// in skipped.
func (v *ratioView) curves(all []Curve) (out []Curve, skipped []string, err error) {
	var panels []string
	for _, c := range all {
		if !slices.Contains(panels, c.Panel) {
			panels = append(panels, c.Panel)
		}
	}
	for _, p := range panels {
		num, den := find(all, p, v.num), find(all, p, v.den)
		if num == nil || den == nil {
			return nil, nil, fmt.Errorf("companion_ratio: panel %s lacks curve %s or %s", p, v.num, v.den)
		}
		r := Curve{Panel: p, Curve: "ratio", N: min(num.N, den.N)}
		for i, x := range num.X {
			j := slices.Index(den.X, x)
			if j < 0 || den.Mean[j] <= 0 {
				continue
			}
			q := num.Mean[i] / den.Mean[j]
			r.X, r.Mean, r.Lo, r.Hi = append(r.X, x), append(r.Mean, q), append(r.Lo, q), append(r.Hi, q)
		}
		if len(r.X) == 0 {
			skipped = append(skipped, p)
			continue
		}
		out = append(out, r)
	}
	return out, skipped, nil
}

func find(cs []Curve, panel, curve string) *Curve {
	for i := range cs {
		if cs[i].Panel == panel && cs[i].Curve == curve {
			return &cs[i]
		}
	}
	return nil
}

// spec is the figure's spec with the ratio on y, a line at 1 (parity),
// one y range for every panel (the ratios' and 1) and its own caption.
func (v *ratioView) spec(s Spec, rc []Curve, skipped []string) Spec {
	lo, hi := 1.0, 1.0
	for _, c := range rc {
		for _, y := range c.Mean {
			lo, hi = min(lo, y), max(hi, y)
		}
	}
	pad := 0.05 * (hi - lo)
	lo, hi = lo-pad, hi+pad
	c := s
	c.Title = v.label + ", the ratio of mean returns"
	c.Caption = fmt.Sprintf("A companion view of the same numbers: %s, the ratio of the mean returns at each x, drawn where the denominator's mean is positive; above 1 the first leads. Not a figure of the paper.", v.label)
	for _, p := range skipped {
		c.Caption += fmt.Sprintf(" %s: no ratio, the denominator's mean return is not positive at any x.", panelTitle(s, p))
	}
	c.Curves = []CurveStyle{{Key: "ratio", Label: v.label, Color: color.Black}}
	c.Panels = nil
	for _, p := range s.Panels {
		if !slices.Contains(skipped, p.Key) {
			c.Panels = append(c.Panels, p)
		}
	}
	for i := range c.Panels {
		c.Panels[i].YLabel = v.label
		c.Panels[i].LogY, c.Panels[i].YMin, c.Panels[i].YMax = false, &lo, &hi
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
func (v *ratioView) outputs(figure string, s Spec, curves []Curve) ([]output, error) {
	rc, skipped, err := v.curves(curves)
	if err != nil || len(rc) == 0 {
		return nil, err
	}
	png, svg, err := Render(v.spec(s, rc, skipped), rc)
	if err != nil {
		return nil, err
	}
	return []output{{figure + "-ratio-view.png", png}, {figure + "-ratio-view.svg", svg}, {figure + "-ratio-view.csv", CurvesCSV(rc)}}, nil
}

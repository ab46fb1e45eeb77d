package plot

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The ratio view divides one curve's mean by another's at the x both
// have, per panel, where the denominator's mean is clearly above 0 (its
// 95% t interval excludes 0); a panel with fewer than two such x is left
// out and named, as is each x left out; no panel at all means no view.
func TestRatioView(t *testing.T) {
	v := &ratioView{num: "arsv1", den: "exact", label: "ARS / ExAct"}
	all := []Curve{
		{Panel: "swimmer", Curve: "arsv1", X: []float64{15, 30, 60, 120}, Mean: []float64{30, 40, 50, 60}, N: 3},
		{Panel: "swimmer", Curve: "exact", X: []float64{15, 30, 60, 120}, Mean: []float64{10, 5, 25, 20}, N: 3},
		{Panel: "halfcheetah", Curve: "arsv1", X: []float64{15, 30}, Mean: []float64{3, 4}, N: 3},
		{Panel: "halfcheetah", Curve: "exact", X: []float64{15, 30}, Mean: []float64{1, 1}, N: 3},
	}
	// ExAct's seeds: clearly above 0 at swimmer 15, 60 and 120 and at
	// halfcheetah 15; at swimmer 30 and halfcheetah 30 the mean is
	// positive, but the seeds spread across 0 (the t interval reaches it).
	den := map[string][][]float64{
		"swimmer":     {{9, 10, 11}, {-20, 5, 30}, {24, 25, 26}, {19, 20, 21}},
		"halfcheetah": {{0.9, 1, 1.1}, {-5, 1, 7}},
	}
	var series []Series
	for _, p := range []string{"swimmer", "halfcheetah"} {
		xs := find(all, p, "exact").X
		for seed := range 3 {
			ys := make([]float64, len(xs))
			for i := range xs {
				ys[i] = den[p][i][seed]
			}
			series = append(series, Series{Panel: p, Curve: "exact", Seed: uint64(seed + 1), X: xs, Y: ys})
		}
	}
	r, err := v.curves(all, series)
	if err != nil {
		t.Fatal(err)
	}
	if rc := r.curves; len(rc) != 1 || rc[0].Panel != "swimmer" || !slices.Equal(rc[0].X, []float64{15, 60, 120}) || !slices.Equal(rc[0].Mean, []float64{3, 2, 3}) || rc[0].N != 3 {
		t.Errorf("ratio curves %+v", rc)
	}
	if !slices.Equal(r.left["swimmer"], []float64{30}) || r.xMin != 15 || r.xMax != 120 || !strings.Contains(r.skipped["halfcheetah"], "at x = 15 only (ratio 3)") {
		t.Errorf("skipped %v, left out %v, x range [%v, %v]", r.skipped, r.left, r.xMin, r.xMax)
	}
	// Drawn, the x left out is a gap: no line from 15 to 60 over x = 30.
	if d := r.drawn(); len(d) != 1 || !slices.Equal(d[0].X, []float64{15, 30, 60, 120}) || !math.IsNaN(d[0].Mean[1]) || d[0].Mean[0] != 3 || d[0].Mean[2] != 2 || d[0].Mean[3] != 3 {
		t.Errorf("drawn ratio curves %+v: x = 30 is not a gap between 15 and 60", d)
	}
	if runs := runs(4, func(i int) bool { return meanDrawable(r.drawn()[0], i, true, false) }); !slices.Equal(runs, [][2]int{{0, 1}, {2, 4}}) {
		t.Errorf("the drawn curve's line runs %v, want a dot at 15 and a line from 60 to 120", runs)
	}
	s := v.spec(Spec{Title: "t", Panels: []PanelSpec{{Key: "swimmer", Title: "Swimmer-v2"}, {Key: "halfcheetah", Title: "HalfCheetah-v2"}}}, r)
	if len(s.Panels) != 1 || *s.Panels[0].YMin > 1 || *s.Panels[0].YMax < 3 || len(s.Panels[0].HLines) != 1 || s.Panels[0].HLines[0].Y != 1 {
		t.Errorf("spec panels %+v", s.Panels)
	}
	if len(s.Curves) != 1 || !s.Curves[0].NoBand {
		t.Errorf("the ratio curve's legend shows a band it does not have: %+v", s.Curves)
	}
	// The view spans the figure's x range (a panel drawn at some x still
	// shows where the others are), and says which x it leaves out.
	if p := s.Panels[0]; p.XMin == nil || p.XMax == nil || *p.XMin != 15 || *p.XMax != 120 {
		t.Errorf("the view's x range is not the figure's [15, 120]: %+v", p)
	}
	for _, want := range []string{"Swimmer-v2: not drawn at x = 30, where the denominator's mean return is not clearly above 0.", "HalfCheetah-v2: no panel, the denominator's mean return is clearly above 0 at x = 15 only (ratio 3)."} {
		if !strings.Contains(s.Caption, want) {
			t.Errorf("caption %q lacks %q", s.Caption, want)
		}
	}
	out, err := v.outputs("fig", Spec{Title: "t", Panels: []PanelSpec{{Key: "swimmer", Title: "Swimmer-v2"}, {Key: "halfcheetah", Title: "HalfCheetah-v2"}}}, all, series)
	if err != nil || len(out) != 3 || !strings.HasSuffix(out[2].name, ".csv") || strings.Contains(string(out[2].data), "NaN") || strings.Count(string(out[2].data), "\n") != 4 {
		t.Errorf("the view's CSV holds the drawn points only: %v, %+v", err, out)
	}
	if _, joined, err := Render(v.spec(Spec{Title: "t", Panels: []PanelSpec{{Key: "swimmer", Title: "Swimmer-v2"}, {Key: "halfcheetah", Title: "HalfCheetah-v2"}}}, r), r.curves); err != nil || len(out) == 3 && string(out[1].data) == string(joined) {
		t.Errorf("the view's SVG draws a line over the x left out (%v)", err)
	}
	out, err = v.outputs("fig", s, all[2:], series)
	if err != nil || out != nil {
		t.Errorf("a view without any panel: %v, %v", out, err)
	}
	if _, err := v.curves(all[:1], series); err == nil {
		t.Error("a panel without the denominator curve was accepted")
	}
}

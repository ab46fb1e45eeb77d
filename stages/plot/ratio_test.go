package plot

import (
	"slices"
	"strings"
	"testing"
)

// The ratio view divides one curve's mean by another's at the x both
// have, per panel; a panel whose denominator is never positive has no
// ratio and is named; no panel with a ratio means no view at all.
func TestRatioView(t *testing.T) {
	v := &ratioView{num: "arsv1", den: "exact", label: "ARS / ExAct"}
	all := []Curve{
		{Panel: "swimmer", Curve: "arsv1", X: []float64{15, 30, 60}, Mean: []float64{30, 40, 50}, N: 10},
		{Panel: "swimmer", Curve: "exact", X: []float64{15, 30, 60}, Mean: []float64{10, -5, 25}, N: 9},
		{Panel: "halfcheetah", Curve: "arsv1", X: []float64{15}, Mean: []float64{3}, N: 10},
		{Panel: "halfcheetah", Curve: "exact", X: []float64{15}, Mean: []float64{-1}, N: 10},
	}
	r, err := v.curves(all)
	if err != nil {
		t.Fatal(err)
	}
	if rc := r.curves; len(rc) != 1 || rc[0].Panel != "swimmer" || !slices.Equal(rc[0].X, []float64{15, 60}) || !slices.Equal(rc[0].Mean, []float64{3, 2}) || rc[0].N != 9 {
		t.Errorf("ratio curves %+v", rc)
	}
	if !slices.Equal(r.skipped, []string{"halfcheetah"}) || !slices.Equal(r.left["swimmer"], []float64{30}) || r.xMin != 15 || r.xMax != 60 {
		t.Errorf("skipped %v, left out %v, x range [%v, %v]", r.skipped, r.left, r.xMin, r.xMax)
	}
	s := v.spec(Spec{Title: "t", Panels: []PanelSpec{{Key: "swimmer", Title: "Swimmer-v2"}, {Key: "halfcheetah", Title: "HalfCheetah-v2"}}}, r)
	if len(s.Panels) != 1 || *s.Panels[0].YMin > 1 || *s.Panels[0].YMax < 3 || len(s.Panels[0].HLines) != 1 || s.Panels[0].HLines[0].Y != 1 {
		t.Errorf("spec panels %+v", s.Panels)
	}
	// The view spans the figure's x range (a panel drawn at one x alone
	// still shows where the others are), and says which x it leaves out.
	if p := s.Panels[0]; p.XMin == nil || p.XMax == nil || *p.XMin != 15 || *p.XMax != 60 {
		t.Errorf("the view's x range is not the figure's [15, 60]: %+v", p)
	}
	for _, want := range []string{"Swimmer-v2: not drawn at x = 30, where the denominator's mean return is not positive.", "HalfCheetah-v2: no ratio"} {
		if !strings.Contains(s.Caption, want) {
			t.Errorf("caption %q lacks %q", s.Caption, want)
		}
	}
	out, err := v.outputs("fig", s, all[2:])
	if err != nil || out != nil {
		t.Errorf("a view without any ratio: %v, %v", out, err)
	}
	if _, err := v.curves(all[:1]); err == nil {
		t.Error("a panel without the denominator curve was accepted")
	}
}

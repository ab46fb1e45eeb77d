package plot

import (
	"slices"
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
	rc, skipped, err := v.curves(all)
	if err != nil {
		t.Fatal(err)
	}
	if len(rc) != 1 || rc[0].Panel != "swimmer" || !slices.Equal(rc[0].X, []float64{15, 60}) || !slices.Equal(rc[0].Mean, []float64{3, 2}) || rc[0].N != 9 {
		t.Errorf("ratio curves %+v", rc)
	}
	if !slices.Equal(skipped, []string{"halfcheetah"}) {
		t.Errorf("skipped %v", skipped)
	}
	s := v.spec(Spec{Title: "t", Panels: []PanelSpec{{Key: "swimmer", Title: "Swimmer-v2"}, {Key: "halfcheetah", Title: "HalfCheetah-v2"}}}, rc, skipped)
	if len(s.Panels) != 1 || *s.Panels[0].YMin > 1 || *s.Panels[0].YMax < 3 || len(s.Panels[0].HLines) != 1 || s.Panels[0].HLines[0].Y != 1 {
		t.Errorf("spec panels %+v", s.Panels)
	}
	out, err := v.outputs("fig", s, all[2:])
	if err != nil || out != nil {
		t.Errorf("a view without any ratio: %v, %v", out, err)
	}
	if _, _, err := v.curves(all[:1]); err == nil {
		t.Error("a panel without the denominator curve was accepted")
	}
}

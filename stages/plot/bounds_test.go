package plot

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"zorepro/pipeline/task"
)

func planOLR(t *testing.T, bounds map[string]any) (*runner, []error) {
	t.Helper()
	p := task.NewParams("dag.yaml", "plot/olr-regret", map[string]any{
		"figure": "olr-regret", "mode": "final", "x_coord": "t", "y": "avg_regret", "panel": "d",
		"curve": "method", "curves": []any{"paramrs", "actionrs"}, "colors": map[string]any{"paramrs": "red"},
		"log_x": true, "log_y": true, "bounds": bounds,
	})
	r, _ := (&Kind{}).Plan(p).(*runner)
	return r, p.Problems()
}

// A curve's bound is drawn in each panel at the curve's x, in its colour,
// as Coef·(panel + PanelAdd)^PanelPow·x^XPow: Theorem 1's bound on
// Algorithm 1 at b = d + 1 = 11 and T = 10^4 is 152.79·√11/10 = 50.676.
func TestPlotBoundsAreDrawnAtTheCurvesX(t *testing.T) {
	r, problems := planOLR(t, map[string]any{
		"paramrs": map[string]any{"label": "Alg. 1's bound", "bound": map[string]any{"coef": 152.7939789389621, "panel_add": 1.0, "panel_pow": 0.5, "x_pow": -0.25}},
	})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	curves := []Curve{
		{Panel: "10", Curve: "paramrs", X: []float64{100, 1e4}, Mean: []float64{0.1, 0.1}},
		{Panel: "10", Curve: "actionrs", X: []float64{100, 1e4}, Mean: []float64{0.1, 0.1}},
		{Panel: "100", Curve: "paramrs", X: []float64{1e4}, Mean: []float64{0.1}},
	}
	g := r.guides(curves, "10")
	if len(g) != 1 || g[0].Label != "Alg. 1's bound" || g[0].Color != Colors["red"] || len(g[0].Y) != 2 {
		t.Fatalf("guides in panel 10: %+v", g)
	}
	if want := 152.7939789389621 * math.Sqrt(11) / 10; math.Abs(g[0].Y[1]-want) > 1e-12 || math.Abs(want-50.676) > 1e-3 {
		t.Errorf("bound at T = 10^4, b = 11: %v, want %v", g[0].Y[1], want)
	}
	if g := r.guides(curves, "100"); len(g) != 1 || math.Abs(g[0].Y[0]-152.7939789389621*math.Sqrt(101)/10) > 1e-12 {
		t.Errorf("guides in panel 100: %+v", g)
	}
}

// A bound on a curve the figure does not draw, or without its label or
// a positive coefficient, is named by its field.
func TestPlotBoundsProblems(t *testing.T) {
	for _, tc := range []struct {
		bounds map[string]any
		want   string
	}{
		{map[string]any{"sgd": map[string]any{"label": "x", "bound": map[string]any{"coef": 1.0}}}, "bounds.sgd"},
		{map[string]any{"paramrs": map[string]any{"bound": map[string]any{"coef": 1.0}}}, "bounds.paramrs.label"},
		{map[string]any{"paramrs": map[string]any{"label": "x", "bound": map[string]any{"coef": -1.0}}}, "bounds.paramrs.bound.coef"},
		{map[string]any{"paramrs": map[string]any{"label": "x"}}, "bounds.paramrs.bound"},
	} {
		_, problems := planOLR(t, tc.bounds)
		if !strings.Contains(fmt.Sprint(problems), tc.want) {
			t.Errorf("%v: problems %v, want one naming %s", tc.bounds, problems, tc.want)
		}
	}
}

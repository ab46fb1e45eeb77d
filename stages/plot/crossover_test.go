package plot

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"zorepro/pipeline/task"
	"zorepro/stages/plot/crossing"
)

// crossoverSeries are three bodies (x = 1, 4, 16) at H = 1, 2, 4, 8, 16
// where ARS's advantage over ExAct is 40·log(H/H*), H* = 1.5·√x, and
// over ExAct (all steps) 5 less, paired noise −1, 0, +1 over three seeds.
func crossoverSeries() []Series {
	var out []Series
	hs := []float64{1, 2, 4, 8, 16}
	for _, x := range []float64{1, 4, 16} {
		panel := map[float64]string{1: "a", 4: "b", 16: "c"}[x]
		for seed, noise := range []float64{-1, 0, 1} {
			ars, exact, all := Series{Panel: panel, Curve: "arsv1", Seed: uint64(seed + 1)}, Series{Panel: panel, Curve: "exact", Seed: uint64(seed + 1)}, Series{Panel: panel, Curve: "exact_all", Seed: uint64(seed + 1)}
			for _, h := range hs {
				adv := 40 * math.Log(h/(1.5*math.Sqrt(x)))
				ars.X, ars.Y = append(ars.X, h), append(ars.Y, 100+adv+noise/2)
				exact.X, exact.Y = append(exact.X, h), append(exact.Y, 100-noise/2)
				all.X, all.Y = append(all.X, h), append(all.Y, 105-noise/2)
			}
			out = append(out, ars, exact, all)
		}
	}
	return out
}

// The difference view is the leader minus each rival per body, with the
// 95% paired t interval (here ±1·t(0.975, 2)/√3 around the difference);
// the scaling view draws each body's bracket as crossing.Analyze computes
// it (the report's scaling claims use the same), the point where the
// mean advantage turns positive, and the theory's slope through the
// points; its table lists them.
func TestCrossoverViews(t *testing.T) {
	v := &crossoverViews{leader: "arsv1", rivals: []string{"exact", "exact_all"}, scaling: []string{"exact"}, panelX: map[string]float64{"a": 1, "b": 4, "c": 16}, xLabel: "d/p", slope: 0.5}
	spec := Spec{Title: "t", Caption: "c", Panels: []PanelSpec{{Key: "a", Title: "A"}, {Key: "b", Title: "B"}, {Key: "c", Title: "C"}},
		Curves: []CurveStyle{{Key: "arsv1", Label: "ARS"}, {Key: "exact", Label: "ExAct"}, {Key: "exact_all", Label: "ExAct (all steps)"}}}
	series := crossoverSeries()
	rs := rows(series)
	ds, dc, err := v.differenceView(spec, rs, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(dc) != 6 || dc[1].Panel != "a" || dc[1].Curve != "exact_all" || len(dc[1].X) != 5 {
		t.Fatalf("difference curves: %+v", dc)
	}
	half := 4.302652729911275 / math.Sqrt(3) // t(0.975, 2)·sd 1/√3
	want := 40*math.Log(4/1.5) - 5           // ARS − ExAct (all steps) at body a, H = 4
	if got := dc[1]; math.Abs(got.Mean[2]-want) > 1e-9 || math.Abs(got.Hi[2]-got.Mean[2]-half) > 1e-9 || got.N != 3 {
		t.Errorf("a, exact_all at H = 4: %v [%v, %v], want %v ± %v", got.Mean[2], got.Lo[2], got.Hi[2], want, half)
	}
	if ds.Curves[0].Label != "ARS − ExAct" || ds.Panels[0].HLines[0].Y != 0 {
		t.Errorf("difference spec: %+v %+v", ds.Curves, ds.Panels[0].HLines)
	}
	ss, sc, table, err := v.scalingView(spec, rs, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	an, _ := crossing.Analyze(rs, []string{"a", "b", "c"}, []float64{1, 4, 16}, []string{"arsv1", "exact"}, crossing.Premise{})
	for i, b := range an.Brackets {
		if sc[0].X[3*i] != []float64{1, 4, 16}[i] || sc[0].Mean[3*i] != b.Lo || sc[0].Mean[3*i+1] != b.Hi || !math.IsNaN(sc[0].Mean[3*i+2]) {
			t.Errorf("bracket bar %d: %v %v, want (%v, %v]", i, sc[0].X[3*i:3*i+3], sc[0].Mean[3*i:3*i+3], b.Lo, b.Hi)
		}
		if math.Abs(sc[1].Mean[3*i]-b.Point) > 1e-12 {
			t.Errorf("tick %d at %v, want %v", i, sc[1].Mean[3*i], b.Point)
		}
	}
	if !strings.HasPrefix(string(table), "panel,x,lo,hi,point,seeds,alpha,used\na,1,1,2,1.5,3,0.0033333333333333335,yes\nb,4,2,4,2.99999") || strings.Count(string(table), "\n") != 4 {
		t.Errorf("table:\n%s", table)
	}
	g := ss.Panels[0].Guides
	if len(g) != 1 || math.Abs(math.Log(g[0].Y[1]/g[0].Y[0])/math.Log(g[0].X[1]/g[0].X[0])-0.5) > 1e-12 {
		t.Errorf("the theory's line: %+v", g)
	}
	for _, w := range []string{"A: 1 < H* ≤ 2; B: 2 < H* ≤ 4; C: 4 < H* ≤ 8.", "The lines through every bracket have slopes in [0.25, 0.75]", "least squares through the ticks: 0.5"} {
		if !strings.Contains(ss.Caption, w) {
			t.Errorf("caption lacks %q:\n%s", w, ss.Caption)
		}
	}
	// Each bar is named, the note spanning the bar as drawn, its tick
	// a mark the name keeps clear of.
	if n := ss.Panels[0].Notes; len(n) != 3 || n[1].Text != "B" || n[1].X != 4 || n[1].Lo != an.Brackets[1].Lo || n[1].Hi != an.Brackets[1].Hi {
		t.Errorf("the bodies' names: %+v", n)
	} else if m := n[1].Marks; len(m) != 1 || m[0].Y != an.Brackets[1].Point || math.Abs(m[0].X0-4/1.04) > 1e-12 || math.Abs(m[0].X1-4*1.04) > 1e-12 {
		t.Errorf("B's name does not keep clear of its tick at %v: marks %+v", an.Brackets[1].Point, m)
	}
	if _, _, err := Render(ss, sc); err != nil {
		t.Errorf("render the scaling view: %v", err)
	}
	// A premise the first two bodies fail (ARS over ExAct stays within
	// [0.5, 2] at every H there): no bar for them, the caption says why,
	// the table marks them unused.
	v.premise = crossing.Premise{Lo: 0.5, Hi: 2}
	ss, sc, table, err = v.scalingView(spec, rs, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc[0].X) != 3 || sc[0].X[0] != 16 || len(ss.Panels[0].Notes) != 1 || ss.Panels[0].Notes[0].Text != "C" {
		t.Errorf("bars at %v, names %+v; want one, C's", sc[0].X, ss.Panels[0].Notes)
	}
	for _, w := range []string{"A: not used, the mean arsv1 / exact is 0.837", "which never leaves [0.5, 2]", "A body takes part only where the mean of ARS over the mean of ExAct leaves [0.5, 2] at some H"} {
		if !strings.Contains(ss.Caption, w) {
			t.Errorf("caption lacks %q:\n%s", w, ss.Caption)
		}
	}
	if !strings.Contains(string(table), "\na,1,,,,3,0.0033333333333333335,no\n") || !strings.Contains(string(table), ",yes\n") {
		t.Errorf("table with a premise:\n%s", table)
	}
	if _, _, err := Render(ss, sc); err != nil {
		t.Errorf("render the scaling view with unused bodies: %v", err)
	}
	v.premise = crossing.Premise{}
	// Two bodies at one value are drawn side by side, and the caption
	// says so.
	v.panelX["b"] = 1
	ss, sc, _, err = v.scalingView(spec, rs, []string{"a", "b", "c"})
	if err != nil || sc[0].X[0] != 1 || sc[0].X[3] != 1.05 || !strings.Contains(ss.Caption, "drawn side by side, 5% apart") {
		t.Errorf("bodies at one value: bars at %v, %v: %v", sc[0].X[0], sc[0].X[3], err)
	}
	delete(v.panelX, "c")
	if _, _, _, err := v.scalingView(spec, rs, []string{"a", "b", "c"}); err == nil || !strings.Contains(err.Error(), `panel "c" has no value in panel_x`) {
		t.Errorf("a panel without its value: %v", err)
	}
}

// A body whose advantage changes sign twice (body c: ahead at H = 8,
// clearly behind at 16) has no bracket: the scaling view draws its bar
// from the horizon where the leader is clearly ahead to the one where it
// is clearly behind in a colour of its own with its own legend entry, not
// as a bracket of H*, gives it no tick, leaves it out of the theory
// line's fit, and its caption says there is no single crossover there.
func TestCrossoverScalingViewBroken(t *testing.T) {
	v := &crossoverViews{leader: "arsv1", rivals: []string{"exact"}, scaling: []string{"exact"}, panelX: map[string]float64{"a": 1, "b": 4, "c": 16}, xLabel: "d/p", slope: 0.5}
	spec := Spec{Title: "t", Caption: "c", Panels: []PanelSpec{{Key: "a", Title: "A"}, {Key: "b", Title: "B"}, {Key: "c", Title: "C"}},
		Curves: []CurveStyle{{Key: "arsv1", Label: "ARS"}, {Key: "exact", Label: "ExAct"}}}
	series := crossoverSeries()
	for i, s := range series {
		if s.Panel == "c" && s.Curve == "arsv1" {
			series[i].Y[4] -= 200 // H = 16
		}
	}
	rs := rows(series)
	an, _ := crossing.Analyze(rs, []string{"a", "b", "c"}, []float64{1, 4, 16}, []string{"arsv1", "exact"}, crossing.Premise{})
	if c := an.Brackets[2]; c.Consistent() || c.Lo != 16 || c.Hi != 8 || !an.Brackets[1].Consistent() {
		t.Fatalf("the test's body c: bracket (%v, %v], want ahead at 8 and behind at 16", c.Lo, c.Hi)
	}
	ss, sc, table, err := v.scalingView(spec, rs, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Curve{}
	for _, c := range sc {
		byKey[c.Curve] = c
	}
	if b := byKey["bracket"]; len(b.X) != 6 || b.X[3] != 4 {
		t.Errorf("brackets drawn at %v, want a's and b's only", b.X)
	}
	if b := byKey["broken"]; len(b.X) != 3 || b.X[0] != 16 || b.Mean[0] != 8 || b.Mean[1] != 16 || !math.IsNaN(b.Mean[2]) {
		t.Errorf("c's bar: %v %v, want from 8 to 16 at 16", b.X, b.Mean)
	}
	if d := byKey["point"]; len(d.X) != 6 {
		t.Errorf("ticks at %v, want a's and b's only", d.X)
	}
	styled := false
	for _, c := range ss.Curves {
		if c.Key == "broken" {
			styled = strings.Contains(c.Label, "no single H*") && c.Color != nil
		}
	}
	if !styled {
		t.Errorf("no legend entry for the broken bar: %+v", ss.Curves)
	}
	if n := ss.Panels[0].Notes; len(n) != 3 || n[2].Text != "C" || n[2].Lo != 8 || n[2].Hi != 16 {
		t.Errorf("the bodies' names: %+v", n)
	}
	// The theory line runs through a's and b's ticks only.
	slope, c := crossing.Fit([]float64{1, 4}, an.Brackets[:2], 0.5)
	g := ss.Panels[0].Guides
	if len(g) != 1 || math.Abs(g[0].Y[0]-math.Exp(c)*math.Pow(g[0].X[0], 0.5)) > 1e-9 {
		t.Errorf("the theory's line %+v, want through a's and b's ticks (intercept %v)", g, c)
	}
	for _, w := range []string{"C: clearly behind at H = 16 above clearly ahead at 8: no single crossover", "A body without a single crossover has no crossover horizon for a power law to pass through", fmt.Sprintf("least squares through the ticks: %s", sig4(slope))} {
		if !strings.Contains(ss.Caption, w) {
			t.Errorf("caption lacks %q:\n%s", w, ss.Caption)
		}
	}
	if !strings.Contains(string(table), "\nc,16,16,8,,3,") {
		t.Errorf("table:\n%s", table)
	}
	if _, _, err := Render(ss, sc); err != nil {
		t.Errorf("render the scaling view with a broken bracket: %v", err)
	}
}

// companion_crossover's problems are named by field: curves that are not
// the figure's, a panel value that is not positive, a scaling view
// without its axis label.
func TestCrossoverViewsValidation(t *testing.T) {
	plan := func(cc map[string]any) error {
		p := task.NewParams("dag.yaml", "plot/crossover", map[string]any{
			"figure": "crossover", "mode": "final", "x_coord": "horizon", "y": "return", "panel": "name",
			"curve": "method", "curves": []any{"arsv1", "exact"}, "companion_crossover": cc,
		})
		(&Kind{}).Plan(p)
		return p.Err()
	}
	err := plan(map[string]any{"leader": "arsv1", "rivals": []any{"exact", "exact_al"}, "scaling_rivals": []any{"exakt"}, "panel_x": map[string]any{"swimmer": 0.0}, "ratio_within": []any{1.001, 0.999}})
	for _, want := range []string{
		`params.companion_crossover.ratio_within: must be [lo, hi] with lo < hi`,
		`params.companion_crossover.rivals: "exact_al" is not one of the curves [arsv1 exact]`,
		`params.companion_crossover.scaling_rivals: "exakt" is not one of the curves`,
		`params.companion_crossover.panel_x.swimmer: must be positive`,
		`params.companion_crossover.x_label: missing`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if err := plan(map[string]any{"leader": "arsv1", "rivals": []any{"exact"}}); err != nil {
		t.Errorf("the difference view alone: %v", err)
	}
}

// The scaling view names each bar by its body alone: the panel title
// without its parenthesis and gym version (six names to place, four of
// them within a factor of 2.2 of d/p; with "-v2" the first name of the
// crossover profile's six crossed two other bodies' bars).
func TestShortTitle(t *testing.T) {
	for in, want := range map[string]string{
		"Swimmer-v2 (d/p = 8)":     "Swimmer",
		"HalfCheetah-v2":           "HalfCheetah",
		"Humanoid-v10 (d/p = 376)": "Humanoid",
		"B (x = 4)":                "B",
		"Ant-v2x":                  "Ant-v2x",
		"LQR v2":                   "LQR v2",
	} {
		if got := shortTitle(in); got != want {
			t.Errorf("shortTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

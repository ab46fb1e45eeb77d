package plot

import (
	"math"
	"testing"
)

// Clopper–Pearson 95% intervals, known answers (e.g. R's binom.test):
// 0 of 10 [0, 0.3085], 5 of 10 [0.1871, 0.8129], 10 of 10 [0.6915, 1].
func TestClopperPearsonKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{{0, 10, 0, 0.30850}, {5, 10, 0.18709, 0.81291}, {10, 10, 0.69150, 1}, {1, 10, 0.00253, 0.44502}} {
		lo, hi := clopperPearson(tc.k, tc.n)
		if math.Abs(lo-tc.lo) > 5e-5 || math.Abs(hi-tc.hi) > 5e-5 {
			t.Errorf("%d of %d: [%.5f, %.5f], want [%.5f, %.5f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

// The converged view counts, per curve and x, the seeds below the cap:
// its curve is the fraction, its band the exact interval, its axis [0, 1].
func TestConvergedView(t *testing.T) {
	var fs []final
	for seed, raw := range []float64{1e5, 2e5, 1e6, 1e6} { // 2 of 4 converge at x = 0.01
		fs = append(fs, final{curve: "ars", seed: uint64(seed + 1), x: 0.01, raw: raw})
	}
	for seed := range 4 { // none at x = 0.1
		fs = append(fs, final{curve: "ars", seed: uint64(seed + 1), x: 0.1, raw: 1e6})
	}
	spec := Spec{Panels: []PanelSpec{{LogX: true, LogY: true}}, Curves: []CurveStyle{{Key: "ars", Label: "ARS", Color: red}}, Caption: "c"}
	v, cs := convergedView(spec, fs, 1e6, []string{""}, []string{"ars"}, "10⁶ samples")
	if len(cs) != 1 || len(cs[0].X) != 2 || cs[0].Mean[0] != 0.5 || cs[0].Mean[1] != 0 || cs[0].N != 4 {
		t.Fatalf("curves %+v", cs)
	}
	if lo, hi := clopperPearson(2, 4); cs[0].Lo[0] != lo || cs[0].Hi[0] != hi {
		t.Errorf("band at 0.01: [%v, %v], want [%v, %v]", cs[0].Lo[0], cs[0].Hi[0], lo, hi)
	}
	p := v.Panels[0]
	if p.LogY || *p.YMin != 0 || *p.YMax != 1 || !p.LogX {
		t.Errorf("panel %+v: want a linear [0, 1] y axis and the figure's log x", p)
	}
	if _, _, err := Render(v, cs); err != nil {
		t.Error(err)
	}
	if got := string(convergedCSV(fs, 1e6, []string{""}, []string{"ars"})); got != "panel,curve,x,converged,n_seeds,fraction\n,ars,0.01,2,4,0.5\n,ars,0.1,0,4,0\n" {
		t.Errorf("converged.csv:\n%s", got)
	}
}

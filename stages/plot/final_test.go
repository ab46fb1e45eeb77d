package plot

import (
	"math"
	"strings"
	"testing"
)

func TestFinalSeriesAndConvergedTable(t *testing.T) {
	r := &runner{yScale: 1e-4}
	fs := []final{
		{curve: "ars", seed: 2, x: 0.1, raw: 1e6},
		{curve: "ars", seed: 1, x: 0.1, raw: 4e4},
		{curve: "ars", seed: 1, x: 0.01, raw: 2e4},
		{curve: "ars", seed: 2, x: 0.01, raw: 6e4},
		{curve: "exact", seed: 1, x: 0.01, raw: 1e6},
	}
	series := r.finalSeries(fs)
	if len(series) != 3 {
		t.Fatalf("%d series, want 3 (ars×2 seeds, exact×1)", len(series))
	}
	// Series keep first-appearance order; points are sorted by x and scaled.
	s := series[0]
	if s.Curve != "ars" || s.Seed != 2 || s.X[0] != 0.01 || s.X[1] != 0.1 || s.Y[0] != 6 || s.Y[1] != 100 {
		t.Fatalf("series[0] = %+v", s)
	}
	got := string(convergedCSV(fs, 1e6, []string{""}, []string{"ars", "exact"}))
	want := "panel,curve,x,converged,n_seeds,fraction\n" +
		",ars,0.01,2,2,1\n" +
		",ars,0.1,1,2,0.5\n" +
		",exact,0.01,0,1,0\n"
	if got != want {
		t.Fatalf("converged table:\n%s\nwant\n%s", got, want)
	}
}

func TestFitAndRatioTables(t *testing.T) {
	// y = 2·x^−0.25 exactly for seed 1 and 4·x^−0.25 for seed 2 in panel
	// "10"; panel "100" is twice panel "10".
	var series []Series
	for _, p := range []struct {
		panel string
		k     float64
	}{{"10", 1}, {"100", 2}} {
		for seed, c := range []float64{2, 4} {
			s := Series{Panel: p.panel, Curve: "a", Seed: uint64(seed)}
			for _, x := range []float64{100, 1000, 10000} {
				s.X = append(s.X, x)
				s.Y = append(s.Y, p.k*c*math.Pow(x, -0.25))
			}
			series = append(series, s)
		}
	}
	fit := string(FitCSV(series))
	want := "panel,curve,slope,slope_lo,slope_hi,n_seeds\n10,a,-0.25"
	if !strings.HasPrefix(fit, want) || !strings.Contains(fit, "\n100,a,-0.25") {
		t.Fatalf("fit table:\n%s", fit)
	}
	ratio := string(RatioCSV(series, []string{"10", "100"}, []string{"a"}))
	if !strings.Contains(ratio, "a,100,100,2,") || !strings.Contains(ratio, "a,100,10,1,") {
		t.Fatalf("ratio table:\n%s", ratio)
	}
}

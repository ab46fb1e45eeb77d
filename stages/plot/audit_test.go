package plot

import (
	"math"
	"testing"

	"zorepro/stages/plot/seedscsv"
)

// The readers invert the writers exactly (floats bit for bit, NaN and
// infinities included), and PointOf gives the reduction Aggregate gives.
func TestReadersInvertWritersAndPointOfMatchesAggregate(t *testing.T) {
	series := []Series{
		{Panel: "10", Curve: "ars", Seed: 5488, X: []float64{1, 2.5, 1e6}, Y: []float64{0.1, 1.0 / 3, math.Inf(1)}},
		{Panel: "10", Curve: "ars", Seed: 7151, X: []float64{1, 2.5, 1e6}, Y: []float64{0.2, math.Nextafter(1.0/3, 1), 7}},
		{Panel: "10", Curve: "ars", Seed: 6027, X: []float64{1, 2.5, 1e6}, Y: []float64{0.7, 2e-300, 3}},
		{Panel: "a,b", Curve: "q\"x", Seed: 1, X: []float64{3}, Y: []float64{math.NaN()}},
	}
	for _, band := range []Band{BandMinMaxStd, BandStdErr} {
		floor := 0.15
		curves, err := AggregateWith(series, AggregateOptions{Band: band, LoFloor: &floor})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := ReadCurvesCSV(CurvesCSV(curves))
		if err != nil {
			t.Fatal(err)
		}
		seeds, err := seedscsv.Parse(SeedsCSV(series))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 4 || len(seeds) != 10 {
			t.Fatalf("%d rows, %d seed rows", len(rows), len(seeds))
		}
		for _, r := range rows {
			var ys []float64
			for _, s := range seeds {
				if s.Panel == r.Panel && s.Curve == r.Curve && SameFloat(s.X, r.X) {
					ys = append(ys, s.Y)
				}
			}
			mean, lo, hi, err := PointOf(ys, band, &floor)
			if err != nil {
				t.Fatal(err)
			}
			if !SameFloat(mean, r.Mean) || !SameFloat(lo, r.Lo) || !SameFloat(hi, r.Hi) || len(ys) != r.N {
				t.Errorf("%s %s x=%v: PointOf %v [%v, %v] of %d, figure %v [%v, %v] of %d", r.Panel, r.Curve, r.X, mean, lo, hi, len(ys), r.Mean, r.Lo, r.Hi, r.N)
			}
		}
	}
	if _, err := ReadCurvesCSV([]byte("panel,curve,x\n")); err == nil {
		t.Error("a wrong header was accepted")
	}
}

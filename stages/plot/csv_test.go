package plot

import (
	"math"
	"testing"
)

func TestCurvesCSV(t *testing.T) {
	curves := []Curve{
		{Panel: "d=10", Curve: "ars", X: []float64{100, 2.5e5}, Mean: []float64{0.1, 1.0 / 3},
			Lo: []float64{0, math.NaN()}, Hi: []float64{0.2, math.Inf(1)}, N: 10},
		{Panel: "a,b", Curve: `q"t`, X: []float64{1e-7}, Mean: []float64{-2}, Lo: []float64{-3}, Hi: []float64{-1}, N: 3},
	}
	want := "panel,curve,x,mean,band_lo,band_hi,n_seeds\n" +
		"d=10,ars,100,0.1,0,0.2,10\n" +
		"d=10,ars,250000,0.3333333333333333,NaN,+Inf,10\n" +
		`"a,b","q""t",1e-07,-2,-3,-1,3` + "\n"
	if got := string(CurvesCSV(curves)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got, want := string(CurvesCSV(nil)), "panel,curve,x,mean,band_lo,band_hi,n_seeds\n"; got != want {
		t.Fatalf("empty: %q", got)
	}
}

func TestSeedsCSV(t *testing.T) {
	series := []Series{
		{Panel: "swimmer", Curve: "exact", Seed: 81856320, X: []float64{1, 2}, Y: []float64{0.5, 12.25}},
		{Panel: "swimmer", Curve: "ars", Seed: 18446744073709551615, X: []float64{3}, Y: []float64{-0.75}},
	}
	want := "panel,curve,seed,x,y\n" +
		"swimmer,exact,81856320,1,0.5\n" +
		"swimmer,exact,81856320,2,12.25\n" +
		"swimmer,ars,18446744073709551615,3,-0.75\n"
	if got := string(SeedsCSV(series)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestCSVRoundTripOfAggregate(t *testing.T) {
	curves, err := Aggregate(threeSeeds, BandMinMaxStd)
	if err != nil {
		t.Fatal(err)
	}
	want := "panel,curve,x,mean,band_lo,band_hi,n_seeds\n" +
		"p,c,1,3,1,5.160246899469287,3\n" +
		"p,c,2,1,0,2.414213562373095,3\n" +
		"p,c,3,2,0.5857864376269049,3,3\n" +
		"p,c,4,5,5,5,3\n"
	if got := string(CurvesCSV(curves)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

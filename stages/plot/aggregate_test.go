package plot

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// threeSeeds has hand-computed statistics (population std, ddof 0):
//
//	x=1: y = 1, 2, 6  mean 3, sq dev 4+1+9 = 14,  std √(14/3) ≈ 2.160
//	     min-max band: [max(3-2.160, 1), min(3+2.160, 6)] = [1 (min), 5.160]
//	x=2: y = 0, 0, 3  mean 1, sq dev 1+1+4 = 6,   std √2 ≈ 1.414
//	     min-max band: [max(-0.414, 0), min(2.414, 3)] = [0 (min), 2.414]
//	x=3: y = 0, 3, 3  mean 2, sq dev 4+1+1 = 6,   std √2
//	     min-max band: [max(0.586, 0), min(3.414, 3)] = [0.586, 3 (max)]
//	x=4: y = 5, 5, 5  mean 5, std 0: band [5, 5]
var threeSeeds = []Series{
	{Panel: "p", Curve: "c", Seed: 11, X: []float64{1, 2, 3, 4}, Y: []float64{1, 0, 0, 5}},
	{Panel: "p", Curve: "c", Seed: 22, X: []float64{1, 2, 3, 4}, Y: []float64{2, 0, 3, 5}},
	{Panel: "p", Curve: "c", Seed: 33, X: []float64{1, 2, 3, 4}, Y: []float64{6, 3, 3, 5}},
}

func TestAggregateMinMaxStd(t *testing.T) {
	got, err := Aggregate(threeSeeds, BandMinMaxStd)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := math.Sqrt(14.0/3), math.Sqrt(2)
	want := []Curve{{
		Panel: "p", Curve: "c", N: 3,
		X:    []float64{1, 2, 3, 4},
		Mean: []float64{3, 1, 2, 5},
		Lo:   []float64{1, 0, 2 - s2, 5},
		Hi:   []float64{3 + s1, 1 + s2, 3, 5},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestAggregateStdErr(t *testing.T) {
	got, err := Aggregate(threeSeeds, BandStdErr)
	if err != nil {
		t.Fatal(err)
	}
	se1 := math.Sqrt(14.0/3) / math.Sqrt(3)
	se2 := math.Sqrt(2) / math.Sqrt(3)
	c := got[0]
	wantLo := []float64{3 - se1, 1 - se2, 2 - se2, 5}
	wantHi := []float64{3 + se1, 1 + se2, 2 + se2, 5}
	if !reflect.DeepEqual(c.Lo, wantLo) || !reflect.DeepEqual(c.Hi, wantHi) {
		t.Fatalf("Lo %v Hi %v, want %v %v", c.Lo, c.Hi, wantLo, wantHi)
	}
	// Hand values: √(14/3)/√3 = √14/3 ≈ 1.2472, √2/√3 ≈ 0.8165.
	if math.Abs(se1-1.2472191289246473) > 1e-15 || math.Abs(se2-0.816496580927726) > 1e-15 {
		t.Fatalf("standard errors %v %v", se1, se2)
	}
}

func TestAggregateLoFloor(t *testing.T) {
	zero := 0.0
	got, err := AggregateWith(threeSeeds, AggregateOptions{Band: BandStdErr, LoFloor: &zero})
	if err != nil {
		t.Fatal(err)
	}
	se2 := math.Sqrt(2) / math.Sqrt(3)
	if lo := got[0].Lo[1]; lo != 1-se2 { // 0.18: above the floor, unchanged
		t.Fatalf("Lo[1] = %v", lo)
	}
	// A band entirely below the floor collapses onto it.
	neg := []Series{
		{Panel: "p", Curve: "c", Seed: 1, X: []float64{1, 2}, Y: []float64{-1, -5}},
		{Panel: "p", Curve: "c", Seed: 2, X: []float64{1, 2}, Y: []float64{1, -3}},
	}
	got, err = AggregateWith(neg, AggregateOptions{Band: BandStdErr, LoFloor: &zero})
	if err != nil {
		t.Fatal(err)
	}
	c := got[0]
	se := 1 / math.Sqrt(2)
	if c.Lo[0] != 0 || c.Hi[0] != se || c.Mean[0] != 0 {
		t.Fatalf("x=1: mean %v band [%v, %v]", c.Mean[0], c.Lo[0], c.Hi[0])
	}
	if c.Lo[1] != 0 || c.Hi[1] != 0 || c.Mean[1] != -4 {
		t.Fatalf("x=2: mean %v band [%v, %v], want -4 [0, 0]", c.Mean[1], c.Lo[1], c.Hi[1])
	}
}

func TestAggregateOrder(t *testing.T) {
	x := []float64{1}
	in := []Series{
		{Panel: "b", Curve: "z", Seed: 1, X: x, Y: []float64{1}},
		{Panel: "a", Curve: "y", Seed: 1, X: x, Y: []float64{2}},
		{Panel: "b", Curve: "x", Seed: 1, X: x, Y: []float64{3}},
		{Panel: "a", Curve: "z", Seed: 1, X: x, Y: []float64{4}},
		{Panel: "b", Curve: "z", Seed: 2, X: x, Y: []float64{5}},
	}
	got, err := Aggregate(in, BandStdErr)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range got {
		order = append(order, c.Panel+"/"+c.Curve)
	}
	if want := "b/z b/x a/y a/z"; strings.Join(order, " ") != want {
		t.Fatalf("order %v, want %s", order, want)
	}
	if got[0].N != 2 || got[0].Mean[0] != 3 {
		t.Fatalf("b/z: N %d mean %v", got[0].N, got[0].Mean)
	}
}

func TestAggregateGridMismatch(t *testing.T) {
	in := append([]Series(nil), threeSeeds...)
	in[2] = Series{Panel: "p", Curve: "c", Seed: 33, X: []float64{1, 2, 3.5, 4}, Y: []float64{6, 3, 3, 5}}
	in = append(in, Series{Panel: "q", Curve: "d", Seed: 7, X: []float64{1, 2}, Y: []float64{1, 2}},
		Series{Panel: "q", Curve: "d", Seed: 8, X: []float64{1}, Y: []float64{1}})
	_, err := Aggregate(in, BandMinMaxStd)
	if !errors.Is(err, ErrGridMismatch) {
		t.Fatalf("err = %v, want ErrGridMismatch", err)
	}
	var se *SeriesError
	if !errors.As(err, &se) || se.Panel != "p" || se.Curve != "c" || se.Seed != 33 {
		t.Fatalf("first error %#v", se)
	}
	// Both problems are reported, each naming panel, curve and seed.
	msg := err.Error()
	for _, s := range []string{`panel "p" curve "c" seed 33`, "x[2] = 3.5, seed 11's is 3",
		`panel "q" curve "d" seed 8`, "x grid has 1 points, seed 7's has 2"} {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q lacks %q", msg, s)
		}
	}
}

func TestAggregateBadInput(t *testing.T) {
	cases := []struct {
		name string
		in   []Series
		band Band
		want error
	}{
		{"no series", nil, BandStdErr, ErrNoSeries},
		{"unknown band", threeSeeds, "sem", ErrUnknownBand},
		{"length", []Series{{Panel: "p", Curve: "c", X: []float64{1, 2}, Y: []float64{1}}}, BandStdErr, ErrBadSeries},
		{"empty", []Series{{Panel: "p", Curve: "c"}}, BandStdErr, ErrBadSeries},
		{"unsorted", []Series{{Panel: "p", Curve: "c", X: []float64{2, 1}, Y: []float64{1, 1}}}, BandStdErr, ErrBadSeries},
		{"nan x", []Series{{Panel: "p", Curve: "c", X: []float64{math.NaN()}, Y: []float64{1}}}, BandStdErr, ErrBadSeries},
		{"duplicate seed", append(append([]Series(nil), threeSeeds...), threeSeeds[0]), BandStdErr, ErrDuplicateSeed},
	}
	for _, tc := range cases {
		if _, err := Aggregate(tc.in, tc.band); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestAggregateNonFiniteY(t *testing.T) {
	in := []Series{
		{Panel: "p", Curve: "c", Seed: 1, X: []float64{1, 2}, Y: []float64{1, math.Inf(1)}},
		{Panel: "p", Curve: "c", Seed: 2, X: []float64{1, 2}, Y: []float64{3, 1}},
	}
	got, err := Aggregate(in, BandMinMaxStd)
	if err != nil {
		t.Fatal(err)
	}
	c := got[0]
	if c.Mean[0] != 2 || c.Lo[0] != 1 || c.Hi[0] != 3 {
		t.Fatalf("x=1: %v [%v, %v]", c.Mean[0], c.Lo[0], c.Hi[0])
	}
	if !math.IsInf(c.Mean[1], 1) || finite(c.Lo[1]) {
		t.Fatalf("x=2: mean %v lo %v, want +Inf and non-finite", c.Mean[1], c.Lo[1])
	}
}

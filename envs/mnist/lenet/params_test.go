package lenet

import (
	"math"
	"slices"
	"testing"
)

// The parameter count and layout of spec §2.2: 260 + 5,020 + 16,050 + 510.
func TestParamLayout(t *testing.T) {
	want := []struct {
		name   string
		offset int
		shape  []int
		fanIn  int
	}{
		{"conv1.weight", 0, []int{10, 1, 5, 5}, 25},
		{"conv1.bias", 250, []int{10}, 25},
		{"conv2.weight", 260, []int{20, 10, 5, 5}, 250},
		{"conv2.bias", 5260, []int{20}, 250},
		{"fc1.weight", 5280, []int{50, 320}, 320},
		{"fc1.bias", 21280, []int{50}, 320},
		{"fc2.weight", 21330, []int{10, 50}, 50},
		{"fc2.bias", 21830, []int{10}, 50},
	}
	ts := Tensors()
	if len(ts) != len(want) {
		t.Fatalf("%d tensors, want %d", len(ts), len(want))
	}
	next := 0
	for i, w := range want {
		g := ts[i]
		if g.Name != w.name || g.Offset != w.offset || !slices.Equal(g.Shape, w.shape) || g.FanIn != w.fanIn {
			t.Errorf("tensor %d = %+v, want %+v", i, g, w)
		}
		if g.Offset != next {
			t.Errorf("%s starts at %d, want %d (contiguous)", g.Name, g.Offset, next)
		}
		next = g.Offset + g.Len()
	}
	if next != NumParams || NumParams != 21840 {
		t.Errorf("total %d, NumParams %d, want 21840", next, NumParams)
	}
	layers := []int{ts[0].Len() + ts[1].Len(), ts[2].Len() + ts[3].Len(), ts[4].Len() + ts[5].Len(), ts[6].Len() + ts[7].Len()}
	if !slices.Equal(layers, []int{260, 5020, 16050, 510}) {
		t.Errorf("per-layer counts %v, want [260 5020 16050 510]", layers)
	}
	consts := []int{OffConv1W, OffConv1B, OffConv2W, OffConv2B, OffFC1W, OffFC1B, OffFC2W, OffFC2B}
	for i, c := range consts {
		if c != ts[i].Offset {
			t.Errorf("offset constant %d = %d, want %d", i, c, ts[i].Offset)
		}
	}
	theta := make([]float64, NumParams)
	fc2b := ts[7].Of(theta)
	fc2b[0] = 7
	if theta[21830] != 7 || len(fc2b) != 10 || cap(fc2b) != 10 {
		t.Error("Of does not alias the flat vector")
	}
}

// Init: U(−k, k) with k = 1/√fan_in per tensor, one Float64 per element in
// flat order, the same bits for the same stream.
func TestInit(t *testing.T) {
	theta := NewParams(newRand(5488))
	replay := newRand(5488)
	for _, ts := range Tensors() {
		k := 1 / math.Sqrt(float64(ts.FanIn))
		if ts.Bound() != k {
			t.Errorf("%s: Bound %v, want %v", ts.Name, ts.Bound(), k)
		}
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for j, v := range ts.Of(theta) {
			if want := replay.Float64()*(k+k) - k; v != want {
				t.Fatalf("%s[%d] = %v, want the draw-order value %v", ts.Name, j, v, want)
			}
			if v < -k || v > k {
				t.Errorf("%s[%d] = %v outside [−%v, %v]", ts.Name, j, v, k, k)
			}
			lo, hi, sum = min(lo, v), max(hi, v), sum+v
		}
		n := float64(ts.Len())
		// The extremes of n uniforms lie within k·(2/(n+1))·5 of the ends
		// except with probability < e⁻⁵ per end; the mean within 5 standard
		// errors k/√(3n) of 0.
		slack := 2 * k * 5 / (n + 1)
		if lo > -k+slack || hi < k-slack {
			t.Errorf("%s: range [%v, %v] does not fill [−%v, %v]", ts.Name, lo, hi, k, k)
		}
		if mean := sum / n; math.Abs(mean) > 5*k/math.Sqrt(3*n) {
			t.Errorf("%s: mean %v, want ≈ 0 (k = %v)", ts.Name, mean, k)
		}
	}
	again := NewParams(newRand(5488))
	if !slices.Equal(theta, again) {
		t.Error("Init is not deterministic")
	}
	if slices.Equal(theta, NewParams(newRand(7151))) {
		t.Error("different streams gave the same parameters")
	}
}

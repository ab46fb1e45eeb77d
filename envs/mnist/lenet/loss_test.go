package lenet

import (
	"math"
	"slices"
	"testing"
)

// Known answers: uniform logits give L = log 10 and ∂L/∂z = (0.1 − 1[j=y])/n;
// the REINFORCE loss is the reward-weighted version.
func TestLossKnownValues(t *testing.T) {
	z := make([]float64, 2*Classes)
	dz := make([]float64, len(z))
	if l := CrossEntropy(z, []int{3, 8}, dz); math.Abs(l-math.Log(10)) > 1e-15 {
		t.Errorf("CrossEntropy of uniform logits = %v, want log 10", l)
	}
	for i := range dz {
		want := 0.1 / 2
		if i == 3 || i == Classes+8 {
			want = -0.9 / 2
		}
		if math.Abs(dz[i]-want) > 1e-16 {
			t.Errorf("dz[%d] = %v, want %v", i, dz[i], want)
		}
	}
	// r = (+1, −1): the two terms cancel in the loss, the gradient rows
	// flip sign.
	if l := ReinforceLoss(z, []int{3, 8}, []float64{1, -1}, dz); l != 0 {
		t.Errorf("ReinforceLoss = %v, want 0", l)
	}
	if math.Abs(dz[3]+0.45) > 1e-16 || math.Abs(dz[Classes+8]-0.45) > 1e-16 || math.Abs(dz[Classes]+0.05) > 1e-16 {
		t.Errorf("ReinforceLoss gradient %v", dz)
	}
	// A confident correct prediction has a tiny loss, without overflow for
	// huge logits.
	z[5] = 1000
	if l := CrossEntropy(z[:Classes], []int{5}, nil); l != 0 {
		t.Errorf("CrossEntropy of a 1000-logit margin = %v, want 0", l)
	}
}

func TestSoftmax(t *testing.T) {
	rng := newRand(21)
	z := make([]float64, 4*Classes)
	for i := range z {
		z[i] = 30 * rng.NormFloat64()
	}
	z[0] = 800 // exp would overflow without the max shift
	p := make([]float64, len(z))
	Softmax(p, z)
	lp := make([]float64, len(z))
	LogSoftmax(lp, z)
	for i := 0; i < 4; i++ {
		var s float64
		for j := 0; j < Classes; j++ {
			v := p[i*Classes+j]
			if v < 0 || v > 1 || math.IsNaN(v) {
				t.Fatalf("p[%d][%d] = %v", i, j, v)
			}
			if w := math.Exp(lp[i*Classes+j]); math.Abs(w-v) > 1e-14*v {
				t.Errorf("exp(logsoftmax) = %v, softmax %v at [%d][%d]", w, v, i, j)
			}
			s += v
		}
		if math.Abs(s-1) > 4e-16*Classes {
			t.Errorf("row %d sums to %v", i, s)
		}
	}
	// In place, and invariant to a shift of the logits by a power of two.
	q := slices.Clone(z)
	for i := range q {
		q[i] += 64
	}
	Softmax(q, q)
	if d := maxRelDiff(q, p); d > 1e-13 {
		t.Errorf("shifted softmax differs by %g", d)
	}
}

func TestArgmax(t *testing.T) {
	for _, tc := range []struct {
		row  []float64
		want int
	}{
		{[]float64{1, 3, 2}, 1},
		{[]float64{3, 3, 1}, 0}, // ties: first
		{[]float64{-1, math.NaN(), -0.5}, 2},
		{[]float64{math.NaN(), math.NaN()}, 0},
		{[]float64{math.Inf(-1), -1e300}, 1},
	} {
		if got := Argmax(tc.row); got != tc.want {
			t.Errorf("Argmax(%v) = %d, want %d", tc.row, got, tc.want)
		}
	}
}

// SampleAction: the documented inverse-CDF rule, frequencies close to p,
// zero-probability classes never drawn.
func TestSampleAction(t *testing.T) {
	p := []float64{0.1, 0, 0.2, 0.3, 0, 0.15, 0.05, 0.1, 0.1, 0}
	rng, replay := newRand(22), newRand(22)
	const n = 100000
	var count [Classes]int
	for range n {
		a := SampleAction(p, rng)
		u := replay.Float64()
		var s float64
		want := -1
		for j, v := range p {
			s += v
			if u < s {
				want = j
				break
			}
		}
		if a != want {
			t.Fatalf("u = %v: action %d, want %d", u, a, want)
		}
		count[a]++
	}
	for j, c := range count {
		// binomial standard deviation √(n·p·(1−p)) ≤ 145; allow 5σ.
		if math.Abs(float64(c)-n*p[j]) > 5*math.Sqrt(n*p[j]*(1-p[j]))+1e-9 {
			t.Errorf("class %d drawn %d times, expected %v", j, c, n*p[j])
		}
	}
	// Roundoff: a total below u falls back to the last positive class.
	if a := SampleAction([]float64{0, 1e-300, 0}, newRand(1)); a != 1 {
		t.Errorf("fallback gave %d, want 1", a)
	}
}

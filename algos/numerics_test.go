package algos

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"zorepro/pipeline/blob"
)

// TestRunningStatHand: pushes [1,2], [3,2], [5,2]: mean [3,2]; the first
// coordinate's sample variance is ((−2)²+0+2²)/2 = 4; the second is exactly 0
// and is reported as 1 (spec §1).
func TestRunningStatHand(t *testing.T) {
	r := NewRunningStat(2)
	if m, v := r.Mean(nil), r.Var(nil); m[0] != 0 || m[1] != 0 || v[0] != 1 || v[1] != 1 {
		t.Fatalf("empty: mean %v var %v, want 0 and 1", m, v)
	}
	r.Push([]float64{1, 2})
	if m, v := r.Mean(nil), r.Var(nil); m[0] != 1 || m[1] != 2 || v[0] != 1 || v[1] != 1 {
		t.Fatalf("n=1: mean %v var %v, want x and 1", m, v)
	}
	r.Push([]float64{3, 2})
	r.Push([]float64{5, 2})
	m, v, s := r.Mean(nil), r.Var(nil), r.Std(nil)
	if m[0] != 3 || m[1] != 2 || v[0] != 4 || v[1] != 1 || s[0] != 2 || s[1] != 1 || r.N() != 3 {
		t.Fatalf("mean %v var %v std %v n %d", m, v, s, r.N())
	}
}

// TestRunningStatTwoPass compares with the two-pass sample variance.
func TestRunningStatTwoPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, dim = 1000, 5
	xs := make([][]float64, n)
	r := NewRunningStat(dim)
	for i := range xs {
		xs[i] = make([]float64, dim)
		for j := range xs[i] {
			xs[i][j] = 3 + float64(j)*rng.NormFloat64()
		}
		r.Push(xs[i])
	}
	m, v := r.Mean(nil), r.Var(nil)
	for j := 0; j < dim; j++ {
		var mean, ss float64
		for i := range xs {
			mean += xs[i][j]
		}
		mean /= n
		for i := range xs {
			ss += (xs[i][j] - mean) * (xs[i][j] - mean)
		}
		want := ss / (n - 1)
		if j == 0 {
			want = 1 // constant coordinate
		}
		if math.Abs(m[j]-mean) > 1e-12*math.Abs(mean) || math.Abs(v[j]-want) > 1e-10*want {
			t.Errorf("coord %d: mean %v/%v var %v/%v", j, m[j], mean, v[j], want)
		}
	}
	b, _ := r.MarshalBinary()
	var r2 RunningStat
	if err := r2.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	x := []float64{1, 2, 3, 4, 5}
	r.Push(x)
	r2.Push(x)
	b1, _ := r.MarshalBinary()
	b2, _ := r2.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Fatal("restored RunningStat diverges")
	}
	if err := r2.UnmarshalBinary(b[:len(b)-3]); !errors.Is(err, blob.ErrFormat) {
		t.Fatalf("truncated: %v", err)
	}
}

// TestESAdamFirstSteps: the first update is ≈ ±alpha per coordinate whatever
// the scale of g (spec §1), and the second step on g = 1, 1 is, by hand,
//
//	b1t = 0.9·(1−10⁻⁸) = 0.899999991,  m₂ = b1t·0.1 + (1−b1t) = 0.1900000081,
//	m̂ = m₂/(1−0.81) = 1.00000004263…,  v₂ = 0.999·0.001 + 0.001 = 0.001999,
//	v̂ = v₂/(1−0.998001) = 1,  step = α·m̂/(1+10⁻⁸).
func TestESAdamFirstSteps(t *testing.T) {
	const alpha = 0.1
	a := NewESAdam(3, alpha)
	g := []float64{250, -0.5, 1e-3}
	s := a.Step(g)
	for i := range g {
		want := math.Copysign(alpha, g[i])
		if math.Abs(s[i]-want) > 2e-5*alpha {
			t.Errorf("first step[%d] = %v, want ≈ %v", i, s[i], want)
		}
	}

	b := NewESAdam(1, alpha)
	b.Step([]float64{1})
	s2 := b.Step([]float64{1})[0]
	want := alpha * (0.1900000081 / 0.19) / (1 + 1e-8)
	if math.Abs(s2-want) > 1e-12 {
		t.Errorf("second step = %.17g, want %.17g", s2, want)
	}
	if b.T() != 2 {
		t.Errorf("t = %d", b.T())
	}

	// State round trip continues bit-exactly.
	state, _ := a.MarshalBinary()
	c := NewESAdam(0, alpha)
	if err := c.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	g2 := []float64{1, 2, 3}
	x, y := a.Step(g2), c.Step(g2)
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			t.Fatal("restored ESAdam diverges")
		}
	}
	if err := c.UnmarshalBinary(append(state, 0)); !errors.Is(err, blob.ErrFormat) {
		t.Fatalf("trailing byte: %v", err)
	}
	if err := c.UnmarshalBinary([]byte("ZADM\x02\x00\x00\x00")); !errors.Is(err, blob.ErrVersion) {
		t.Fatalf("version: %v", err)
	}
}

// TestAdamStepHand: two Adam steps (lr 0.01) on θ = [1, −1, 0.5] with
// g₁ = [2, −0.5, 0] and g₂ = [1, 1, 1]. The expected values were computed
// from the formulas of AdamStep at 40 digits (mpmath):
//
//	step 1: m = 0.1·g₁, v = 0.001·g₁², a = 0.01·√0.001/0.1, so
//	        Δθ_j = −0.01·√0.001·g_j/(√0.001·|g_j| + 1e-8) ≈ −0.01·sign(g_j)
//	step 2: m = 0.9·m + 0.1·g₂, v = 0.999·v + 0.001·g₂², a = 0.01·√0.001999/0.19
//
// The third coordinate shows that a zero gradient does not move θ on the
// first step but its moments do on the second. Textbook Adam (ε added to
// √v̂) gives step-1 values that differ by ≈ 1.5e-7·0.01, which the
// tolerance rejects.
func TestAdamStepHand(t *testing.T) {
	theta := []float64{1, -1, 0.5}
	m, v := make([]float64, 3), make([]float64, 3)
	check := func(step int, want []float64) {
		t.Helper()
		for j := range want {
			if math.Abs(theta[j]-want[j]) > 1e-15 {
				t.Errorf("step %d: θ[%d] = %.20g, want %.20g", step, j, theta[j], want[j])
			}
		}
	}
	AdamStep(theta, m, v, []float64{2, -0.5, 0}, 1, 0.01)
	check(1, []float64{0.99000000158113858008, -0.99000000632455132034, 0.5})
	if m[0] != 0.1*2 || v[1] != 0.001*0.5*0.5 {
		t.Errorf("moments after step 1: m = %v, v = %v", m, v)
	}
	AdamStep(theta, m, v, []float64{1, 1, 1}, 2, 0.01)
	check(2, []float64{0.98067820651185302802, -0.99366104055930935735, 0.4925586341174966357})
}

// TestAdamState: Adam's state round trip continues bit-exactly, and its
// decoder refuses a trailing byte and a negative step count.
func TestAdamState(t *testing.T) {
	a := NewAdam(3, 0.01)
	theta := []float64{1, -1, 0.5}
	a.Step(theta, []float64{2, -0.5, 0})
	state, _ := a.MarshalBinary()
	b := NewAdam(0, 0.01)
	if err := b.UnmarshalBinary(state); err != nil || b.Dim() != 3 {
		t.Fatal(err)
	}
	x, y := slices.Clone(theta), slices.Clone(theta)
	a.Step(x, []float64{1, 1, 1})
	b.Step(y, []float64{1, 1, 1})
	if !slices.Equal(x, y) {
		t.Fatal("restored Adam diverges")
	}
	if err := b.UnmarshalBinary(append(state, 0)); !errors.Is(err, blob.ErrFormat) {
		t.Fatalf("trailing byte: %v", err)
	}
	neg := blob.NewEncoder("ZTAD", 1)
	neg.Int64(-1)
	neg.Floats(nil)
	neg.Floats(nil)
	if err := b.UnmarshalBinary(neg.Data()); !errors.Is(err, blob.ErrFormat) {
		t.Fatalf("negative t: %v", err)
	}
}

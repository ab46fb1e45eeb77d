package newton

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// noiseless draws x = [1, N(0, I_d)] and y = x·w* with no noise.
type noiseless struct{ wstar []float64 }

func (p noiseless) Dim() int                                { return len(p.wstar) }
func (p noiseless) InitialWeights(rng *rand.Rand) []float64 { return make([]float64, len(p.wstar)) }
func (p noiseless) Batch(rng *rand.Rand, X *mat.Dense, y []float64) {
	n, _ := X.Dims()
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		row[0] = 1
		y[i] = p.wstar[0]
		for j := 1; j < len(row); j++ {
			row[j] = rng.NormFloat64()
			y[i] += row[j] * p.wstar[j]
		}
	}
}

// TestNoiselessOneStep: on noiseless data with B ≥ Dim, one step reaches w*
// up to the damping. With y = Xw*, the step gives
// w1 = H⁻¹((1/B)XᵀXw* + λw0), so w1 − w* = λ·H⁻¹(w0 − w*) and
// ‖w1 − w*‖ ≤ λ/(λ_min(XᵀX/B) + λ)·‖w0 − w*‖. The test computes λ_min of
// the actual batch and allows that bound plus 10⁻¹²·‖w0 − w*‖ for
// roundoff. B = Dim = 5 is the edge case (a square, invertible X).
func TestNoiselessOneStep(t *testing.T) {
	p := noiseless{[]float64{0.3, -1, 0.5, 2, 0}}
	w0 := []float64{10, -7, 3, 0, 5}
	for _, B := range []int{64, 5} {
		src := stream.New(11, "test/newton/noiseless", nil)
		n := New(Config{Batch: B}, p, w0, src)
		if _, err := n.Step(1); err != nil {
			t.Fatal(err)
		}
		X := mat.NewDense(B, 5, nil)
		p.Batch(src.Rand("batch", 1), X, make([]float64, B))
		var xtx mat.SymDense
		xtx.SymOuterK(1/float64(B), X.T())
		var eig mat.EigenSym
		if !eig.Factorize(&xtx, false) {
			t.Fatal("eigendecomposition failed")
		}
		lmin := floats.Min(eig.Values(nil))
		e0 := make([]float64, 5)
		floats.SubTo(e0, w0, p.wstar)
		e1 := make([]float64, 5)
		floats.SubTo(e1, n.Params(), p.wstar)
		bound := (Damping/(lmin+Damping) + 1e-12) * floats.Norm(e0, 2)
		if got := floats.Norm(e1, 2); !(got <= bound) {
			t.Errorf("B=%d: ‖w1 − w*‖ = %.3g > %.3g (λ_min = %.3g)", B, got, bound, lmin)
		}
		st, err := n.Step(2)
		if err != nil {
			t.Fatal(err)
		}
		if l := st.Metrics[0].Value; !(l < 1e-12) {
			t.Errorf("B=%d: train_loss after one step = %g", B, l)
		}
	}
}

// TestInterpolatesWhenUnderdetermined: with B < Dim (dual form) on noiseless
// data, one step fits the batch: the batch residual shrinks by the damping
// factor, ‖X·w1 − y‖ ≤ λ/(σ²_min/B)·‖X·w0 − y‖ (σ²_min/B the smallest
// eigenvalue of K − λI), here checked with a generous 10⁻⁶; and the step
// w0 − w1 lies in the row space of X (its component orthogonal to it is
// below 10⁻¹²·‖step‖).
func TestInterpolatesWhenUnderdetermined(t *testing.T) {
	wstar := make([]float64, 40)
	for j := range wstar {
		wstar[j] = math.Sin(float64(j))
	}
	p := noiseless{wstar}
	src := stream.New(12, "test/newton/under", nil)
	w0 := make([]float64, 40)
	n := New(Config{Batch: 16}, p, w0, src)
	if !n.solver.Dual() {
		t.Fatal("B < Dim does not use the dual form")
	}
	if _, err := n.Step(1); err != nil {
		t.Fatal(err)
	}
	X := mat.NewDense(16, 40, nil)
	y := make([]float64, 16)
	p.Batch(src.Rand("batch", 1), X, y)
	res := mat.NewVecDense(16, nil)
	res.MulVec(X, mat.NewVecDense(40, n.Params()))
	res.SubVec(res, mat.NewVecDense(16, y))
	if r := mat.Norm(res, 2) / floats.Norm(y, 2); !(r < 1e-6) {
		t.Errorf("relative batch residual after one step %.3g", r)
	}
	// Project the step onto the row space of X (QR of Xᵀ) and compare.
	step := mat.NewVecDense(40, nil)
	step.SubVec(mat.NewVecDense(40, w0), mat.NewVecDense(40, n.Params()))
	var qr mat.QR
	qr.Factorize(X.T())
	var q mat.Dense
	qr.QTo(&q)
	basis := q.Slice(0, 40, 0, 16)
	coef := mat.NewVecDense(16, nil)
	coef.MulVec(basis.T(), step)
	proj := mat.NewVecDense(40, nil)
	proj.MulVec(basis, coef)
	proj.SubVec(step, proj)
	if r := mat.Norm(proj, 2) / mat.Norm(step, 2); !(r < 1e-12) {
		t.Errorf("step has a component %.3g (relative) outside the row space of X", r)
	}
}

// TestSolveError: a non-finite batch is a returned ErrSolve error, not NaN
// weights.
func TestSolveError(t *testing.T) {
	s := NewSolver(3, 2)
	X := mat.NewDense(3, 2, []float64{1, 0, 0, 1, math.Inf(1), 1})
	if err := s.Step(make([]float64, 2), X, []float64{1, 1, 1}); !errors.Is(err, ErrSolve) {
		t.Errorf("Inf feature: %v", err)
	}
}

func TestConfig(t *testing.T) {
	if err := (Config{Batch: 0}).Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("Batch 0: %v", err)
	}
	var f Factory[noiseless]
	p := task.NewParams("dag.yaml", "train", map[string]any{"batch": 64})
	cfg := f.Decode(p)
	if err := p.Err(); err != nil || cfg.Validate() != nil {
		t.Fatalf("batch 64: %v, feasible %v", err, (cfg.Validate() == nil))
	}
	if h := cfg.Header(); h != (trajectory.Header{Method: "newton", Layout: trajectory.Raw, EvalBatch: 64}) {
		t.Errorf("Header = %+v", h)
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"batch": 0, "lr": 1})
	f.Decode(p)
	if err := p.Err(); err == nil || len(err.(interface{ Unwrap() []error }).Unwrap()) != 2 {
		t.Errorf("batch 0 and an unknown lr: %v", err)
	}
}

package newton

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/envs/linreg"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

var _ Problem = (*linreg.Instance)(nil)

const epsMach = 0x1p-52

// dampedLSStep returns the reference step Δ with w1 = w − Δ the minimizer
// of (1/2B)‖Xw′ − y‖² + ½·Damping·‖w′ − w‖², computed independently of the
// Cholesky code: Δ = argmin ‖A·Δ − b‖ with A = [X/√B; √Damping·I],
// b = [r/√B; 0], r = Xw − y, by Householder QR (gonum mat.QR). Setting the
// gradient (1/B)Xᵀ(XΔ − r) + Damping·Δ to zero gives HΔ = g, the Newton
// step.
func dampedLSStep(X *mat.Dense, y, w []float64) []float64 {
	B, dim := X.Dims()
	sb := math.Sqrt(float64(B))
	A := mat.NewDense(B+dim, dim, nil)
	b := mat.NewDense(B+dim, 1, nil)
	for i := 0; i < B; i++ {
		var r float64
		for j := 0; j < dim; j++ {
			A.Set(i, j, X.At(i, j)/sb)
			r += X.At(i, j) * w[j]
		}
		b.Set(i, 0, (r-y[i])/sb)
	}
	for j := 0; j < dim; j++ {
		A.Set(B+j, j, math.Sqrt(Damping))
	}
	var qr mat.QR
	qr.Factorize(A)
	var ref mat.Dense
	if err := qr.SolveTo(&ref, false, b); err != nil {
		panic(err)
	}
	return mat.Col(nil, 0, &ref)
}

// TestStepIsDampedLeastSquares: one Newton step from w0 on the batch of
// iteration 1 equals the batch's damped least-squares solution computed by
// QR (dampedLSStep), for the primal form (d = 10, B = 64; d = 100,
// B = 256) and the dual form (d = 100, B = 64, the spec's rank-deficient
// case).
//
// Tolerance on ‖Δ − Δ_ref‖/‖Δ_ref‖: 10⁻¹² + 10·κ·ε_mach, where κ is the
// condition estimate of the system actually factorized (H in the primal
// form, K = XXᵀ/B + λI in the dual form). A Cholesky solve's forward error
// is O(κ·ε_mach) (Higham, Accuracy and Stability, §10.1); the QR
// reference, solving a problem with κ(A) = √κ(H), is accurate to about
// 10⁻¹³ here, which the 10⁻¹² floor covers. At d = 100, B = 64 the dual
// form keeps κ ≈ 10⁴, so the step must also be accurate to 10⁻¹⁰ outright
// (the primal form there has κ(H) ≈ 10¹⁰ and errs by ≈ 10⁻⁷).
func TestStepIsDampedLeastSquares(t *testing.T) {
	for _, c := range []struct {
		d, B int
		dual bool
	}{{10, 64, false}, {100, 256, false}, {100, 64, true}} {
		for seed := uint64(1); seed <= 3; seed++ {
			src := stream.New(seed, "test/newton/lsq", nil)
			in := linreg.Generate(c.d, src.Rand("instance"))
			w0 := in.InitialWeights(src.Rand("w0"))
			n := New(Config{Batch: c.B}, in, w0, src)
			if n.solver.Dual() != c.dual {
				t.Fatalf("d=%d B=%d: Dual() = %v", c.d, c.B, n.solver.Dual())
			}
			if _, err := n.Step(1); err != nil {
				t.Fatal(err)
			}
			X, y := in.NewBatch(src.Rand("batch", 1), c.B)
			ref := dampedLSStep(X, y, w0)
			got := make([]float64, len(w0))
			floats.SubTo(got, w0, n.Params())
			diff := make([]float64, len(w0))
			floats.SubTo(diff, got, ref)
			rel := floats.Norm(diff, 2) / floats.Norm(ref, 2)
			kappa := n.solver.chol.Cond()
			tol := 1e-12 + 10*kappa*epsMach
			if c.d == 100 && c.B == 64 {
				tol = min(tol, 1e-10)
			}
			t.Logf("d=%d B=%d seed %d: relative error %.3g, tolerance %.3g (κ = %.3g)", c.d, c.B, seed, rel, tol, kappa)
			if !(rel <= tol) {
				t.Errorf("d=%d B=%d seed %d: relative error %.3g > %.3g (κ = %.3g)", c.d, c.B, seed, rel, tol, kappa)
			}
		}
	}
}

// noiseless draws x = [1, N(0, I_d)] and y = x·w* with no noise.
type noiseless struct{ wstar []float64 }

func (p noiseless) Dim() int { return len(p.wstar) }
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

// TestLearnsLinreg: on a d = 10 instance the population loss falls from
// the initial ≈ 5–25 to near the noise floor within 5 steps (each step is
// the batch's least-squares fit; 64 examples for 11 unknowns).
func TestLearnsLinreg(t *testing.T) {
	src := stream.New(5488, "test/newton/learn", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	n := New(Config{Batch: 64}, in, w0, src)
	for it := int64(1); it <= 5; it++ {
		if _, err := n.Step(it); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := in.PopulationLoss(w0), in.PopulationLoss(n.Params()); !(b < a*1e-3) {
		t.Errorf("population loss %v → %v after 5 iterations", a, b)
	}
}

// TestResume: interrupted and resumed runs give identical trajectories, in
// both solver forms.
func TestResume(t *testing.T) {
	src := stream.New(7151, "test/newton/resume", nil)
	in := linreg.Generate(100, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	for _, B := range []int{64, 128} {
		newM := func() algos.Method { return New(Config{Batch: B}, in, w0, src) }
		algostest.CheckResume(t, newM, algos.Budget{Samples: int64(B) * 30}, algos.Schedule{PerDecade: 5}, []int64{1, 2, 17})
	}
}

func TestConfig(t *testing.T) {
	if err := (Config{Batch: 0}).Validate(); !errors.Is(err, ErrConfig) {
		t.Errorf("Batch 0: %v", err)
	}
	var f Factory[*linreg.Instance]
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
	src := stream.New(1, "t", nil)
	in := linreg.Generate(3, src.Rand("instance"))
	m, err := f.New(cfg, in, src)
	if err != nil {
		t.Fatal(err)
	}
	if w0 := in.InitialWeights(src.Rand("init")); !floats.Equal(m.Params(), w0) {
		t.Errorf("initial weights %v, want %v from the stream \"init\"", m.Params(), w0)
	}
	if _, err := f.New(Config{}, in, src); !errors.Is(err, ErrConfig) {
		t.Errorf("New with Batch 0: %v", err)
	}
	if err := m.UnmarshalState([]byte("ZNWT\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("wrong-length state: %v", err)
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

// BenchmarkStepD1000 measures Newton iterations at d = 1000 with the dag's
// B = 64 (dual form; batch generation included).
func BenchmarkStepD1000(b *testing.B) {
	src := stream.New(5488, "bench/newton", nil)
	in := linreg.Generate(1000, src.Rand("instance"))
	n := New(Config{Batch: 64}, in, in.InitialWeights(src.Rand("w0")), src)
	var samples int64
	it := int64(0)
	for b.Loop() {
		it++
		st, err := n.Step(it)
		if err != nil {
			b.Fatal(err)
		}
		samples += st.Samples
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

package stages_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/algos/newton"
	"zorepro/envs/linreg"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
)

// Known answers of Newton on linear regression (the algorithm's own tests
// in algos/newton use fake problems).

const epsMach = 0x1p-52

// TestNewtonFactory: the factory starts from the problem's InitialWeights
// of the stream "init", refuses an invalid batch and a state of the wrong
// dimension.
func TestNewtonFactory(t *testing.T) {
	checkLinregFactory(t, newton.Factory[*linreg.Instance]{}.New, newton.Config{Batch: 64}, newton.Config{}, newton.ErrConfig,
		"ZNWT\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
}

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
		A.Set(B+j, j, math.Sqrt(newton.Damping))
	}
	var qr mat.QR
	qr.Factorize(A)
	var ref mat.Dense
	if err := qr.SolveTo(&ref, false, b); err != nil {
		panic(err)
	}
	return mat.Col(nil, 0, &ref)
}

// TestNewtonStepIsDampedLeastSquares: one Newton step from w0 on the batch of
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
func TestNewtonStepIsDampedLeastSquares(t *testing.T) {
	for _, c := range []struct {
		d, B int
		dual bool
	}{{10, 64, false}, {100, 256, false}, {100, 64, true}} {
		for seed := uint64(1); seed <= 3; seed++ {
			src := stream.New(seed, "test/newton/lsq", nil)
			in := linreg.Generate(c.d, src.Rand("instance"))
			w0 := in.InitialWeights(src.Rand("w0"))
			n := newton.New(newton.Config{Batch: c.B}, in, w0, src)
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
			// The solver is deterministic: one of the same shape on the same
			// batch factorizes the same system.
			solver := newton.NewSolver(c.B, in.Dim())
			if err := solver.Step(make([]float64, in.Dim()), X, y); err != nil || solver.Dual() != c.dual {
				t.Fatalf("d=%d B=%d: Dual() = %v (%v)", c.d, c.B, solver.Dual(), err)
			}
			kappa := solver.Cond()
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

// TestNewtonLearnsLinreg: on a d = 10 instance the population loss falls from
// the initial ≈ 5–25 to near the noise floor within 5 steps (each step is
// the batch's least-squares fit; 64 examples for 11 unknowns).
func TestNewtonLearnsLinreg(t *testing.T) {
	src := stream.New(5488, "test/newton/learn", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	n := newton.New(newton.Config{Batch: 64}, in, w0, src)
	for it := int64(1); it <= 5; it++ {
		if _, err := n.Step(it); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := in.PopulationLoss(w0), in.PopulationLoss(n.Params()); !(b < a*1e-3) {
		t.Errorf("population loss %v → %v after 5 iterations", a, b)
	}
}

// TestNewtonResume: interrupted and resumed runs give identical trajectories, in
// both solver forms.
func TestNewtonResume(t *testing.T) {
	src := stream.New(7151, "test/newton/resume", nil)
	in := linreg.Generate(100, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	for _, B := range []int{64, 128} {
		newM := func() algos.Method { return newton.New(newton.Config{Batch: B}, in, w0, src) }
		algostest.CheckResume(t, newM, algos.Budget{Samples: int64(B) * 30}, algos.Schedule{PerDecade: 5}, []int64{1, 2, 17})
	}
}

// BenchmarkNewtonStepD1000 measures Newton iterations at d = 1000 with the dag's
// B = 64 (dual form; batch generation included).
func BenchmarkNewtonStepD1000(b *testing.B) {
	src := stream.New(5488, "bench/newton", nil)
	in := linreg.Generate(1000, src.Rand("instance"))
	n := newton.New(newton.Config{Batch: 64}, in, in.InitialWeights(src.Rand("w0")), src)
	benchSteps(b, n)
}

// checkLinregFactory: newMethod (a factory's New) builds, from cfg, a
// method on a d = 3 linear-regression instance that starts at the
// instance's InitialWeights of the stream "init"; it refuses bad with
// errConfig; the method refuses state, a state of the wrong length, with
// blob.ErrFormat.
func checkLinregFactory[C any](t *testing.T, newMethod func(C, *linreg.Instance, stream.Source) (algos.Method, error), cfg, bad C, errConfig error, state string) {
	t.Helper()
	src := stream.New(1, "t", nil)
	in := linreg.Generate(3, src.Rand("instance"))
	m, err := newMethod(cfg, in, src)
	if err != nil {
		t.Fatal(err)
	}
	if w0 := in.InitialWeights(src.Rand("init")); !slices.Equal(m.Params(), w0) {
		t.Errorf("initial weights %v, want %v from the stream \"init\"", m.Params(), w0)
	}
	if _, err := newMethod(bad, in, src); !errors.Is(err, errConfig) {
		t.Errorf("New with %+v: %v, want %v", bad, err, errConfig)
	}
	if err := m.UnmarshalState([]byte(state)); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("wrong-length state: %v", err)
	}
}

package stages_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/algos/nreinforce"
	"zorepro/envs/linreg"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Known answers of natural REINFORCE on linear regression (the
// algorithm's own tests in algos/nreinforce need no environment).

func newNR(t testing.TB, cfg nreinforce.Config, in *linreg.Instance, w0 []float64, src stream.Source) *nreinforce.NREINFORCE[*linreg.GaussianPolicy] {
	t.Helper()
	return algostest.Must(t, nreinforce.New[*linreg.GaussianPolicy], cfg, nreinforce.Problem[*linreg.GaussianPolicy](in), w0, src)
}

// fNorm returns √(sᵀFs), summed with plain loops over the full matrix.
func fNorm(F mat.Symmetric, s []float64) float64 {
	var q float64
	for i := range s {
		for j := range s {
			q += s[i] * F.At(i, j) * s[j]
		}
	}
	return math.Sqrt(q)
}

// TestNREINFORCEStepFNorm: for linreg batches at d = 10 and 100 (B = 512) and ĝ from
// the Gaussian policy, nreinforce.NaturalStep's step has F-norm √ε to 10⁻¹²
// relative, for ε from 10⁻⁴ to 2. In exact arithmetic sᵀFs = η²·vᵀFv =
// η²·vᵀĝ = ε. In floating point the Cholesky solve satisfies
// (F + δF)·v = ĝ with ‖δF‖ ≲ c·Dim·ε_mach·‖F‖, so vᵀFv = vᵀĝ − vᵀδF·v and
// the relative error of the squared norm is at most ‖δF‖/λ_min(F) ≈
// Dim·ε_mach·κ(F); with κ(F) ≈ 10³ (d = 10) to 5·10⁴ (d = 100) that
// worst-case bound is 10⁻¹²–10⁻⁹, but the error is a sum of random-signed
// roundoffs and measures 10⁻¹⁵ (d = 10) and 5·10⁻¹⁵ (d = 100; logged with
// -v), well inside 10⁻¹².
func TestNREINFORCEStepFNorm(t *testing.T) {
	for _, d := range []int{10, 100} {
		src := stream.New(5488, "test/nreinforce/fnorm", nil)
		in := linreg.Generate(d, src.Rand("instance"))
		w := in.InitialWeights(src.Rand("w0"))
		b, err := in.NewPolicy(512, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		F := mat.NewSymDense(in.Dim(), nil)
		g, step := make([]float64, in.Dim()), make([]float64, in.Dim())
		var chol mat.Cholesky
		worst := 0.0
		for it := int64(1); it <= 5; it++ {
			b.Gradient(g, w, src, it)
			b.Fisher(F)
			nreinforce.Damp(F)
			if !chol.Factorize(F) {
				t.Fatal("Fisher matrix not positive definite")
			}
			for _, eps := range []float64{2, 2 / math.Sqrt(float64(it)), 0.01, 1e-4} {
				eta, ok, err := nreinforce.NaturalStep(step, &chol, g, eps)
				if err != nil || !ok || !(eta > 0) {
					t.Fatalf("nreinforce.NaturalStep: η = %v, ok = %v, err = %v", eta, ok, err)
				}
				rel := math.Abs(fNorm(F, step)-math.Sqrt(eps)) / math.Sqrt(eps)
				worst = max(worst, rel)
				if !(rel <= 1e-12) {
					t.Errorf("d=%d it=%d ε=%g: ‖s‖_F = %.17g, √ε = %.17g (relative %.3g, κ(F) = %.3g)", d, it, eps, fNorm(F, step), math.Sqrt(eps), rel, chol.Cond())
				}
			}
		}
		t.Logf("d=%d: worst relative error of ‖s‖_F %.3g (κ(F) ≈ %.3g)", d, worst, chol.Cond())
	}
}

// moveFNorm replays iteration it's batch and Fisher matrix through the
// documented streams and returns the F-norm of w0 − w1.
func moveFNorm(in *linreg.Instance, src stream.Source, it int64, w0, w1 []float64) float64 {
	b, _ := in.NewPolicy(512, 0.5)
	b.Gradient(make([]float64, in.Dim()), w0, src, it)
	F := mat.NewSymDense(in.Dim(), nil)
	b.Fisher(F)
	nreinforce.Damp(F)
	s := make([]float64, len(w0))
	for j := range s {
		s[j] = w0[j] - w1[j]
	}
	return fNorm(F, s)
}

// TestNREINFORCEEpsSchedule: through the Method, iteration t moves w by F-norm
// √(lr/√t) (default) or √lr (ConstantEps). The move is recovered as
// w_{t−1} − w_t, whose subtraction adds roundoff of ε_mach·|w|/|s| per
// coordinate, hence 10⁻¹⁰ relative here. Iteration 1 is bit-identical in
// both variants (ε_1 = lr); iteration 2 is not.
func TestNREINFORCEEpsSchedule(t *testing.T) {
	src := stream.New(6027, "test/nreinforce/eps", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	var runs [2][][]float64
	for k, constant := range []bool{false, true} {
		const lr = 2.0
		n := newNR(t, nreinforce.Config{LR: lr, Batch: 512, Beta: 0.5, ConstantEps: constant}, in, w0, src)
		prev := slices.Clone(w0)
		runs[k] = [][]float64{prev}
		for it := int64(1); it <= 6; it++ {
			st, err := n.Step(it)
			if err != nil {
				t.Fatal(err)
			}
			eps := lr / math.Sqrt(float64(it))
			if constant {
				eps = lr
			}
			if got := moveFNorm(in, src, it, prev, n.Params()); math.Abs(got-math.Sqrt(eps)) > 1e-10*math.Sqrt(eps) {
				t.Errorf("constant=%v it=%d: ‖Δw‖_F = %.17g, want √ε = %.17g", constant, it, got, math.Sqrt(eps))
			}
			if st.Samples != 512 || st.Metrics[1].Name != "eta" || !(st.Metrics[1].Value > 0) || st.Metrics[2] != (task.Metric{Name: "skipped", Value: 0}) {
				t.Errorf("constant=%v it=%d: stat %+v", constant, it, st)
			}
			prev = slices.Clone(n.Params())
			runs[k] = append(runs[k], prev)
		}
	}
	if !slices.Equal(runs[0][1], runs[1][1]) {
		t.Error("iteration 1 differs between the variants")
	}
	if slices.Equal(runs[0][2], runs[1][2]) {
		t.Error("iteration 2 is the same in both variants")
	}
	if got := (nreinforce.Config{LR: 2}).Eps(4); got != 1 {
		t.Errorf("Eps(4) = %v, want 2/√4 = 1", got)
	}
	if got := (nreinforce.Config{LR: 0.01, ConstantEps: true}).Eps(100); got != 0.01 {
		t.Errorf("constant Eps(100) = %v, want 0.01", got)
	}
}

// TestNREINFORCEZeroGradientSkipped: with β = 10⁻³⁰⁰, μ + β·n rounds to μ, so every
// r_i·(ŷ_i − μ_i) and ĝ are 0, vᵀĝ = 0 and η would be +Inf (a NaN step).
// The iteration instead leaves w unchanged and reports skipped = 1,
// eta = 0. nreinforce.NaturalStep with g = 0 returns ok = false and a zero step; a
// NaN gradient is an nreinforce.ErrNonFinite error.
func TestNREINFORCEZeroGradientSkipped(t *testing.T) {
	src := stream.New(4236, "test/nreinforce/zero", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	n := newNR(t, nreinforce.Config{LR: 2, Batch: 16, Beta: 1e-300}, in, w0, src)
	st, err := n.Step(1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(n.Params(), w0) {
		t.Errorf("w changed to %v", n.Params())
	}
	if st.Metrics[1] != (task.Metric{Name: "eta", Value: 0}) || st.Metrics[2] != (task.Metric{Name: "skipped", Value: 1}) {
		t.Errorf("metrics %+v", st.Metrics)
	}

}

// TestNREINFORCELearnsLinreg: at d = 10 with lr 2.0 (§3.6), 50 iterations (25,600
// samples) cut the population loss by more than 10×.
func TestNREINFORCELearnsLinreg(t *testing.T) {
	src := stream.New(5488, "test/nreinforce/learn", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	checkCutsLoss(t, in, w0, newNR(t, nreinforce.Config{LR: 2, Batch: 512, Beta: 0.5}, in, w0, src), 1, 50)
}

// TestNREINFORCEResume: interrupted and resumed runs give identical trajectories, in
// both ε variants.
func TestNREINFORCEResume(t *testing.T) {
	src := stream.New(7151, "test/nreinforce/resume", nil)
	in := linreg.Generate(10, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	for _, constant := range []bool{false, true} {
		newM := func() algos.Method {
			return newNR(t, nreinforce.Config{LR: 2, Batch: 512, Beta: 0.5, ConstantEps: constant}, in, w0, src)
		}
		algostest.CheckResume(t, newM, algos.Budget{Samples: 512 * 30}, algos.Schedule{PerDecade: 5}, []int64{1, 2, 17})
	}
}

func TestNREINFORCEFactory(t *testing.T) {
	err := nreinforce.Config{LR: 0, Batch: 0, Beta: math.NaN()}.Validate()
	if !errors.Is(err, nreinforce.ErrConfig) || len(err.(interface{ Unwrap() []error }).Unwrap()) != 3 {
		t.Errorf("three invalid fields: %v", err)
	}
	var f nreinforce.Factory[*linreg.Instance, *linreg.GaussianPolicy]
	p := task.NewParams("dag.yaml", "train", map[string]any{"lr": 2.0})
	cfg := f.Decode(p)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if want := (nreinforce.Config{LR: 2, Batch: 512, Beta: 0.5}); cfg != want || cfg.Validate() != nil {
		t.Errorf("Decode = %+v, want %+v", cfg, want)
	}
	if got, want := p.Resolved(), []string{"batch 512", "beta 0.5", "constant_eps false", "lr 2"}; !slices.Equal(got, want) {
		t.Errorf("resolved %q, want %q", got, want)
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"lr": 0.01, "constant_eps": true})
	if c := f.Decode(p); p.Err() != nil || !c.ConstantEps || c.LR != 0.01 {
		t.Errorf("constant_eps: %+v, %v", c, p.Err())
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"constant_eps": "maybe"})
	f.Decode(p)
	if err := p.Err(); err == nil || len(err.(interface{ Unwrap() []error }).Unwrap()) != 2 {
		t.Errorf("missing lr and a non-boolean constant_eps: %v", err)
	}
	if h := cfg.Header(); h != (trajectory.Header{Method: "nreinforce", Layout: trajectory.Raw, EvalBatch: 512}) {
		t.Errorf("Header = %+v", h)
	}
	if h := f.Hyper(); !slices.Equal(h, []string{"lr"}) {
		t.Errorf("Hyper = %v", h)
	}
	checkLinregFactory(t, f.New, cfg, nreinforce.Config{}, nreinforce.ErrConfig,
		"ZNRF\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
}

// BenchmarkNREINFORCEStepD1000 measures natural REINFORCE iterations at d = 1000
// with B = 512 (batch generation, the 1001×1001 Fisher matrix and its
// Cholesky factorization included; the spec runs it only at d ≤ 100).
func BenchmarkNREINFORCEStepD1000(b *testing.B) {
	src := stream.New(5488, "bench/nreinforce", nil)
	in := linreg.Generate(1000, src.Rand("instance"))
	n := newNR(b, nreinforce.Config{LR: 2, Batch: 512, Beta: 0.5}, in, in.InitialWeights(src.Rand("w0")), src)
	benchSteps(b, n)
}

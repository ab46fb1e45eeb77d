package ars

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/envs/linreg"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/trajectory"
)

var _ Problem = (*linreg.Instance)(nil)

// TestRewardsHand: w = [1,2], Δ = [1,−1], z = [1,0.5], y = 1, ν = 0.5:
// w+νΔ = [1.5,1.5], ŷ+ = 2.25, r+ = −½·1.25² = −0.78125;
// w−νΔ = [0.5,2.5], ŷ− = 1.75, r− = −½·0.75² = −0.28125.
func TestRewardsHand(t *testing.T) {
	rp, rm := Rewards([]float64{1, 2}, []float64{1, -1}, []float64{1, 0.5}, 1, 0.5)
	if rp != -0.78125 || rm != -0.28125 {
		t.Fatalf("r+ = %v, r− = %v; want −0.78125, −0.28125", rp, rm)
	}
}

// TestUpdateHand: D = 2, N = 2, Δ₀ = [1,0], Δ₁ = [0,1], r+ = [−1,−2],
// r− = [−3,−2], α = 0.1, w = 0.
//   - b = 1: max rewards −1, −2 keep direction 0; its rewards −1, −3 have
//     mean −2 and σ = 1; w = 0.1/(1·1)·(−1−(−3))·Δ₀ = [0.2, 0].
//   - b = 2: rewards −1, −3, −2, −2 have mean −2, variance (1+1+0+0)/4 = ½,
//     σ = √½; w = 0.1/(2·√½)·(2·Δ₀ + 0·Δ₁) = [0.1·√2, 0].
func TestUpdateHand(t *testing.T) {
	dirs := [][]float64{{1, 0}, {0, 1}}
	rp, rm := []float64{-1, -2}, []float64{-3, -2}

	w := []float64{0, 0}
	if s := Update(w, dirs, rp, rm, 1, 0.1); s != 1 || w[0] != 0.2 || w[1] != 0 {
		t.Errorf("b=1: σ = %v, w = %v; want 1, [0.2 0]", s, w)
	}
	w = []float64{0, 0}
	s := Update(w, dirs, rp, rm, 2, 0.1)
	if math.Abs(s-math.Sqrt(0.5)) > 1e-16 || math.Abs(w[0]-0.1*math.Sqrt2) > 1e-16 || w[1] != 0 {
		t.Errorf("b=2: σ = %v, w = %v; want √½, [0.1·√2 0]", s, w)
	}
}

// TestSelect: ranking by max(r+, r−) descending, ties by index, NaN last,
// result in ascending index order.
func TestSelect(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		rp, rm []float64
		top    int
		want   []int
	}{
		// max = [−1, −1, −2, −1]: three-way tie at −1 broken by index.
		{[]float64{-1, -5, -2, -3}, []float64{-4, -1, -7, -1}, 2, []int{0, 1}},
		{[]float64{-1, -5, -2, -3}, []float64{-4, -1, -7, -1}, 3, []int{0, 1, 3}},
		{[]float64{-1, -5, -2, -3}, []float64{-4, -1, -7, -1}, 4, []int{0, 1, 2, 3}},
		// max = [−3, −1, −2]: best is 1, then 2; returned in index order.
		{[]float64{-3, -1, -2}, []float64{-4, -9, -9}, 2, []int{1, 2}},
		// all equal: the first top indices.
		{[]float64{0, 0, 0, 0, 0}, []float64{0, 0, 0, 0, 0}, 3, []int{0, 1, 2}},
		// NaN ranks below every number.
		{[]float64{nan, -9, -8}, []float64{0, -9, -8}, 2, []int{1, 2}},
		// −0 and +0 tie; the index decides.
		{[]float64{-5, math.Copysign(0, -1), 0}, []float64{-5, -5, -5}, 1, []int{1}},
	}
	for i, c := range cases {
		if got := Select(c.rp, c.rm, c.top); !slices.Equal(got, c.want) {
			t.Errorf("case %d: Select = %v, want %v", i, got, c.want)
		}
	}
}

// TestRewardStd: σ over the kept directions only; 1 when all rewards are
// equal. Kept {1} with r+ = 5, r− = 1: mean 3, σ = 2.
func TestRewardStd(t *testing.T) {
	rp, rm := []float64{100, 5, -7}, []float64{-100, 1, 3}
	if s := RewardStd(rp, rm, []int{1}); s != 2 {
		t.Errorf("σ = %v, want 2", s)
	}
	if s := RewardStd([]float64{-2, -2}, []float64{-2, -2}, []int{0, 1}); s != 1 {
		t.Errorf("zero spread: σ = %v, want 1", s)
	}
	// Population std of [100, −100, 5, 1, −7, 3]: mean 1/3.
	vals := []float64{100, -100, 5, 1, -7, 3}
	var ss float64
	for _, v := range vals {
		ss += (v - 1.0/3) * (v - 1.0/3)
	}
	if s := RewardStd(rp, rm, []int{0, 1, 2}); math.Abs(s-math.Sqrt(ss/6)) > 1e-12 {
		t.Errorf("σ = %v, want %v", s, math.Sqrt(ss/6))
	}
}

// fixed returns the same batch every time.
type fixed struct {
	X *mat.Dense
	y []float64
}

func (f fixed) Dim() int { _, c := f.X.Dims(); return c }
func (f fixed) Batch(_ *rand.Rand, X *mat.Dense, y []float64) {
	X.Copy(f.X)
	copy(y, f.y)
}

// TestStepNormalizationTiming: with D = 2 and the fixed examples x₀ = [1,2],
// x₁ = [1,4], iteration 1 sees μ = 0, s = 1 (z = x); afterwards the statistics
// are μ = 3, s = √2 (sample std of 2 and 4), which iteration 2 uses and the
// snapshot reports. Each step must equal the composition of the pure
// functions on the directions of the documented streams.
func TestStepNormalizationTiming(t *testing.T) {
	p := fixed{mat.NewDense(2, 2, []float64{1, 2, 1, 4}), []float64{0.5, -1}}
	src := stream.New(11, "test/ars/timing", nil)
	cfg := Config{Alpha: 0.02, Directions: 2, Top: 1, Nu: 0.05}
	a, err := New(cfg, p, []float64{0.3, -0.2}, src)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.3, -0.2}
	for it, norm := range [][2]float64{{0, 1}, {3, math.Sqrt2}} {
		mu, s := norm[0], norm[1]
		dirs := make([][]float64, 2)
		rp, rm := make([]float64, 2), make([]float64, 2)
		for k := range dirs {
			rng := src.Rand("directions", uint64(it+1), uint64(k))
			dirs[k] = []float64{rng.NormFloat64(), rng.NormFloat64()}
			z := []float64{1, (p.X.At(k, 1) - mu) / s}
			rp[k], rm[k] = Rewards(want, dirs[k], z, p.y[k], cfg.Nu)
		}
		Update(want, dirs, rp, rm, cfg.Top, cfg.Alpha)
		st, err := a.Step(int64(it + 1))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Params(), want) {
			t.Fatalf("iteration %d: w = %v, want %v", it+1, a.Params(), want)
		}
		if st.Samples != 4 || st.Metrics[0].Name != "train_reward" || st.Metrics[0].Value != (rp[0]+rm[0]+rp[1]+rm[1])/4 {
			t.Fatalf("iteration %d: stat %+v", it+1, st)
		}
	}
	// After two iterations the statistics hold 2, 4, 2, 4: μ = 3 and
	// s = √(4/3).
	snap := a.Snapshot()
	if len(snap) != 4 || snap[2] != 3 || math.Abs(snap[3]-math.Sqrt(4.0/3)) > 1e-15 {
		t.Fatalf("snapshot %v, want w ‖ 3 ‖ √(4/3)", snap)
	}
}

func newLinreg(t testing.TB, d int, cfg Config, seed uint64) (*linreg.Instance, func() algos.Method) {
	src := stream.New(seed, "test/ars/linreg", nil)
	in := linreg.Generate(d, src.Rand("instance"))
	w0 := in.InitialWeights(src.Rand("w0"))
	return in, func() algos.Method {
		a, err := New(cfg, in, w0, src)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

// TestResume: interrupted and resumed runs give identical trajectories.
func TestResume(t *testing.T) {
	_, newM := newLinreg(t, 10, Config{Alpha: 0.03, Directions: 10, Top: 5, Nu: 0.03}, 5488)
	algostest.CheckResume(t, newM, algos.Budget{Samples: 2000}, algos.Schedule{PerDecade: 4}, []int64{1, 2, 33, 97})
}

// TestParallelBitIdentical: the parallel path (several goroutines) and the
// serial path give the same trajectory bytes.
func TestParallelBitIdentical(t *testing.T) {
	_, newM := newLinreg(t, 100, Config{Alpha: 0.03, Directions: 64, Top: 20, Nu: 0.02}, 7151)
	runOnce := func(procs, minWork int) []byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		defer func(old int) { parallelMin = old }(parallelMin)
		parallelMin = minWork
		tr, err := algos.Run(context.Background(), newM(), algos.Budget{Samples: 128 * 8}, algos.Schedule{Every: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := tr.MarshalBinary()
		return b
	}
	serial := runOnce(1, math.MaxInt)
	for _, procs := range []int{2, 4, 7} {
		if !bytes.Equal(runOnce(procs, 0), serial) {
			t.Fatalf("GOMAXPROCS=%d parallel run differs from the serial run", procs)
		}
	}
}

// TestLearnsLinreg: with the §3.7 hyperparameters for d = 10, 100,000 samples
// reduce the population loss of the evaluated snapshot by more than 100×
// (this seed: about 11 → 0.016), and
// the fresh-batch test loss of the snapshot agrees with its raw mapping.
func TestLearnsLinreg(t *testing.T) {
	in, newM := newLinreg(t, 10, Config{Alpha: 0.03, Directions: 10, Top: 10, Nu: 0.03}, 6027)
	tr, err := algos.Run(context.Background(), newM(), algos.Budget{Samples: 100000}, algos.Schedule{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, last := tr.Points[0].Params, tr.Points[len(tr.Points)-1].Params
	p0, _ := in.PopulationLossSnapshot(trajectory.Normalized, first)
	p1, _ := in.PopulationLossSnapshot(trajectory.Normalized, last)
	if !(p1 < p0/100) {
		t.Errorf("population loss %v → %v", p0, p1)
	}
	X, y := in.NewBatch(stream.New(1, "test", nil).Rand("test"), 10)
	l1, err := in.EvalSnapshot(trajectory.Normalized, last, X, y)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := in.RawWeights(trajectory.Normalized, last)
	if l2 := linreg.Loss(raw, X, y); math.Abs(l1-l2) > 1e-9*(l1+1e-12) {
		t.Errorf("test loss %v, raw-mapped %v", l1, l2)
	}
	t.Logf("population loss %.4g → %.4g after %d samples; test loss %.4g", p0, p1, tr.Points[len(tr.Points)-1].Samples, l1)
}

func TestConfig(t *testing.T) {
	_, err := New(Config{Alpha: 0, Directions: 5, Top: 6, Nu: math.Inf(1)}, fixed{mat.NewDense(1, 2, nil), []float64{0}}, []float64{0, 0}, stream.New(1, "t", nil))
	if !errors.Is(err, ErrConfig) {
		t.Fatal(err)
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 3 {
		t.Errorf("%d problems reported, want 3: %v", n, err)
	}
	for _, c := range []Config{{0.03, 10, 10, 0.03}, {0.001, 500, 5, 0.001}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestStateErrors(t *testing.T) {
	_, newM := newLinreg(t, 3, Config{Alpha: 0.03, Directions: 2, Top: 2, Nu: 0.03}, 1)
	a := newM().(*ARS)
	_, newBig := newLinreg(t, 4, Config{Alpha: 0.03, Directions: 2, Top: 2, Nu: 0.03}, 1)
	big, _ := newBig().MarshalState()
	if err := a.UnmarshalState(big); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("wrong dimension: %v", err)
	}
	good, _ := a.MarshalState()
	if err := a.UnmarshalState(good[:len(good)-1]); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("truncated: %v", err)
	}
	if err := a.UnmarshalState(good); err != nil {
		t.Error(err)
	}
}

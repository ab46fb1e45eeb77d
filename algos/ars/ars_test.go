package ars

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// lin is a fake linear problem: fixed examples x_k = [1, feats_k] with
// labels y_k (examples reused cyclically), standardized as z = [1,
// (x[1:]−μ)/s] and scored by the absolute error −|z·(w ± ν·Δ) − y|.
type lin struct {
	feats [][]float64
	y     []float64
}

type linQueries struct {
	p lin
	n int
	z [][]float64
}

func (p lin) Dim() int                                { return len(p.feats[0]) + 1 }
func (p lin) Features() int                           { return len(p.feats[0]) }
func (p lin) InitialWeights(rng *rand.Rand) []float64 { return make([]float64, p.Dim()) }
func (p lin) NewQueries(n int) (*linQueries, error) {
	q := &linQueries{p: p, n: n, z: make([][]float64, n)}
	for k := range q.z {
		q.z[k] = make([]float64, p.Dim())
	}
	return q, nil
}

func (q *linQueries) Draw(stream.Source, int64) {}
func (q *linQueries) Features(k int) []float64  { return q.p.feats[k%len(q.p.feats)] }
func (q *linQueries) Rewards(k int, w, dir []float64, nu float64, mu, s []float64, _ stream.Source, _ int64) (float64, float64, error) {
	x, z := q.Features(k), q.z[k]
	z[0] = 1
	for j := range x {
		z[j+1] = (x[j] - mu[j]) / s[j]
	}
	rp, rm := linRewards(w, dir, z, q.p.y[k%len(q.p.y)], nu)
	return rp, rm, nil
}

// linRewards is the fake's reward pair: −|z·(w ± ν·Δ) − y|.
func linRewards(w, dir, z []float64, y, nu float64) (float64, float64) {
	var yp, ym float64
	for j, zj := range z {
		yp += zj * (w[j] + nu*dir[j])
		ym += zj * (w[j] - nu*dir[j])
	}
	return -math.Abs(yp - y), -math.Abs(ym - y)
}

var _ Problem[*linQueries] = lin{}

// TestUpdateHand: D = 2, N = 2, Δ₀ = [1,0], Δ₁ = [0,1], r+ = [−1,−2],
// r− = [−3,−2], α = 0.1, w = 0.
//   - b = 1: max rewards −1, −2 keep direction 0; its rewards −1, −3 have
//     mean −2 and σ = 1; w = 0.1/(1·1)·(−1−(−3))·Δ₀ = [0.2, 0].
//   - b = 2: rewards −1, −3, −2, −2 have mean −2, variance (1+1+0+0)/4 = ½,
//     σ = √½; w = 0.1/(2·√½)·(2·Δ₀ + 0·Δ₁) = [0.1·√2, 0].
func TestUpdateHand(t *testing.T) {
	dirs := [][]float64{{1, 0}, {0, 1}}
	rp, rm := []float64{-1, -2}, []float64{-3, -2}
	u := make([]float64, 2)
	step := func(top int) (sigma float64, w []float64) {
		w = []float64{0, 0}
		kept := Select(rp, rm, top)
		sigma = RewardStd(rp, rm, kept)
		Update(w, u, dirs, rp, rm, kept, 0.1/(float64(top)*sigma))
		return sigma, w
	}
	if s, w := step(1); s != 1 || w[0] != 0.2 || w[1] != 0 {
		t.Errorf("b=1: σ = %v, w = %v; want 1, [0.2 0]", s, w)
	}
	if s, w := step(2); math.Abs(s-math.Sqrt(0.5)) > 1e-16 || math.Abs(w[0]-0.1*math.Sqrt2) > 1e-16 || w[1] != 0 {
		t.Errorf("b=2: σ = %v, w = %v; want √½, [0.1·√2 0]", s, w)
	}
}

// TestUpdateSkipsTies: N = 3, b = 2, α = 0.5, θ = [1, 2]; r+ = [1, −1, 1],
// r− = [−1, −1, 1] keep directions 0 and 2 (max rewards 1, −1, 1); σ = √0.75;
// Σ (r+ − r−)·Δ = 2·[1, 0] + 0·[2, 2] = [2, 0]; so θ = [1 + 0.5/(2·√0.75)·2,
// 2] = [1 + 0.5/√0.75, 2]. With every reward −1 (σ = 0 → 1) θ does not move.
func TestUpdateSkipsTies(t *testing.T) {
	theta, u := []float64{1, 2}, make([]float64, 2)
	dirs := [][]float64{{1, 0}, {0, 1}, {2, 2}}
	rp, rm := []float64{1, -1, 1}, []float64{-1, -1, 1}
	kept := Select(rp, rm, 2)
	if !slices.Equal(kept, []int{0, 2}) || RewardStd(rp, rm, kept) != math.Sqrt(0.75) {
		t.Fatalf("kept %v, σ %v", kept, RewardStd(rp, rm, kept))
	}
	Update(theta, u, dirs, rp, rm, kept, 0.5/(2*RewardStd(rp, rm, kept)))
	if want := 1 + 0.5/math.Sqrt(0.75); math.Abs(theta[0]-want) > 1e-15 || theta[1] != 2 {
		t.Errorf("θ = %v, want [%v 2]", theta, want)
	}
	neg := []float64{-1, -1, -1}
	kept = Select(neg, neg, 2)
	before := slices.Clone(theta)
	Update(theta, u, dirs, neg, neg, kept, 0.5/(2*RewardStd(neg, neg, kept)))
	if !slices.Equal(theta, before) {
		t.Errorf("all −1: θ moved to %v", theta)
	}
}

// TestStepNormalizationTiming: with D = 2 and the fixed examples x₀ = [1,2],
// x₁ = [1,4], iteration 1 sees μ = 0, s = 1 (z = x); afterwards the
// statistics are μ = 3, s = √2 (sample std of 2 and 4), which iteration 2
// uses and the snapshot reports. Each step must equal the composition of
// the pure functions on the directions of the documented streams.
func TestStepNormalizationTiming(t *testing.T) {
	p := lin{feats: [][]float64{{2}, {4}}, y: []float64{0.5, -1}}
	src := stream.New(11, "test/ars/timing", nil)
	cfg := Config{Alpha: 0.02, Directions: 2, Top: 1, Nu: 0.05}
	a, err := New(cfg, p, []float64{0.3, -0.2}, src)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.3, -0.2}
	u := make([]float64, 2)
	for it, norm := range [][2]float64{{0, 1}, {3, math.Sqrt2}} {
		mu, s := norm[0], norm[1]
		dirs := make([][]float64, 2)
		rp, rm := make([]float64, 2), make([]float64, 2)
		for k := range dirs {
			rng := src.Rand("directions", uint64(it+1), uint64(k))
			dirs[k] = []float64{rng.NormFloat64(), rng.NormFloat64()}
			z := []float64{1, (p.feats[k][0] - mu) / s}
			rp[k], rm[k] = linRewards(want, dirs[k], z, p.y[k], cfg.Nu)
		}
		kept := Select(rp, rm, cfg.Top)
		Update(want, u, dirs, rp, rm, kept, cfg.Alpha/(float64(cfg.Top)*RewardStd(rp, rm, kept)))
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

func newLin(t testing.TB, cfg Config) func() algos.Method {
	p := lin{feats: [][]float64{{2, -1}, {4, 0.5}, {-1, 3}, {0, 0}}, y: []float64{0.5, -1, 2, 0}}
	return func() algos.Method {
		a, err := New(cfg, p, []float64{0.3, -0.2, 0.1}, stream.New(5488, "test/ars/fake", nil))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

// TestResume: interrupted and resumed runs give identical trajectories.
func TestResume(t *testing.T) {
	newM := newLin(t, Config{Alpha: 0.03, Directions: 4, Top: 2, Nu: 0.03})
	algostest.CheckResume(t, newM, algos.Budget{Samples: 2000}, algos.Schedule{PerDecade: 4}, []int64{1, 2, 33, 97})
}

func TestConfig(t *testing.T) {
	_, err := New(Config{Alpha: 0, Directions: 5, Top: 6, Nu: math.Inf(1)}, lin{feats: [][]float64{{1}}, y: []float64{0}}, []float64{0, 0}, stream.New(1, "t", nil))
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
	var f Factory[lin, *linQueries]
	p := task.NewParams("dag.yaml", "train", map[string]any{"alpha": 0.02, "directions": 50, "nu": 0.03, "top": 20})
	c := f.Decode(p)
	if err := p.Err(); err != nil || c != (Config{Alpha: 0.02, Directions: 50, Nu: 0.03, Top: 20}) || c.Validate() != nil {
		t.Fatalf("%+v, %v", c, err)
	}
	if h := c.Header(); h != (trajectory.Header{Method: "ars", Layout: trajectory.Normalized, EvalBatch: 50}) {
		t.Errorf("Header = %+v", h)
	}
	if h := f.Hyper(); !slices.Equal(h, []string{"alpha", "directions", "nu", "top"}) {
		t.Errorf("Hyper() = %v", h)
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"alpha": 0.02, "directions": 50, "nu": 0.03, "top": 100})
	c = f.Decode(p)
	var pe *task.Error
	if err := p.Err(); !errors.As(err, &pe) || pe.Field != "params.top" || c.Validate() == nil {
		t.Errorf("top 100 > directions 50: %v, valid %v", err, c.Validate() == nil)
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{"alpha": -1})
	f.Decode(p)
	if err := p.Err(); err == nil || len(err.(interface{ Unwrap() []error }).Unwrap()) != 4 {
		t.Errorf("want 4 problems (alpha, and three missing): %v", err)
	}
}

func TestStateErrors(t *testing.T) {
	a := newLin(t, Config{Alpha: 0.03, Directions: 2, Top: 2, Nu: 0.03})().(*ARS[*linQueries])
	big, _ := New(Config{Alpha: 0.03, Directions: 2, Top: 2, Nu: 0.03}, lin{feats: [][]float64{{1, 2, 3}}, y: []float64{0}}, make([]float64, 4), stream.New(1, "t", nil))
	bigState, _ := big.MarshalState()
	if err := a.UnmarshalState(bigState); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("wrong dimension: %v", err)
	}
	good, _ := a.MarshalState()
	if err := a.UnmarshalState(good[:len(good)-1]); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("truncated: %v", err)
	}
	if err := a.UnmarshalState(append(slices.Clone(good), 0)); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("trailing: %v", err)
	}
	if err := a.UnmarshalState(good); err != nil {
		t.Error(err)
	}
}

// TestSelectCases: ranking by max(r+, r−) descending, ties by index, NaN last,
// result in ascending index order.
func TestSelectCases(t *testing.T) {
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

// TestRewardStdKeptOnly: σ over the kept directions only; 1 when all rewards are
// equal. Kept {1} with r+ = 5, r− = 1: mean 3, σ = 2.
func TestRewardStdKeptOnly(t *testing.T) {
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

// TestSelectHand: max(r+, r−) = [1, −1, 1, 1, −1, 1]; the stable descending
// order is 0, 2, 3, 5, 1, 4 (ties to the lower index), and the kept indices
// come back ascending.
func TestSelectHand(t *testing.T) {
	rp := []float64{1, -1, -1, 1, -1, -1}
	rm := []float64{-1, -1, 1, 1, -1, 1}
	for top, want := range map[int][]int{1: {0}, 2: {0, 2}, 3: {0, 2, 3}, 4: {0, 2, 3, 5}, 5: {0, 1, 2, 3, 5}, 6: {0, 1, 2, 3, 4, 5}} {
		if got := Select(rp, rm, top); !slices.Equal(got, want) {
			t.Errorf("top %d: %v, want %v", top, got, want)
		}
	}
	// A NaN ranks below every number; a larger value wins over the index.
	if got := Select([]float64{math.NaN(), -1, 0.5}, []float64{math.NaN(), -1, -1}, 2); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("NaN case: %v", got)
	}
}

// TestRewardStdHand: kept rewards (r+, r−) = (1, −1), (1, 1): values
// 1, −1, 1, 1, mean 0.5, squared deviations 0.25 + 2.25 + 0.25 + 0.25 = 3,
// σ = √(3/4). All-equal kept rewards give σ = 1, not 0.
func TestRewardStdHand(t *testing.T) {
	rp, rm := []float64{1, -1, 1}, []float64{-1, -1, 1}
	if got := RewardStd(rp, rm, []int{0, 2}); got != math.Sqrt(0.75) {
		t.Errorf("σ = %v, want √0.75", got)
	}
	if got := RewardStd(rp, rm, []int{1}); got != 1 {
		t.Errorf("σ of equal rewards = %v, want 1", got)
	}
	if got := RewardStd([]float64{1, 1}, []float64{-1, 1}, []int{0, 1}); got != math.Sqrt(0.75) {
		t.Errorf("σ of 1, −1, 1, 1 = %v", got)
	}
}

package mnistars

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/envs/mnist/mnisttest"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

func testSource(name string) stream.Source { return stream.New(6027, "test/mnistars/"+name, nil) }

// goroutines is a pool that runs every index on its own goroutine and
// returns the error of the lowest failing index.
func goroutines(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// workers returns a pool of w goroutines pulling indices from a shared
// counter, as the pipeline's task.Env.Parallel does.
func workers(w int) func(n int, fn func(i int) error) error {
	return func(n int, fn func(i int) error) error {
		errs := make([]error, n)
		var next atomic.Int64
		var wg sync.WaitGroup
		for range w {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					errs[i] = fn(i)
					runtime.Gosched()
				}
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
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

// TestUpdateHand: N = 3, b = 2, α = 0.5, θ = [1, 2]; r+ = [1, −1, 1],
// r− = [−1, −1, 1] keep directions 0 and 2 (max rewards 1, −1, 1); σ = √0.75
// (TestRewardStdHand); Σ (r+ − r−)·Δ = 2·[1, 0] + 0·[2, 2] = [2, 0]; so
// θ = [1 + 0.5/(2·√0.75)·2, 2] = [1 + 0.5/√0.75, 2]. With every reward −1
// (σ = 0 → 1) θ does not move.
func TestUpdateHand(t *testing.T) {
	theta, u := []float64{1, 2}, make([]float64, 2)
	dirs := [][]float64{{1, 0}, {0, 1}, {2, 2}}
	rp, rm := []float64{1, -1, 1}, []float64{-1, -1, 1}
	kept := Select(rp, rm, 2)
	coef := 0.5 / (2 * RewardStd(rp, rm, kept))
	Update(theta, u, dirs, rp, rm, kept, coef)
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

// manual is spec §2.6's iteration written out literally and serially,
// independently of Step's code: directions, the statistics snapshot
// (before the pushes unless late), N images, pushes, standardization,
// stochastic queries in the given mode with draws from "queries"[it, k],
// the top-b selection by a stable sort, σ and the update. It advances theta
// and st in place and returns the rewards.
func manual(in *mnist.Instance, src stream.Source, cfg Config, theta []float64, st *algos.RunningStat, it int64, mode lenet.Mode, late bool) (rp, rm []float64) {
	N, d, P := cfg.Directions, lenet.NumParams, mnist.Pixels
	dirs := make([][]float64, N)
	for k := range dirs {
		rng := src.Rand("directions", uint64(it), uint64(k))
		dirs[k] = make([]float64, d)
		for j := range dirs[k] {
			dirs[k][j] = rng.NormFloat64()
		}
	}
	mu, s := st.Mean(nil), st.Std(nil)
	rng := src.Rand("batch", uint64(it))
	idx := make([]int, N)
	for k := range idx {
		idx[k] = rng.IntN(in.NTrain())
	}
	x, y := make([]float64, N*P), make([]int, N)
	in.TrainBatch(idx, x, y)
	for k := range N {
		st.Push(x[k*P : (k+1)*P])
	}
	if late {
		mu, s = st.Mean(nil), st.Std(nil)
	}
	net, p := lenet.New(1), make([]float64, lenet.Classes)
	rp, rm = make([]float64, N), make([]float64, N)
	for k := range N {
		z := make([]float64, P)
		for j := range z {
			z[j] = (x[k*P+j] - mu[j]) / s[j]
		}
		q := src.Rand("queries", uint64(it), uint64(k))
		for _, sgn := range []float64{1, -1} {
			th := make([]float64, d)
			for j := range th {
				th[j] = theta[j] + sgn*(cfg.Nu*dirs[k][j])
			}
			lenet.Softmax(p, net.Forward(th, z, mode, q))
			r := -1.0
			if lenet.SampleAction(p, q) == y[k] {
				r = 1
			}
			if sgn > 0 {
				rp[k] = r
			} else {
				rm[k] = r
			}
		}
	}
	order := make([]int, N)
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return max(rp[order[a]], rm[order[a]]) > max(rp[order[b]], rm[order[b]]) })
	kept := slices.Clone(order[:cfg.Top])
	sort.Ints(kept)
	var vals []float64
	for _, k := range kept {
		vals = append(vals, rp[k], rm[k])
	}
	var sum, ss float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / float64(len(vals))
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	sigma := math.Sqrt(ss / float64(len(vals)))
	if sigma == 0 {
		sigma = 1
	}
	u := make([]float64, d)
	for _, k := range kept {
		for j := range u {
			u[j] += (rp[k] - rm[k]) * dirs[k][j]
		}
	}
	coef := cfg.Alpha / (float64(cfg.Top) * sigma)
	for j := range theta {
		theta[j] += coef * u[j]
	}
	return rp, rm
}

// TestStepMatchesSpec: three Steps equal, bit for bit, the literal
// iteration of spec §2.6 (manual) with dropout in iteration 1 only and the
// statistics snapshot taken before the pushes (so iteration 1 sees μ = 0,
// s = 1). In iterations 1 and 2 the same manual iteration with the other
// mode, or with the statistics taken after the pushes, gives other
// parameters, so the test tells those apart.
func TestStepMatchesSpec(t *testing.T) {
	cfg := Config{Alpha: 0.02, Directions: 12, Nu: 0.03, Top: 5}
	in := mnisttest.TwoClasses(1, 80, 10)
	src := testSource("spec")
	theta := lenet.NewParams(src.Rand("init"))
	a, err := New(cfg, in, theta, src)
	if err != nil {
		t.Fatal(err)
	}
	other := map[lenet.Mode]lenet.Mode{lenet.Train: lenet.Eval, lenet.Eval: lenet.Train}
	st := algos.NewRunningStat(mnist.Pixels)
	for it := int64(1); it <= 3; it++ {
		alts := map[string][]float64{}
		if it <= 2 {
			th := slices.Clone(theta)
			manual(in, src, cfg, th, cloneStat(t, st), it, other[ModeAt(it)], false)
			alts["mode "+other[ModeAt(it)].String()] = th
			th = slices.Clone(theta)
			manual(in, src, cfg, th, cloneStat(t, st), it, ModeAt(it), true)
			alts["statistics after the pushes"] = th
		}
		rp, rm := manual(in, src, cfg, theta, st, it, ModeAt(it), false)
		stat, err := a.Step(it)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Params(), theta) {
			t.Fatalf("iteration %d: θ differs from the literal iteration", it)
		}
		if !slices.Equal(a.rPlus, rp) || !slices.Equal(a.rMinus, rm) {
			t.Fatalf("iteration %d: rewards %v %v, want %v %v", it, a.rPlus, a.rMinus, rp, rm)
		}
		var sum float64
		for k := range rp {
			sum += rp[k]
			sum += rm[k]
		}
		if stat.Samples != 24 || len(stat.Metrics) != 1 || stat.Metrics[0].Name != "train_reward" || stat.Metrics[0].Value != sum/24 {
			t.Errorf("iteration %d: stat %+v", it, stat)
		}
		for name, th := range alts {
			if slices.Equal(th, theta) {
				t.Errorf("iteration %d: %s gives the same θ; the test cannot tell them apart", it, name)
			}
		}
	}
	if ModeAt(1) != lenet.Train || ModeAt(2) != lenet.Eval || ModeAt(1000) != lenet.Eval {
		t.Error("ModeAt")
	}
}

func cloneStat(t *testing.T, st *algos.RunningStat) *algos.RunningStat {
	t.Helper()
	b, err := st.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var c algos.RunningStat
	if err := c.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestSnapshotTiming: iteration 1's inputs are the raw pixels (μ = 0,
// s = 1); iteration 2 standardizes with the statistics of iteration 1's
// images only; Snapshot carries the statistics including the last
// iteration's pushes and is accepted by mnist's evaluation.
func TestSnapshotTiming(t *testing.T) {
	cfg := Config{Alpha: 0.02, Directions: 5, Nu: 0.03, Top: 2}
	in := mnisttest.TwoClasses(2, 40, 20)
	a, err := Factory{}.New(cfg, in, testSource("timing"))
	if err != nil {
		t.Fatal(err)
	}
	m := a.(*ARS)
	st := algos.NewRunningStat(mnist.Pixels)
	P := mnist.Pixels
	for it := int64(1); it <= 2; it++ {
		mu, s := st.Mean(nil), st.Std(nil)
		if _, err := m.Step(it); err != nil {
			t.Fatal(err)
		}
		rng := m.src.Rand("batch", uint64(it))
		idx := make([]int, 5)
		for k := range idx {
			idx[k] = rng.IntN(40)
		}
		x := make([]float64, 5*P)
		in.TrainBatch(idx, x, nil)
		for k := range 5 {
			for j := range P {
				z := (x[k*P+j] - mu[j]) / s[j]
				if it == 1 {
					z = x[k*P+j] // μ = 0, s = 1: the raw pixels
				}
				if m.z[k*P+j] != z {
					t.Fatalf("iteration %d, image %d, pixel %d: input %v, want %v", it, k, j, m.z[k*P+j], z)
				}
			}
			st.Push(x[k*P : (k+1)*P])
		}
		snap := m.Snapshot()
		want := slices.Concat(m.Params(), st.Mean(nil), st.Std(nil))
		if !slices.Equal(snap, want) {
			t.Fatalf("iteration %d: snapshot is not θ ‖ current μ ‖ current s", it)
		}
		if _, err := in.Accuracy(cfg.Header().Layout, snap); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSerialEqualsParallel: serial queries, one goroutine per direction and
// two workers pulling from a counter give the same θ, statistics and events
// bit for bit (run with -race to check the units share nothing).
func TestSerialEqualsParallel(t *testing.T) {
	cfg := Config{Alpha: 0.02, Directions: 7, Nu: 0.03, Top: 3}
	in := mnisttest.TwoClasses(3, 50, 10)
	run := func(par func(n int, fn func(i int) error) error) ([]task.Iter, []byte) {
		m, err := Factory{}.New(cfg, in, testSource("parallel"))
		if err != nil {
			t.Fatal(err)
		}
		if par != nil {
			m.(algos.Parallelizer).SetParallel(par)
		}
		rec := &algostest.MemRecorder{}
		if _, err := algos.Run(t.Context(), m, algos.Budget{Samples: 14 * 4}, algos.Schedule{Every: 1}, rec); err != nil {
			t.Fatal(err)
		}
		st, _ := m.MarshalState()
		return rec.Events, st
	}
	ev0, st0 := run(nil)
	for name, par := range map[string]func(int, func(int) error) error{"goroutines": goroutines, "2 workers": workers(2)} {
		ev, st := run(par)
		if len(ev) != 4 || !algostest.SameEvents(ev, ev0) || !slices.Equal(st, st0) {
			t.Errorf("%s: results differ from the serial run", name)
		}
	}
}

// TestResume: interrupted and resumed runs reproduce the uninterrupted run
// bit for bit (θ and the statistics are restored; iteration 1's dropout is
// not repeated).
func TestResume(t *testing.T) {
	in := mnisttest.TwoClasses(4, 50, 10)
	src := testSource("resume")
	newM := func() algos.Method {
		m, err := Factory{}.New(Config{Alpha: 0.02, Directions: 3, Nu: 0.03, Top: 2}, in, src)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	algostest.CheckResume(t, newM, algos.Budget{Samples: 6 * 8}, algos.Schedule{Every: 3}, []int64{1, 3})
}

// TestNonFinite: a NaN parameter makes every logit NaN; Step reports
// ErrNonFinite, serially and in parallel, and changes neither θ nor the
// statistics.
func TestNonFinite(t *testing.T) {
	in := mnisttest.TwoClasses(5, 10, 5)
	theta := lenet.NewParams(rand.New(rand.NewPCG(1, 1)))
	theta[lenet.OffFC2B] = math.NaN()
	for _, par := range []func(int, func(int) error) error{nil, goroutines} {
		a, err := New(Config{Alpha: 0.02, Directions: 3, Nu: 0.03, Top: 2}, in, theta, testSource("nan"))
		if err != nil {
			t.Fatal(err)
		}
		a.SetParallel(par)
		before, _ := a.MarshalState()
		if _, err := a.Step(1); !errors.Is(err, ErrNonFinite) {
			t.Fatalf("Step: %v", err)
		}
		if after, _ := a.MarshalState(); !slices.Equal(before, after) {
			t.Error("state changed")
		}
	}
}

func TestConfigure(t *testing.T) {
	vals := map[string]any{"alpha": 0.02, "directions": 50, "nu": 0.03, "top": 20}
	p := task.NewParams("dag.yaml", "train", vals)
	c := Factory{}.Decode(p)
	if err := p.Err(); err != nil || c != (Config{Alpha: 0.02, Directions: 50, Nu: 0.03, Top: 20}) || c.Validate() != nil {
		t.Fatalf("%+v, %v", c, err)
	}
	if h := c.Header(); h != (trajectory.Header{Method: "ars", Layout: trajectory.Normalized}) {
		t.Errorf("Header = %+v", h)
	}
	if h := (Factory{}).Hyper(); !slices.Equal(h, []string{"alpha", "directions", "nu", "top"}) {
		t.Errorf("Hyper() = %v", h)
	}
	vals["top"] = 100
	p = task.NewParams("dag.yaml", "train", vals)
	c = Factory{}.Decode(p)
	var pe *task.Error
	if err := p.Err(); !errors.As(err, &pe) || pe.Field != "params.top" || (c.Validate() == nil) {
		t.Errorf("top 100 > directions 50: %v, feasible %v", err, (c.Validate() == nil))
	}
	p = task.NewParams("dag.yaml", "train", map[string]any{})
	Factory{}.Decode(p)
	if err := p.Err(); err == nil || len(err.(interface{ Unwrap() []error }).Unwrap()) != 4 {
		t.Errorf("want 4 missing parameters: %v", err)
	}
	err := Config{Alpha: -1, Directions: 0, Nu: math.Inf(1), Top: 1}.Validate()
	if !errors.Is(err, ErrConfig) || len(err.(interface{ Unwrap() []error }).Unwrap()) != 4 {
		t.Errorf("Validate: %v", err)
	}
}

func TestFactoryNew(t *testing.T) {
	in := mnisttest.TwoClasses(6, 5, 5)
	src := testSource("factory")
	cfg := Config{Alpha: 0.02, Directions: 2, Nu: 0.03, Top: 1}
	m, err := Factory{}.New(cfg, in, src)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Params(), lenet.NewParams(src.Rand("init"))) {
		t.Error("initial θ is not lenet.NewParams(src.Rand(\"init\"))")
	}
	snap := m.Snapshot()
	for j := range mnist.Pixels {
		if snap[lenet.NumParams+j] != 0 || snap[lenet.NumParams+mnist.Pixels+j] != 1 {
			t.Fatal("initial snapshot statistics are not μ = 0, s = 1")
		}
	}
	if _, err := (Factory{}).New(Config{Alpha: 0.02, Directions: 2, Nu: 0.03, Top: 3}, in, src); !errors.Is(err, ErrConfig) {
		t.Errorf("top > directions: %v", err)
	}
	if _, err := (Factory{}).New(cfg, &mnist.Instance{}, src); !errors.Is(err, ErrInstance) {
		t.Errorf("empty instance: %v", err)
	}
}

func TestUnmarshalStateErrors(t *testing.T) {
	a, err := New(Config{Alpha: 0.02, Directions: 2, Nu: 0.03, Top: 1}, mnisttest.TwoClasses(7, 5, 5), make([]float64, lenet.NumParams), testSource("state"))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := a.MarshalState()
	wrongDim, _ := algos.NewRunningStat(3).MarshalBinary()
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(make([]float64, lenet.NumParams))
	e.Blob(wrongDim)
	short := blob.NewEncoder(stateMagic, stateVersion)
	short.Floats(make([]float64, 5))
	short.Blob(wrongDim)
	for name, b := range map[string][]byte{"statistics of 3 pixels": e.Data(), "short θ": short.Data(), "truncated": good[:len(good)-3], "trailing": append(slices.Clone(good), 0)} {
		if err := a.UnmarshalState(b); !errors.Is(err, blob.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if after, _ := a.MarshalState(); !slices.Equal(after, good) {
		t.Error("a failed UnmarshalState changed the state")
	}
}

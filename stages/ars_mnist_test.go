package stages_test

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
	"zorepro/algos/ars"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/envs/mnist/mnisttest"
	"zorepro/pipeline/blob/blobtest"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Known answers of ARS V2-t on MNIST (the algorithm's own tests in
// algos/ars use fake problems).

var mnistARS ars.Factory[*mnist.Instance, *mnist.Queries]

func mnistARSSource(name string) stream.Source { return stream.New(6027, "test/mnistars/"+name, nil) }

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

// manual is spec §2.6's iteration written out literally and serially,
// independently of Step's code: directions, the statistics snapshot
// (before the pushes unless late), N images, pushes, standardization,
// stochastic queries in the given mode with draws from "queries"[it, k],
// the top-b selection by a stable sort, σ and the update. It advances theta
// and st in place and returns the rewards.
func manual(in *mnist.Instance, src stream.Source, cfg ars.Config, theta []float64, st *algos.RunningStat, it int64, mode lenet.Mode, late bool) (rp, rm []float64) {
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

// TestARSMNISTStepMatchesSpec: three Steps equal, bit for bit, the literal
// iteration of spec §2.6 (manual) with dropout in iteration 1 only and the
// statistics snapshot taken before the pushes (so iteration 1 sees μ = 0,
// s = 1). In iterations 1 and 2 the same manual iteration with the other
// mode, or with the statistics taken after the pushes, gives other
// parameters, so the test tells those apart.
func TestARSMNISTStepMatchesSpec(t *testing.T) {
	cfg := ars.Config{Alpha: 0.02, Directions: 12, Nu: 0.03, Top: 5}
	in := mnisttest.TwoClasses(1, 80, 10)
	src := mnistARSSource("spec")
	theta := lenet.NewParams(src.Rand("init"))
	a, err := ars.New[*mnist.Queries](cfg, in, theta, src)
	if err != nil {
		t.Fatal(err)
	}
	other := map[lenet.Mode]lenet.Mode{lenet.Train: lenet.Eval, lenet.Eval: lenet.Train}
	st := algos.NewRunningStat(mnist.Pixels)
	for it := int64(1); it <= 3; it++ {
		alts := map[string][]float64{}
		if it <= 2 {
			th := slices.Clone(theta)
			manual(in, src, cfg, th, cloneStat(t, st), it, other[mnist.ModeAt(it)], false)
			alts["mode "+other[mnist.ModeAt(it)].String()] = th
			th = slices.Clone(theta)
			manual(in, src, cfg, th, cloneStat(t, st), it, mnist.ModeAt(it), true)
			alts["statistics after the pushes"] = th
		}
		rp, rm := manual(in, src, cfg, theta, st, it, mnist.ModeAt(it), false)
		stat, err := a.Step(it)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Params(), theta) {
			t.Fatalf("iteration %d: θ differs from the literal iteration", it)
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
	if mnist.ModeAt(1) != lenet.Train || mnist.ModeAt(2) != lenet.Eval || mnist.ModeAt(1000) != lenet.Eval {
		t.Error("ModeAt")
	}
}

func cloneStat(t *testing.T, st *algos.RunningStat) *algos.RunningStat {
	t.Helper()
	c, _ := blobtest.RoundTrip(t, st)
	return c
}

// TestARSMNISTSerialEqualsParallel: serial queries, one goroutine per direction and
// two workers pulling from a counter give the same θ, statistics and events
// bit for bit (run with -race to check the units share nothing).
func TestARSMNISTSerialEqualsParallel(t *testing.T) {
	cfg := ars.Config{Alpha: 0.02, Directions: 7, Nu: 0.03, Top: 3}
	in := mnisttest.TwoClasses(3, 50, 10)
	run := func(par func(n int, fn func(i int) error) error) ([]task.Iter, []byte) {
		m, err := mnistARS.New(cfg, in, mnistARSSource("parallel"))
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

// TestARSMNISTResume: interrupted and resumed runs reproduce the uninterrupted run
// bit for bit (θ and the statistics are restored; iteration 1's dropout is
// not repeated).
func TestARSMNISTResume(t *testing.T) {
	in := mnisttest.TwoClasses(4, 50, 10)
	src := mnistARSSource("resume")
	newM := func() algos.Method {
		m, err := mnistARS.New(ars.Config{Alpha: 0.02, Directions: 3, Nu: 0.03, Top: 2}, in, src)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	algostest.CheckResume(t, newM, algos.Budget{Samples: 6 * 8}, algos.Schedule{Every: 3}, []int64{1, 3})
}

// TestARSMNISTNonFinite: a NaN parameter makes every logit NaN; Step reports
// ErrNonFinite, serially and in parallel, and changes neither θ nor the
// statistics.
func TestARSMNISTNonFinite(t *testing.T) {
	in := mnisttest.TwoClasses(5, 10, 5)
	theta := lenet.NewParams(rand.New(rand.NewPCG(1, 1)))
	theta[lenet.OffFC2B] = math.NaN()
	for _, par := range []func(int, func(int) error) error{nil, goroutines} {
		a, err := ars.New[*mnist.Queries](ars.Config{Alpha: 0.02, Directions: 3, Nu: 0.03, Top: 2}, in, theta, mnistARSSource("nan"))
		if err != nil {
			t.Fatal(err)
		}
		a.SetParallel(par)
		checkRefusesNonFinite(t, a)
	}
}

func TestARSMNISTFactoryNew(t *testing.T) {
	in := mnisttest.TwoClasses(6, 5, 5)
	src := mnistARSSource("factory")
	cfg := ars.Config{Alpha: 0.02, Directions: 2, Nu: 0.03, Top: 1}
	m, err := mnistARS.New(cfg, in, src)
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
	if _, err := mnistARS.New(ars.Config{Alpha: 0.02, Directions: 2, Nu: 0.03, Top: 3}, in, src); !errors.Is(err, ars.ErrConfig) {
		t.Errorf("top > directions: %v", err)
	}
	if _, err := mnistARS.New(cfg, &mnist.Instance{}, src); !errors.Is(err, mnist.ErrNoTraining) {
		t.Errorf("empty instance: %v", err)
	}
}

// TestARSMNISTSnapshotTiming: Snapshot is θ ‖ μ ‖ s with the statistics
// including the last iteration's pushes (the raw pixels of "batch"[it]),
// it starts at μ = 0, s = 1, and mnist's evaluation accepts it.
func TestARSMNISTSnapshotTiming(t *testing.T) {
	cfg := ars.Config{Alpha: 0.02, Directions: 5, Nu: 0.03, Top: 2}
	in := mnisttest.TwoClasses(2, 40, 20)
	src := mnistARSSource("timing")
	m, err := mnistARS.New(cfg, in, src)
	if err != nil {
		t.Fatal(err)
	}
	st := algos.NewRunningStat(mnist.Pixels)
	if want := slices.Concat(m.Params(), st.Mean(nil), st.Std(nil)); !slices.Equal(m.Snapshot(), want) {
		t.Fatal("the initial snapshot is not θ ‖ 0 ‖ 1")
	}
	P := mnist.Pixels
	for it := int64(1); it <= 2; it++ {
		if _, err := m.Step(it); err != nil {
			t.Fatal(err)
		}
		rng := src.Rand("batch", uint64(it))
		idx := make([]int, 5)
		for k := range idx {
			idx[k] = rng.IntN(40)
		}
		x := make([]float64, 5*P)
		in.TrainBatch(idx, x, nil)
		for k := range 5 {
			st.Push(x[k*P : (k+1)*P])
		}
		snap := m.Snapshot()
		if want := slices.Concat(m.Params(), st.Mean(nil), st.Std(nil)); !slices.Equal(snap, want) {
			t.Fatalf("iteration %d: snapshot is not θ ‖ current μ ‖ current s", it)
		}
		if _, err := in.Accuracy(cfg.Header().Layout, snap); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkARSMNISTIteration measures one ARS iteration with the paper's
// N = 50, b = 20 (100 queries, eval mode) on the full-size LeNet
// (synthetic images), serially and with the directions spread over
// GOMAXPROCS workers, reporting samples (queries) per second.
func BenchmarkARSMNISTIteration(b *testing.B) {
	b.Run("serial", func(b *testing.B) { benchARSMNIST(b, nil) })
	b.Run("parallel", func(b *testing.B) { benchARSMNIST(b, workers(runtime.GOMAXPROCS(0))) })
}

func benchARSMNIST(b *testing.B, par func(n int, fn func(i int) error) error) {
	in := mnisttest.TwoClasses(9, 1000, 10)
	a, err := ars.New[*mnist.Queries](ars.Config{Alpha: 0.02, Directions: 50, Nu: 0.03, Top: 20}, in, lenet.NewParams(rand.New(rand.NewPCG(1, 1))), stream.New(1, "bench", nil))
	if err != nil {
		b.Fatal(err)
	}
	a.SetParallel(par)
	if _, err := a.Step(1); err != nil { // iteration 1 runs in train mode; time the eval-mode ones
		b.Fatal(err)
	}
	var samples int64
	b.ResetTimer()
	for i := range b.N {
		st, err := a.Step(int64(i + 2))
		if err != nil {
			b.Fatal(err)
		}
		samples += st.Samples
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

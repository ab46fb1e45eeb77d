package mnistars

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"zorepro/algos"
	"zorepro/algos/topb"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Config holds the hyperparameters (spec §2.7: α 0.02, N 50, b 20, ν 0.03;
// tuning grid α ∈ {0.01, 0.02, 0.03}, N ∈ {50, 100, 200}, ν ∈ {0.01, 0.02,
// 0.03}, b ∈ {20, 50, 100}, b ≤ N). There are no defaults: every field must
// be set.
type Config struct {
	// Alpha is the step size α > 0.
	Alpha float64 `json:"alpha"`
	// Directions is N ≥ 1, the number of directions (and training images)
	// per iteration; an iteration consumes 2N samples.
	Directions int `json:"directions"`
	// Nu is the perturbation scale ν > 0.
	Nu float64 `json:"nu"`
	// Top is b, the number of best directions kept, 1 ≤ b ≤ N.
	Top int `json:"top"`
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	pos := func(name string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("%w: %s = %v, want finite > 0", ErrConfig, name, v))
		}
	}
	pos("Alpha", c.Alpha)
	pos("Nu", c.Nu)
	if c.Directions < 1 {
		errs = append(errs, fmt.Errorf("%w: Directions = %d, want ≥ 1", ErrConfig, c.Directions))
	}
	if c.Top < 1 || c.Top > c.Directions {
		errs = append(errs, fmt.Errorf("%w: Top = %d, want 1 ≤ Top ≤ Directions = %d", ErrConfig, c.Top, c.Directions))
	}
	return errors.Join(errs...)
}

func checkInstance(in *mnist.Instance) error {
	if in == nil || in.NTrain() < 1 || len(in.TrainImages) != in.NTrain()*mnist.Pixels {
		return fmt.Errorf("%w: no training images or inconsistent sizes", ErrInstance)
	}
	return nil
}

// ARS is the optimizer state on one instance. It implements algos.Method
// and algos.Parallelizer.
type ARS struct {
	cfg   Config
	in    *mnist.Instance
	src   stream.Source
	par   func(n int, fn func(i int) error) error
	theta []float64
	stats *algos.RunningStat

	// scratch, reused across iterations (no directions: see Step)
	idx           []int
	x, z          []float64 // N×784: raw pixels, standardized inputs
	y             []int
	mu, s         []float64 // the statistics before this iteration's pushes
	rPlus, rMinus []float64
	u             []float64 // Σ (r+ − r−)·Δ over the kept directions
	snap          []float64
	ws            workspaces
}

var (
	_ algos.Method       = (*ARS)(nil)
	_ algos.Parallelizer = (*ARS)(nil)
)

// New returns ARS starting at a copy of theta0 (lenet's flat layout) with
// empty statistics. It returns an ErrConfig error for invalid
// hyperparameters and an ErrInstance error for an unusable instance; it
// panics if len(theta0) != lenet.NumParams. Queries run serially until
// SetParallel provides a pool.
func New(cfg Config, in *mnist.Instance, theta0 []float64, src stream.Source) (*ARS, error) {
	if err := errors.Join(cfg.Validate(), checkInstance(in)); err != nil {
		return nil, err
	}
	if len(theta0) != lenet.NumParams {
		panic(fmt.Sprintf("mnistars: len(theta0) = %d, want %d", len(theta0), lenet.NumParams))
	}
	N := cfg.Directions
	return &ARS{
		cfg: cfg, in: in, src: src,
		theta: slices.Clone(theta0), stats: algos.NewRunningStat(mnist.Pixels),
		idx: make([]int, N), x: make([]float64, N*mnist.Pixels), z: make([]float64, N*mnist.Pixels), y: make([]int, N),
		mu: make([]float64, mnist.Pixels), s: make([]float64, mnist.Pixels),
		rPlus: make([]float64, N), rMinus: make([]float64, N),
		u: make([]float64, lenet.NumParams), snap: make([]float64, lenet.NumParams+2*mnist.Pixels),
	}, nil
}

// SetParallel implements algos.Parallelizer: par runs the N direction units
// of each iteration. Results do not depend on it.
func (a *ARS) SetParallel(par func(n int, fn func(i int) error) error) { a.par = par }

func (a *ARS) run(n int, fn func(i int) error) error {
	if a.par != nil {
		return a.par(n, fn)
	}
	for i := range n {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

// ModeAt returns the network mode of iteration it's queries: lenet.Train in
// iteration 1 (before the original's first evaluation switched the network
// to eval mode), lenet.Eval afterwards.
func ModeAt(it int64) lenet.Mode {
	if it == 1 {
		return lenet.Train
	}
	return lenet.Eval
}

// Step runs iteration it (see the package documentation). The directions
// are allocated here and released when Step returns. A failed query (an
// ErrNonFinite error, or an error of the parallel pool) ends the iteration
// before the statistics or θ change.
func (a *ARS) Step(it int64) (algos.Stat, error) {
	N, d, P := a.cfg.Directions, lenet.NumParams, mnist.Pixels
	a.in.DrawTrainBatch(a.src.Rand("batch", uint64(it)), a.idx, a.x, a.y)
	a.stats.Mean(a.mu)
	a.stats.Std(a.s)
	copy(a.z, a.x)
	mnist.Standardize(a.z, a.mu, a.s)

	mode := ModeAt(it)
	dirs := make([][]float64, N)
	err := a.run(N, func(k int) error {
		dk := make([]float64, d) // allocated (and zeroed) by the unit's worker
		Direction(dk, a.src.Rand("directions", uint64(it), uint64(k)))
		dirs[k] = dk
		ws := a.ws.get()
		defer a.ws.put(ws)
		var err error
		a.rPlus[k], a.rMinus[k], err = ws.query(a.theta, dk, a.cfg.Nu, a.z[k*P:(k+1)*P], a.y[k], mode, a.src.Rand("queries", uint64(it), uint64(k)))
		if err != nil {
			return fmt.Errorf("direction %d: %w", k, err)
		}
		return nil
	})
	if err != nil {
		return algos.Stat{}, err
	}

	for k := range N {
		a.stats.Push(a.x[k*P : (k+1)*P])
	}
	var sum float64
	for k := range N {
		sum += a.rPlus[k]
		sum += a.rMinus[k]
	}
	kept := Select(a.rPlus, a.rMinus, a.cfg.Top)
	sigma := RewardStd(a.rPlus, a.rMinus, kept)
	Update(a.theta, a.u, dirs, a.rPlus, a.rMinus, kept, a.cfg.Alpha/(float64(a.cfg.Top)*sigma))
	return algos.Stat{
		Samples: 2 * int64(N),
		Metrics: []task.Metric{{Name: "train_reward", Value: sum / float64(2*N)}},
	}, nil
}

// Direction fills dir with standard normals, rng.NormFloat64() in index
// order.
func Direction(dir []float64, rng *rand.Rand) {
	for j := range dir {
		dir[j] = rng.NormFloat64()
	}
}

// workspace is the scratch of one direction unit.
type workspace struct {
	net         *lenet.Net
	plus, minus []float64 // θ ± ν·Δ
	p           []float64 // one softmax row
}

// workspaces is a free list: get hands a workspace to one unit for its
// exclusive use; put returns it. At most as many exist as units ever ran
// at once.
type workspaces struct {
	mu   sync.Mutex
	free []*workspace
}

func (w *workspaces) get() *workspace {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.free); n > 0 {
		ws := w.free[n-1]
		w.free = w.free[:n-1]
		return ws
	}
	return &workspace{
		net:  lenet.New(1),
		plus: make([]float64, lenet.NumParams), minus: make([]float64, lenet.NumParams),
		p: make([]float64, lenet.Classes),
	}
}

func (w *workspaces) put(ws *workspace) {
	w.mu.Lock()
	w.free = append(w.free, ws)
	w.mu.Unlock()
}

// query returns the rewards of the + and − perturbations of direction dir
// on the standardized image z with label y: θ±_j = θ_j ± ν·dir_j (one
// product ν·dir_j, added and subtracted), logits = Forward(θ±, z, mode,
// rng), p = Softmax, a = SampleAction(p, rng), r = +1 if a = y else −1; the
// + query runs first.
func (ws *workspace) query(theta, dir []float64, nu float64, z []float64, y int, mode lenet.Mode, rng *rand.Rand) (rPlus, rMinus float64, err error) {
	for j, t := range theta {
		dj := nu * dir[j]
		ws.plus[j] = t + dj
		ws.minus[j] = t - dj
	}
	var r [2]float64
	for i, th := range [2][]float64{ws.plus, ws.minus} {
		logits := ws.net.Forward(th, z, mode, rng)
		for _, v := range logits {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, 0, fmt.Errorf("%w: %s query", ErrNonFinite, [2]string{"+", "−"}[i])
			}
		}
		lenet.Softmax(ws.p, logits)
		r[i] = -1
		if lenet.SampleAction(ws.p, rng) == y {
			r[i] = 1
		}
	}
	return r[0], r[1], nil
}

// Select returns the kept directions (see topb.Select).
func Select(rPlus, rMinus []float64, top int) []int { return topb.Select(rPlus, rMinus, top) }

// RewardStd returns σ of the kept rewards (see topb.RewardStd).
func RewardStd(rPlus, rMinus []float64, kept []int) float64 {
	return topb.RewardStd(rPlus, rMinus, kept)
}

// Update adds coef·u to theta, where u (scratch of len(theta), overwritten)
// is Σ_{k ∈ kept, in the given order} (r+_k − r−_k)·dirs[k], accumulated
// direction by direction from u = 0; Step passes coef = α/(b·σ). Directions
// with r+_k = r−_k are skipped (adding ±0 to a sum that starts at +0
// changes no bits). It panics on mismatched lengths.
func Update(theta, u []float64, dirs [][]float64, rPlus, rMinus []float64, kept []int, coef float64) {
	if len(u) != len(theta) {
		panic(fmt.Sprintf("mnistars: Update: len(u) = %d, len(theta) = %d", len(u), len(theta)))
	}
	clear(u)
	for _, k := range kept {
		if len(dirs[k]) != len(theta) {
			panic(fmt.Sprintf("mnistars: Update: direction %d has length %d, want %d", k, len(dirs[k]), len(theta)))
		}
		diff := rPlus[k] - rMinus[k]
		if diff == 0 {
			continue
		}
		for j, dj := range dirs[k] {
			u[j] += diff * dj
		}
	}
	for j := range theta {
		theta[j] += coef * u[j]
	}
}

// Params returns θ (read-only view).
func (a *ARS) Params() []float64 { return a.theta }

// Snapshot returns θ ‖ μ ‖ s (mnist.LayoutNormalized) with the current
// statistics, in a buffer that the next Snapshot overwrites.
func (a *ARS) Snapshot() []float64 {
	copy(a.snap, a.theta)
	a.stats.Mean(a.snap[lenet.NumParams : lenet.NumParams+mnist.Pixels])
	a.stats.Std(a.snap[lenet.NumParams+mnist.Pixels:])
	return a.snap
}

const (
	stateMagic   = "ZMAR"
	stateVersion = 1
)

// MarshalState encodes θ and the running statistics ("ZMAR", version 1).
func (a *ARS) MarshalState() ([]byte, error) {
	st, err := a.stats.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(a.theta)
	e.Blob(st)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob. On error the receiver is
// unchanged.
func (a *ARS) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, stateMagic, stateVersion)
	theta := d.Floats()
	state := d.Blob()
	if d.Err() == nil && len(theta) != lenet.NumParams {
		d.Failf("state has %d parameters, want %d", len(theta), lenet.NumParams)
	}
	if err := d.Finish(); err != nil {
		return fmt.Errorf("mnistars: %w", err)
	}
	var st algos.RunningStat
	if err := st.UnmarshalBinary(state); err != nil {
		return fmt.Errorf("mnistars: statistics: %w", err)
	}
	if st.Dim() != mnist.Pixels {
		return fmt.Errorf("mnistars: %w: statistics over %d pixels, want %d", blob.ErrFormat, st.Dim(), mnist.Pixels)
	}
	copy(a.theta, theta)
	*a.stats = st
	return nil
}

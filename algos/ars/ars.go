package ars

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"zorepro/algos"
	"zorepro/algos/topb"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Problem is a regression problem that draws batches; *linreg.Instance
// satisfies it.
type Problem interface {
	// Dim is the length of a feature row and of w; coordinate 0 is the bias.
	Dim() int
	// Batch fills X (rows(X)×Dim) and y (length rows(X)) from rng.
	Batch(rng *rand.Rand, X *mat.Dense, y []float64)
}

// Config holds ARS's hyperparameters (spec §3.7 table; §3.8 grid). There are
// no defaults: every field must be set.
type Config struct {
	// Alpha is the step size α > 0.
	Alpha float64 `json:"alpha"`
	// Directions is N > 0, the number of directions (and examples) per
	// iteration; an iteration consumes 2N samples.
	Directions int `json:"directions"`
	// Top is b, the number of best directions kept, 0 < b ≤ N.
	Top int `json:"top"`
	// Nu is the perturbation length ν > 0.
	Nu float64 `json:"nu"`
}

// ErrConfig is returned by Config.Validate and New for invalid
// hyperparameters.
var ErrConfig = errors.New("ars: invalid config")

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
		errs = append(errs, fmt.Errorf("%w: Directions = %d, want > 0", ErrConfig, c.Directions))
	}
	if c.Top < 1 || c.Top > c.Directions {
		errs = append(errs, fmt.Errorf("%w: Top = %d, want 0 < Top ≤ Directions = %d", ErrConfig, c.Top, c.Directions))
	}
	return errors.Join(errs...)
}

// ARS is the optimizer state on one problem. It implements algos.Method.
type ARS struct {
	cfg   Config
	p     Problem
	src   stream.Source
	w     []float64
	stats *algos.RunningStat // over the Dim−1 non-bias features

	// scratch, reused across iterations
	X             *mat.Dense
	y             []float64
	dirs, z       [][]float64
	mu, s         []float64
	rPlus, rMinus []float64
}

var _ algos.Method = (*ARS)(nil)

// New returns ARS starting at a copy of w0 (in normalized-feature
// coordinates; with empty statistics μ = 0 and s = 1, so the first
// iteration sees raw features). It returns an ErrConfig error for invalid
// hyperparameters and panics if len(w0) != p.Dim() or p.Dim() < 1.
func New(cfg Config, p Problem, w0 []float64, src stream.Source) (*ARS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dim := p.Dim()
	if dim < 1 || len(w0) != dim {
		panic(fmt.Sprintf("ars: len(w0) = %d, problem dimension %d", len(w0), dim))
	}
	n := cfg.Directions
	a := &ARS{
		cfg: cfg, p: p, src: src, w: slices.Clone(w0),
		stats: algos.NewRunningStat(dim - 1),
		X:     mat.NewDense(n, dim, nil), y: make([]float64, n),
		dirs: make([][]float64, n), z: make([][]float64, n),
		mu: make([]float64, dim-1), s: make([]float64, dim-1),
		rPlus: make([]float64, n), rMinus: make([]float64, n),
	}
	for k := range a.dirs {
		a.dirs[k] = make([]float64, dim)
		a.z[k] = make([]float64, dim)
	}
	return a, nil
}

// parallelMin is the work size N·Dim from which Step spreads directions over
// goroutines. Results do not depend on it (each direction has its own stream
// and output slots; reductions run in index order afterwards).
var parallelMin = 1 << 12

// Step runs iteration it:
//
//  1. examples: a batch of N (x_k, y_k) from src.Rand("batch", it);
//  2. μ, s: the running mean and std BEFORE this iteration's pushes;
//  3. per direction k (possibly in parallel): Δ_k = Dim standard normals
//     from src.Rand("directions", it, k); z_k = [1, (x_k[1:]−μ)/s];
//     r±_k = Rewards(w, Δ_k, z_k, y_k, ν);
//  4. push x_1[1:], ..., x_N[1:] into the statistics, in index order;
//  5. Update(w, Δ, r+, r−, b, α): keep the b directions with the largest
//     max(r+, r−) and step along Σ(r+ − r−)Δ / (b·σ).
//
// It consumes 2N samples and reports "train_reward", the mean of the 2N
// rewards (summed r+_1, r−_1, r+_2, ... in order).
func (a *ARS) Step(it int64) (algos.Stat, error) {
	n, dim := a.cfg.Directions, len(a.w)
	a.p.Batch(a.src.Rand("batch", uint64(it)), a.X, a.y)
	a.stats.Mean(a.mu)
	a.stats.Std(a.s)

	workers := 1
	if n*dim >= parallelMin {
		workers = min(runtime.GOMAXPROCS(0), n)
	}
	parallelFor(n, workers, func(k int) {
		rng := a.src.Rand("directions", uint64(it), uint64(k))
		dk := a.dirs[k]
		for j := range dk {
			dk[j] = rng.NormFloat64()
		}
		x, zk := a.X.RawRowView(k), a.z[k]
		zk[0] = 1
		for j := 1; j < dim; j++ {
			zk[j] = (x[j] - a.mu[j-1]) / a.s[j-1]
		}
		a.rPlus[k], a.rMinus[k] = Rewards(a.w, dk, zk, a.y[k], a.cfg.Nu)
	})
	for k := 0; k < n; k++ {
		a.stats.Push(a.X.RawRowView(k)[1:])
	}
	var sum float64
	for k := 0; k < n; k++ {
		sum += a.rPlus[k]
		sum += a.rMinus[k]
	}
	Update(a.w, a.dirs, a.rPlus, a.rMinus, a.cfg.Top, a.cfg.Alpha)
	return algos.Stat{
		Samples: 2 * int64(n),
		Metrics: []task.Metric{{Name: "train_reward", Value: sum / float64(2*n)}},
	}, nil
}

// parallelFor calls fn(k) for k in [0, n), on up to workers goroutines with
// a static assignment (worker i takes k ≡ i mod workers).
func parallelFor(n, workers int, fn func(k int)) {
	if workers <= 1 {
		for k := 0; k < n; k++ {
			fn(k)
		}
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := i; k < n; k += workers {
				fn(k)
			}
		}(i)
	}
	wg.Wait()
}

// Rewards returns r± = −½(z·(w ± ν·Δ) − y)² for one direction: the perturbed
// weights are w_j ± ν·Δ_j, the prediction Σ_j z_j·(w_j ± ν·Δ_j) is summed in
// index order, and r = −((ŷ−y)·(ŷ−y)·½). It panics on mismatched lengths.
func Rewards(w, dir, z []float64, y, nu float64) (rPlus, rMinus float64) {
	if len(dir) != len(w) || len(z) != len(w) {
		panic(fmt.Sprintf("ars: Rewards: len(w) = %d, len(dir) = %d, len(z) = %d", len(w), len(dir), len(z)))
	}
	var yp, ym float64
	for j, zj := range z {
		d := nu * dir[j]
		yp += zj * (w[j] + d)
		ym += zj * (w[j] - d)
	}
	ep, em := yp-y, ym-y
	return -(ep * ep * 0.5), -(em * em * 0.5)
}

// Select returns the kept directions (see topb.Select).
func Select(rPlus, rMinus []float64, top int) []int { return topb.Select(rPlus, rMinus, top) }

// RewardStd returns σ of the kept rewards (see topb.RewardStd).
func RewardStd(rPlus, rMinus []float64, kept []int) float64 {
	return topb.RewardStd(rPlus, rMinus, kept)
}

// Update applies the ARS V2 step in place and returns σ:
//
//	kept = Select(r+, r−, top);  σ = RewardStd(r+, r−, kept)
//	u_j  = Σ_{k ∈ kept, ascending} (r+_k − r−_k)·Δ_kj
//	w_j += (α/(top·σ))·u_j
//
// It panics on mismatched lengths.
func Update(w []float64, dirs [][]float64, rPlus, rMinus []float64, top int, alpha float64) (sigma float64) {
	if len(dirs) != len(rPlus) {
		panic(fmt.Sprintf("ars: Update: %d directions, %d rewards", len(dirs), len(rPlus)))
	}
	kept := Select(rPlus, rMinus, top)
	sigma = RewardStd(rPlus, rMinus, kept)
	u := make([]float64, len(w))
	for _, k := range kept {
		if len(dirs[k]) != len(w) {
			panic(fmt.Sprintf("ars: Update: direction %d has length %d, want %d", k, len(dirs[k]), len(w)))
		}
		diff := rPlus[k] - rMinus[k]
		for j, d := range dirs[k] {
			u[j] += diff * d
		}
	}
	coef := alpha / (float64(top) * sigma)
	for j := range w {
		w[j] += coef * u[j]
	}
	return sigma
}

// Params returns w (read-only view), in normalized-feature coordinates.
func (a *ARS) Params() []float64 { return a.w }

// Snapshot returns a new slice w ‖ μ ‖ s with the CURRENT statistics (after
// the last iteration's pushes): the layout linreg.LayoutNormalized, length
// Dim + 2(Dim−1).
func (a *ARS) Snapshot() []float64 {
	d := len(a.w) - 1
	out := make([]float64, 0, len(a.w)+2*d)
	out = append(out, a.w...)
	out = append(out, a.stats.Mean(nil)...)
	return append(out, a.stats.Std(nil)...)
}

const (
	stateMagic   = "ZARS"
	stateVersion = 1
)

// MarshalState encodes w and the running statistics ("ZARS", version 1).
func (a *ARS) MarshalState() ([]byte, error) {
	st, err := a.stats.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(a.w)
	e.Blob(st)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob; its dimensions must match the
// problem's. On error the receiver is unchanged.
func (a *ARS) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, stateMagic, stateVersion)
	w := d.Floats()
	state := d.Blob()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("ars: %w", err)
	}
	if len(w) != len(a.w) {
		return fmt.Errorf("ars: %w: state has %d weights, problem dimension %d", blob.ErrFormat, len(w), len(a.w))
	}
	var st algos.RunningStat
	if err := st.UnmarshalBinary(state); err != nil {
		return fmt.Errorf("ars: statistics: %w", err)
	}
	if st.Dim() != len(a.w)-1 {
		return fmt.Errorf("ars: %w: statistics over %d features, want %d", blob.ErrFormat, st.Dim(), len(a.w)-1)
	}
	copy(a.w, w)
	*a.stats = st
	return nil
}

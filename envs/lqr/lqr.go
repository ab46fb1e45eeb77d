package lqr

import (
	"fmt"
	"math"
	"math/rand/v2"

	"zorepro/pipeline/blob"
	"zorepro/pipeline/task"
)

// The fixed system of §5.1.
const (
	// ADiag and AOff are the diagonal and the sub/super-diagonal of A.
	ADiag = 0.9
	AOff  = 0.01
	// QScale is q in Q = q·I; RScale is R (p = 1).
	QScale = 1e-3
	RScale = 1.0
)

// Defaults of §5.1 and §5.2.
const (
	DefaultDim       = 100
	DefaultHorizon   = 100
	DefaultTolerance = 0.05
)

// X0Scope is the scope of the stream source x₀* is drawn from (see the
// package documentation).
const X0Scope = "envs/lqr"

// Bounds checked by New and UnmarshalBinary.
const (
	MaxDim     = 1000
	MaxHorizon = 100000
)

// Instance is one LQR problem: the dimensions, the noise level, the
// stationarity threshold and the fixed initial state x₀*.
//
// Fields are exported for inspection; treat them as read-only. An Instance
// is safe for concurrent use (every method only reads it).
type Instance struct {
	// N is the state dimension n (the action dimension is 1).
	N int
	// H is the horizon: steps per episode.
	H int
	// Noise is c, the standard deviation of each coordinate of ξ_t.
	Noise float64
	// Tol is the stationarity threshold: Converged reports true when
	// ‖G‖²_F < Tol.
	Tol float64
	// X0 is x₀* (length N).
	X0 []float64
}

// New returns an instance with a copy of x0 as x₀*. It checks
// 1 ≤ n ≤ MaxDim, 1 ≤ h ≤ MaxHorizon, finite noise ≥ 0, finite tol > 0 and
// len(x0) = n with finite entries.
func New(n, h int, noise, tol float64, x0 []float64) (*Instance, error) {
	in := &Instance{N: n, H: h, Noise: noise, Tol: tol, X0: append([]float64(nil), x0...)}
	if err := in.check(); err != nil {
		return nil, err
	}
	return in, nil
}

// Generate returns an instance whose x₀* is the first n draws of rng.
func Generate(n, h int, noise, tol float64, rng *rand.Rand) (*Instance, error) {
	if n < 1 || n > MaxDim {
		return nil, fmt.Errorf("%w: n = %d, want 1 ≤ n ≤ %d", ErrFormat, n, MaxDim)
	}
	x0 := make([]float64, n)
	for i := range x0 {
		x0[i] = rng.NormFloat64()
	}
	return New(n, h, noise, tol, x0)
}

func (in *Instance) check() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case in.N < 1 || in.N > MaxDim:
		return fmt.Errorf("%w: n = %d, want 1 ≤ n ≤ %d", ErrFormat, in.N, MaxDim)
	case in.H < 1 || in.H > MaxHorizon:
		return fmt.Errorf("%w: horizon = %d, want 1 ≤ H ≤ %d", ErrFormat, in.H, MaxHorizon)
	case !finite(in.Noise) || in.Noise < 0:
		return fmt.Errorf("%w: noise = %v, want finite ≥ 0", ErrFormat, in.Noise)
	case !finite(in.Tol) || in.Tol <= 0:
		return fmt.Errorf("%w: tolerance = %v, want finite > 0", ErrFormat, in.Tol)
	case len(in.X0) != in.N:
		return fmt.Errorf("%w: x₀* has %d coordinates, want %d", ErrFormat, len(in.X0), in.N)
	}
	for i, v := range in.X0 {
		if !finite(v) {
			return fmt.Errorf("%w: x₀*[%d] = %v", ErrFormat, i, v)
		}
	}
	return nil
}

// ObsDim returns n.
func (in *Instance) ObsDim() int { return in.N }

// ActDim returns 1.
func (in *Instance) ActDim() int { return 1 }

// Horizon returns H.
func (in *Instance) Horizon() int { return in.H }

// mulA sets y = A·x (y and x must not alias). Row i is summed in ascending
// column order: (AOff·x[i−1] + ADiag·x[i]) + AOff·x[i+1].
func mulA(y, x []float64) {
	n := len(x)
	if n == 1 {
		y[0] = ADiag * x[0]
		return
	}
	y[0] = ADiag*x[0] + AOff*x[1]
	for i := 1; i < n-1; i++ {
		y[i] = AOff*x[i-1] + ADiag*x[i] + AOff*x[i+1]
	}
	y[n-1] = AOff*x[n-2] + ADiag*x[n-1]
}

// dot returns Σ_i a_i·b_i summed in index order.
func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// stepCost returns q·(xᵀx) + r·u·u.
func stepCost(x []float64, u float64) float64 {
	return QScale*dot(x, x) + RScale*(u*u)
}

// transition sets y = (A·x + u) + c·ξ: y_i = ((A·x)_i + u) + c·xi_i.
func transition(y, x []float64, u, c float64, xi []float64) {
	mulA(y, x)
	for i, v := range xi {
		y[i] = (y[i] + u) + c*v
	}
}

// Rollout runs one episode: x₀ ~ N(0, I) from rng, then for t = 0..H−1 the
// action u_t = W·x_t (W is the 1×n gain, summed in index order), the cost
// q·(x_tᵀx_t) + r·u_t², and (for t < H−1) the transition with noise drawn
// from rng. It returns the return −Σ_t cost_t.
//
// If delta is non-nil (length 1), the action at step t (0 ≤ t < H) is
// W·x_t + delta[0] instead, both in the cost and in the dynamics, and x_t is
// copied into obs when obs is non-nil (length n). t is ignored when delta is
// nil. It never returns an error (an unstable gain yields ±Inf or NaN); the
// error is part of algos/episodic.Episodic.
// It panics on mismatched lengths or t out of range.
func (in *Instance) Rollout(rng *rand.Rand, W []float64, t int, delta, obs []float64) (float64, error) {
	n := in.N
	if len(W) != n {
		panic(fmt.Sprintf("lqr: Rollout: len(W) = %d, want %d", len(W), n))
	}
	if delta == nil {
		return in.episode(rng, W, nil, nil, nil, nil), nil
	}
	if len(delta) != 1 || t < 0 || t >= in.H || (obs != nil && len(obs) != n) {
		panic(fmt.Sprintf("lqr: Rollout: perturbation at t = %d (H = %d), len(delta) = %d, len(obs) = %d", t, in.H, len(delta), len(obs)))
	}
	return in.episode(rng, W, []int{t}, delta, obs, nil), nil
}

// Episode is Rollout with the action perturbed at each of the listed steps
// (strictly increasing, in [0, H)) by delta[j], x at that step copied to
// obs[j·n:(j+1)·n] when obs is not nil, and, when rewards is not nil
// (length H), each step's reward −cost_t recorded: the episodes of ExAct's
// all-steps and reward-to-go variants (algos/episodic.Perturber). Rollout
// is Episode with one perturbed step; the arithmetic is the same. It
// panics on wrong lengths or steps.
func (in *Instance) Episode(rng *rand.Rand, W []float64, steps []int, delta, obs, rewards []float64) (float64, error) {
	n := in.N
	if len(W) != n || len(delta) != len(steps) || (obs != nil && len(obs) != len(steps)*n) || (rewards != nil && len(rewards) != in.H) {
		panic(fmt.Sprintf("lqr: Episode: len(W) = %d, %d steps, len(delta) = %d, len(obs) = %d, len(rewards) = %d (n = %d, H = %d)", len(W), len(steps), len(delta), len(obs), len(rewards), n, in.H))
	}
	for j, t := range steps {
		if t < 0 || t >= in.H || (j > 0 && t <= steps[j-1]) {
			panic(fmt.Sprintf("lqr: Episode: steps %v not strictly increasing in [0, %d)", steps, in.H))
		}
	}
	return in.episode(rng, W, steps, delta, obs, rewards), nil
}

// episode runs an episode, perturbing the listed steps (see Episode).
func (in *Instance) episode(rng *rand.Rand, W []float64, steps []int, delta, obs, rewards []float64) float64 {
	n := in.N
	buf := make([]float64, 3*n)
	x, y, xi := buf[:n:n], buf[n:2*n:2*n], buf[2*n:]
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	var cost float64
	j := 0 // the next perturbed step
	for s := 0; s < in.H; s++ {
		u := dot(W, x)
		if j < len(steps) && s == steps[j] {
			u += delta[j]
			if obs != nil {
				copy(obs[j*n:(j+1)*n], x)
			}
			j++
		}
		c := stepCost(x, u)
		if rewards != nil {
			rewards[s] = -c
		}
		cost += c
		if s == in.H-1 {
			break
		}
		for i := range xi {
			xi[i] = rng.NormFloat64()
		}
		transition(y, x, u, in.Noise, xi)
		x, y = y, x
	}
	return -cost
}

// NoiseLen returns the number of standard normals a trajectory's dynamics
// noise takes: (H−1)·n.
func (in *Instance) NoiseLen() int { return (in.H - 1) * in.N }

// TrajectoryCost returns C(K) = Σ_{t=0}^{H−1} q·(x_tᵀx_t) + r·u_t² of the
// trajectory from x0 with u_t = K·x_t and x_{t+1} = (A·x_t + u_t) + c·xi_t,
// where xi holds NoiseLen() standard normals, ξ_t = xi[t·n : (t+1)·n]. It
// is the same arithmetic as Rollout. It panics on mismatched lengths.
func (in *Instance) TrajectoryCost(K, x0, xi []float64) float64 {
	c, _ := in.trajectory(K, x0, xi, false)
	return c
}

// TrajectoryGrad returns C(K) (as TrajectoryCost) and G = ∇_K C with the
// noise held fixed, by the adjoint recursion of §5.2 (O(nH)):
//
//	λ_H = 0;  for t = H−1..0:
//	   G  += (2r·u_t + Bᵀλ_{t+1})·x_tᵀ
//	   λ_t = 2q·x_t + Kᵀ(2r·u_t) + (A + BK)ᵀλ_{t+1}
//
// with Bᵀλ = Σ_i λ_i and (A + BK)ᵀλ = A·λ + Kᵀ(Bᵀλ) (A is symmetric).
func (in *Instance) TrajectoryGrad(K, x0, xi []float64) (cost float64, G []float64) {
	return in.trajectory(K, x0, xi, true)
}

func (in *Instance) trajectory(K, x0, xi []float64, grad bool) (float64, []float64) {
	n, h := in.N, in.H
	if len(K) != n || len(x0) != n || len(xi) != in.NoiseLen() {
		panic(fmt.Sprintf("lqr: trajectory: len(K) = %d, len(x0) = %d, len(xi) = %d; want %d, %d, %d", len(K), len(x0), len(xi), n, n, in.NoiseLen()))
	}
	xs := make([]float64, h*n) // x_t = xs[t·n:]
	us := make([]float64, h)
	copy(xs, x0)
	var cost float64
	for t := 0; t < h; t++ {
		x := xs[t*n : (t+1)*n]
		us[t] = dot(K, x)
		cost += stepCost(x, us[t])
		if t == h-1 {
			break
		}
		transition(xs[(t+1)*n:(t+2)*n], x, us[t], in.Noise, xi[t*n:(t+1)*n])
	}
	if !grad {
		return cost, nil
	}
	G := make([]float64, n)
	lam := make([]float64, n) // λ_{t+1}
	next := make([]float64, n)
	for t := h - 1; t >= 0; t-- {
		x := xs[t*n : (t+1)*n]
		var bl float64 // Bᵀλ_{t+1}
		for _, v := range lam {
			bl += v
		}
		ru := 2 * RScale * us[t]
		coef := ru + bl
		for j, xj := range x {
			G[j] += coef * xj
		}
		// λ_t = 2q·x_t + Kᵀ(2r·u_t) + A·λ_{t+1} + Kᵀ(Bᵀλ_{t+1})
		mulA(next, lam)
		for i := range next {
			next[i] = 2*QScale*x[i] + K[i]*ru + next[i] + K[i]*bl
		}
		lam, next = next, lam
	}
	return cost, G
}

// Stationarity returns the stop statistic of §5.2 for the gain K: ‖G‖²_F of
// the trajectory from x₀* whose noise ξ_0..ξ_{H−2} is NoiseLen() fresh draws
// from rng (see TrajectoryGrad), G itself and the trajectory's cost.
func (in *Instance) Stationarity(K []float64, rng *rand.Rand) (gradSq float64, G []float64, cost float64) {
	xi := make([]float64, in.NoiseLen())
	for i := range xi {
		xi[i] = rng.NormFloat64()
	}
	cost, G = in.TrajectoryGrad(K, in.X0, xi)
	return dot(G, G), G, cost
}

// MetricGradSq names the stationarity statistic ‖G‖²_F in metrics.
const MetricGradSq = "grad_sq"

// Converged is the stop hook the multi-step methods call after every
// iteration (algos/arsv1, algos/exact): it computes Stationarity(W, rng)
// and reports ‖G‖²_F < Tol, with the metric "grad_sq". With diagnostics it
// adds the exact expected "exp_grad_sq" (‖∇J‖²) and "exp_cost" (J(K)) of
// §6 item 5, which never affect training (they cost O(n²H), several times
// an iteration, hence the switch). It never returns an error. It panics if
// len(W) != n.
func (in *Instance) Converged(W []float64, rng *rand.Rand, diagnostics bool) (bool, []task.Metric, error) {
	g2, _, _ := in.Stationarity(W, rng)
	ms := []task.Metric{{Name: MetricGradSq, Value: g2}}
	if diagnostics {
		J, grad := in.Expected(W)
		var e2 float64
		for _, g := range grad {
			e2 += g * g
		}
		ms = append(ms, task.Metric{Name: MetricExpGradSq, Value: e2}, task.Metric{Name: MetricExpCost, Value: J})
	}
	return g2 < in.Tol, ms, nil
}

// Expected returns the exact expected cost J(K) = E_{x₀~N(0,I), ξ}[C(K)] and
// its gradient ∇J (length n), by the covariance and value recursions in the
// package documentation, in O(n²H) time and O(n² + nH) memory:
//
//   - backward, for t = H−1..0: v_{t+1} = P_{t+1}·1 (row sums; P_H = 0),
//     then P_t = qI + r·KᵀK + MᵀP_{t+1}M, where, with v = v_{t+1},
//     (MᵀP_{t+1}M)_ij = (AP_{t+1}A)_ij + (Av)_i K_j + K_i (Av)_j + (1ᵀv) K_i K_j;
//   - forward from Σ_0 = I: w = Σ_t Kᵀ; J += q·tr(Σ_t) + r·(K·w);
//     ∇J += 2(r·w + Σ_t z) with z = A v_{t+1} + (1ᵀv_{t+1}) K (that is,
//     (v_{t+1}ᵀM)ᵀ); and Σ_{t+1} = AΣ_tA + (Aw)1ᵀ + 1(Aw)ᵀ + (K·w)11ᵀ + c²I.
//
// It panics if len(K) != n.
func (in *Instance) Expected(K []float64) (J float64, grad []float64) {
	n, h := in.N, in.H
	if len(K) != n {
		panic(fmt.Sprintf("lqr: Expected: len(K) = %d, want %d", len(K), n))
	}
	c2 := in.Noise * in.Noise
	P := make([]float64, n*n)
	tmp := make([]float64, n*n)
	V := make([]float64, h*n) // V[t·n:] = v_{t+1} = P_{t+1}·1
	av := make([]float64, n)
	for t := h - 1; t >= 0; t-- {
		v := V[t*n : (t+1)*n]
		for i := 0; i < n; i++ {
			var s float64
			for _, p := range P[i*n : (i+1)*n] {
				s += p
			}
			v[i] = s
		}
		if t == 0 {
			break
		}
		// P_t = S + MᵀP_{t+1}M
		mulAA(P, tmp, n)
		mulA(av, v)
		var sv float64
		for _, x := range v {
			sv += x
		}
		for i := 0; i < n; i++ {
			row := P[i*n : (i+1)*n]
			for j := range row {
				row[j] = row[j] + av[i]*K[j] + K[i]*av[j] + sv*K[i]*K[j] + RScale*K[i]*K[j]
			}
			row[i] += QScale
		}
	}
	grad = make([]float64, n)
	sig := make([]float64, n*n) // Σ_t
	for i := 0; i < n; i++ {
		sig[i*n+i] = 1
	}
	w := make([]float64, n)
	z := make([]float64, n)
	aw := make([]float64, n)
	for t := 0; t < h; t++ {
		for i := 0; i < n; i++ {
			w[i] = dot(sig[i*n:(i+1)*n], K)
		}
		kw := dot(K, w)
		var tr float64
		for i := 0; i < n; i++ {
			tr += sig[i*n+i]
		}
		J += QScale*tr + RScale*kw
		v := V[t*n : (t+1)*n]
		mulA(z, v)
		var sv float64
		for _, x := range v {
			sv += x
		}
		for i := range z {
			z[i] += sv * K[i]
		}
		for i := 0; i < n; i++ {
			grad[i] += 2 * (RScale*w[i] + dot(sig[i*n:(i+1)*n], z))
		}
		if t == h-1 {
			break
		}
		mulAA(sig, tmp, n)
		mulA(aw, w)
		for i := 0; i < n; i++ {
			row := sig[i*n : (i+1)*n]
			for j := range row {
				row[j] = row[j] + aw[i] + aw[j] + kw
			}
			row[i] += c2
		}
	}
	return J, grad
}

// mulAA replaces the n×n row-major matrix X by A·X·A, using tmp (n×n) as
// scratch: tmp = X·A row by row (row i of X·A is A·x_i since A is
// symmetric), then X = A·tmp combining rows in ascending order.
func mulAA(X, tmp []float64, n int) {
	for i := 0; i < n; i++ {
		mulA(tmp[i*n:(i+1)*n], X[i*n:(i+1)*n])
	}
	for i := 0; i < n; i++ {
		dst := X[i*n : (i+1)*n]
		mid := tmp[i*n : (i+1)*n]
		switch {
		case n == 1:
			dst[0] = ADiag * mid[0]
		case i == 0:
			below := tmp[n : 2*n]
			for j := range dst {
				dst[j] = ADiag*mid[j] + AOff*below[j]
			}
		case i == n-1:
			above := tmp[(i-1)*n : i*n]
			for j := range dst {
				dst[j] = AOff*above[j] + ADiag*mid[j]
			}
		default:
			above, below := tmp[(i-1)*n:i*n], tmp[(i+1)*n:(i+2)*n]
			for j := range dst {
				dst[j] = AOff*above[j] + ADiag*mid[j] + AOff*below[j]
			}
		}
	}
}

// Encoding (blob.Encoder framing, magic "ZLQR", version 1): n, H (uint64),
// Noise, Tol (float64 bits), x₀* (length-prefixed floats).
const (
	instanceMagic   = "ZLQR"
	instanceVersion = 1
)

// MarshalBinary encodes the instance deterministically.
func (in *Instance) MarshalBinary() ([]byte, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	e := blob.NewEncoder(instanceMagic, instanceVersion)
	e.Uint64(uint64(in.N))
	e.Uint64(uint64(in.H))
	e.Float64(in.Noise)
	e.Float64(in.Tol)
	e.Floats(in.X0)
	return e.Data(), nil
}

// UnmarshalBinary decodes a MarshalBinary blob and validates it as New
// does. Errors wrap ErrFormat (and blob.ErrFormat or blob.ErrVersion for
// framing problems). It never panics; on error the receiver is unchanged.
func (in *Instance) UnmarshalBinary(data []byte) error {
	d := blob.NewDecoder(data, instanceMagic, instanceVersion)
	n, h := d.Uint64(), d.Uint64()
	noise, tol := d.Float64(), d.Float64()
	x0 := d.Floats()
	if err := d.Finish(); err != nil {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if n > MaxDim || h > MaxHorizon {
		return fmt.Errorf("%w: n = %d, H = %d exceed %d, %d", ErrFormat, n, h, MaxDim, MaxHorizon)
	}
	out := Instance{N: int(n), H: int(h), Noise: noise, Tol: tol, X0: x0}
	if err := out.check(); err != nil {
		return err
	}
	*in = out
	return nil
}

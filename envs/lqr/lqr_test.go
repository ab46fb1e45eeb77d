package lqr

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/blob"
	"zorepro/pipeline/blob/blobtest"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

func testSource() stream.Source { return stream.New(75434669, "test/envs/lqr", nil) }

// testInstance returns an n-state, h-step instance with noise c and x₀* from
// a fixed stream.
func testInstance(t testing.TB, n, h int, c float64) *Instance {
	t.Helper()
	in, err := Generate(n, h, c, DefaultTolerance, testSource().Rand("x0", uint64(n)))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// testGain is a fixed gain with entries of both signs, small enough that
// A + BK is stable (|Σ_j K_j| < 0.05) but large enough to matter.
func testGain(n int) []float64 {
	K := make([]float64, n)
	for j := range K {
		K[j] = 0.004*math.Sin(float64(3*j+1)) - 0.0005
	}
	return K
}

func normals(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// relErr returns |a−b| / max(1, |b|).
func relErr(a, b float64) float64 { return math.Abs(a-b) / math.Max(1, math.Abs(b)) }

// ---- dense reference (gonum) ----

// dense holds A, B, Q, R as gonum matrices.
type dense struct {
	n       int
	A, B, Q *mat.Dense
	R       float64
}

func newDense(n int) *dense {
	A := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		A.Set(i, i, ADiag)
		if i > 0 {
			A.Set(i, i-1, AOff)
		}
		if i < n-1 {
			A.Set(i, i+1, AOff)
		}
	}
	B := mat.NewDense(n, 1, nil)
	Q := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		B.Set(i, 0, 1)
		Q.Set(i, i, QScale)
	}
	return &dense{n: n, A: A, B: B, Q: Q, R: RScale}
}

// rollout is the dense trajectory: cost, and x_t at the perturbed step
// (t < 0: none).
func (d *dense) rollout(in *Instance, K, x0, xi []float64, t int, delta float64) (float64, []float64) {
	x := mat.NewVecDense(d.n, slices.Clone(x0))
	k := mat.NewVecDense(d.n, K)
	var cost float64
	var obs []float64
	for s := 0; s < in.H; s++ {
		u := mat.Dot(k, x)
		if s == t {
			u += delta
			obs = slices.Clone(x.RawVector().Data)
		}
		var qx mat.VecDense
		qx.MulVec(d.Q, x)
		cost += mat.Dot(x, &qx) + d.R*u*u
		if s == in.H-1 {
			break
		}
		var nx mat.VecDense
		nx.MulVec(d.A, x)
		for i := 0; i < d.n; i++ {
			nx.SetVec(i, nx.AtVec(i)+u+in.Noise*xi[s*d.n+i])
		}
		x = &nx
	}
	return cost, obs
}

// expected is J and ∇J by the dense recursions with stored P_t (O(n³H)).
func (d *dense) expected(in *Instance, K []float64) (float64, []float64) {
	n, h := d.n, in.H
	Km := mat.NewDense(1, n, slices.Clone(K))
	var M mat.Dense
	M.Mul(d.B, Km)
	M.Add(d.A, &M)
	var S mat.Dense
	S.Mul(Km.T(), Km)
	S.Scale(d.R, &S)
	S.Add(d.Q, &S)
	Ps := make([]*mat.Dense, h+1)
	Ps[h] = mat.NewDense(n, n, nil)
	for t := h - 1; t >= 0; t-- {
		var tmp, p mat.Dense
		tmp.Mul(Ps[t+1], &M)
		p.Mul(M.T(), &tmp)
		p.Add(&p, &S)
		Ps[t] = &p
	}
	sig := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		sig.Set(i, i, 1)
	}
	var J float64
	grad := mat.NewDense(1, n, nil)
	for t := 0; t < h; t++ {
		var ss mat.Dense
		ss.Mul(&S, sig)
		J += mat.Trace(&ss)
		// 2(R K + Bᵀ P_{t+1} M) Σ_t
		var bp, bpm, g mat.Dense
		bp.Mul(d.B.T(), Ps[t+1])
		bpm.Mul(&bp, &M)
		var rk mat.Dense
		rk.Scale(d.R, Km)
		bpm.Add(&bpm, &rk)
		g.Mul(&bpm, sig)
		g.Scale(2, &g)
		grad.Add(grad, &g)
		var tmp, next mat.Dense
		tmp.Mul(sig, M.T())
		next.Mul(&M, &tmp)
		for i := 0; i < n; i++ {
			next.Set(i, i, next.At(i, i)+in.Noise*in.Noise)
		}
		sig = &next
	}
	return J, grad.RawRowView(0)
}

// TestMulABitExact: the O(n) product A·x equals, bit for bit, the dense
// product summed row by row in ascending column order over all n columns
// (the skipped terms are exact zeros, and x + ±0 = x for x ≠ 0). gonum's
// BLAS MulVec sums in another order (unrolled kernels), so it is compared
// within 4 ulp-scale relative error (1e-15). On architectures where the
// compiler fuses multiply-adds (not amd64) the bit-exact comparison is
// relaxed to the same tolerance.
func TestMulABitExact(t *testing.T) {
	for _, n := range []int{1, 2, 3, 100} {
		d := newDense(n)
		x := normals(testSource().Rand("x", uint64(n)), n)
		y := make([]float64, n)
		mulA(y, x)
		var g mat.VecDense
		g.MulVec(d.A, mat.NewVecDense(n, x))
		for i := 0; i < n; i++ {
			var s float64
			for j := 0; j < n; j++ {
				s += d.A.At(i, j) * x[j]
			}
			if runtime.GOARCH == "amd64" {
				if math.Float64bits(s) != math.Float64bits(y[i]) {
					t.Errorf("n=%d row %d: fast %v, dense loop %v", n, i, y[i], s)
				}
			} else if relErr(y[i], s) > 1e-15 {
				t.Errorf("n=%d row %d: fast %v, dense loop %v", n, i, y[i], s)
			}
			if relErr(y[i], g.AtVec(i)) > 1e-15 {
				t.Errorf("n=%d row %d: fast %v, gonum %v", n, i, y[i], g.AtVec(i))
			}
		}
	}
}

// TestMulAABitExact: A·X·A by the structured path equals the dense loops
// (X·A, then A·(X·A), each summed in ascending index order) bit for bit on
// amd64.
func TestMulAABitExact(t *testing.T) {
	for _, n := range []int{1, 2, 5, 40} {
		d := newDense(n)
		X := normals(testSource().Rand("X", uint64(n)), n*n)
		got := slices.Clone(X)
		mulAA(got, make([]float64, n*n), n)
		xa := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for k := 0; k < n; k++ {
					s += X[i*n+k] * d.A.At(k, j)
				}
				xa[i*n+j] = s
			}
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				var s float64
				for k := 0; k < n; k++ {
					s += d.A.At(i, k) * xa[k*n+j]
				}
				ok := math.Float64bits(s) == math.Float64bits(got[i*n+j])
				if runtime.GOARCH != "amd64" {
					ok = relErr(got[i*n+j], s) <= 1e-15
				}
				if !ok {
					t.Fatalf("n=%d (%d,%d): fast %v, dense %v", n, i, j, got[i*n+j], s)
				}
			}
		}
	}
}

// TestRolloutMatchesTrajectory: a Rollout equals TrajectoryCost on the same
// draws (x₀ first, then ξ_0..ξ_{H−2}) bit for bit, and the dense gonum
// trajectory within 1e-12 relative (the BLAS sums in another order; over H
// steps the roundoff grows by at most a few hundred ulps with a stable
// gain). The perturbed rollout adds delta to u_t and reports x_t.
func TestRolloutMatchesTrajectory(t *testing.T) {
	in := testInstance(t, 100, 100, 0.1)
	d := newDense(in.N)
	K := testGain(in.N)
	draws := func() (*rand.Rand, []float64, []float64) {
		rng := testSource().Rand("episode")
		return testSource().Rand("episode"), normals(rng, in.N), normals(rng, in.NoiseLen())
	}

	rng, x0, xi := draws()
	ret, err := in.Rollout(rng, K, -1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := in.TrajectoryCost(K, x0, xi)
	if math.Float64bits(ret) != math.Float64bits(-c) {
		t.Errorf("Rollout = %v, −TrajectoryCost = %v", ret, -c)
	}
	dc, _ := d.rollout(in, K, x0, xi, -1, 0)
	if relErr(c, dc) > 1e-12 {
		t.Errorf("cost %v, dense %v", c, dc)
	}

	for _, tk := range []int{0, 37, in.H - 1} {
		rng, x0, xi := draws()
		obs := make([]float64, in.N)
		ret, err := in.Rollout(rng, K, tk, []float64{0.7}, obs)
		if err != nil {
			t.Fatal(err)
		}
		dc, dobs := d.rollout(in, K, x0, xi, tk, 0.7)
		if relErr(-ret, dc) > 1e-12 {
			t.Errorf("t=%d: return %v, dense cost %v", tk, ret, dc)
		}
		for i := range obs {
			if relErr(obs[i], dobs[i]) > 1e-12 {
				t.Fatalf("t=%d: obs[%d] = %v, dense %v", tk, i, obs[i], dobs[i])
			}
		}
		if tk == 0 && !slices.Equal(obs, x0) {
			t.Errorf("t=0: obs is not x₀")
		}
	}
}

// TestAdjointFiniteDifferences: the adjoint gradient against central
// differences of TrajectoryCost with the noise held fixed, at n = H = 100,
// c = 0.01 and the fixed gain testGain. C is a polynomial in K; with
// h = 1e-6 the truncation error is O(h²·|∂³C|) ≈ 1e-10 and the roundoff
// O(ε·C/h) ≈ 1e-9 for C ≈ 10, so each coordinate must agree within
// 1e-6·max(1, ‖G‖_∞) and ‖G‖² within 1e-6 relative. (The spec quotes
// 0.288386182 against 0.288386182 for its case.)
func TestAdjointFiniteDifferences(t *testing.T) {
	in := testInstance(t, 100, 100, 0.01)
	K := testGain(in.N)
	xi := normals(testSource().Rand("xi"), in.NoiseLen())
	_, G := in.TrajectoryGrad(K, in.X0, xi)
	var gmax float64
	for _, g := range G {
		gmax = max(gmax, math.Abs(g))
	}
	const h = 1e-6
	fd := make([]float64, in.N)
	Kp := slices.Clone(K)
	for j := range K {
		Kp[j] = K[j] + h
		cp := in.TrajectoryCost(Kp, in.X0, xi)
		Kp[j] = K[j] - h
		cm := in.TrajectoryCost(Kp, in.X0, xi)
		Kp[j] = K[j]
		fd[j] = (cp - cm) / (2 * h)
		if math.Abs(fd[j]-G[j]) > 1e-6*math.Max(1, gmax) {
			t.Errorf("∂C/∂K[%d]: adjoint %v, finite differences %v", j, G[j], fd[j])
		}
	}
	g2, f2 := dot(G, G), dot(fd, fd)
	t.Logf("‖G‖² adjoint %.9f, finite differences %.9f", g2, f2)
	if math.Abs(g2-f2) > 1e-6*g2 {
		t.Errorf("‖G‖²: adjoint %v, finite differences %v", g2, f2)
	}
}

// TestAdjointDense: the adjoint recursion against the same recursion with
// dense gonum matrices ((A + BK)ᵀλ by MulVec), within 1e-12 relative of
// ‖G‖_∞ (summation order only).
func TestAdjointDense(t *testing.T) {
	in := testInstance(t, 50, 60, 0.05)
	d := newDense(in.N)
	K := testGain(in.N)
	xi := normals(testSource().Rand("xi"), in.NoiseLen())
	_, G := in.TrajectoryGrad(K, in.X0, xi)

	n := in.N
	xs := make([]*mat.VecDense, in.H)
	us := make([]float64, in.H)
	x := mat.NewVecDense(n, slices.Clone(in.X0))
	k := mat.NewVecDense(n, K)
	for s := 0; s < in.H; s++ {
		xs[s] = x
		us[s] = mat.Dot(k, x)
		if s == in.H-1 {
			break
		}
		var nx mat.VecDense
		nx.MulVec(d.A, x)
		for i := 0; i < n; i++ {
			nx.SetVec(i, nx.AtVec(i)+us[s]+in.Noise*xi[s*n+i])
		}
		x = &nx
	}
	var M mat.Dense
	M.Mul(d.B, mat.NewDense(1, n, slices.Clone(K)))
	M.Add(d.A, &M)
	lam := mat.NewVecDense(n, nil)
	want := mat.NewVecDense(n, nil)
	for s := in.H - 1; s >= 0; s-- {
		var bl mat.VecDense
		bl.MulVec(d.B.T(), lam)
		want.AddScaledVec(want, 2*d.R*us[s]+bl.AtVec(0), xs[s])
		var next, qx mat.VecDense
		next.MulVec(M.T(), lam)
		qx.MulVec(d.Q, xs[s])
		next.AddScaledVec(&next, 2, &qx)
		next.AddScaledVec(&next, 2*d.R*us[s], k)
		lam = &next
	}
	var gmax float64
	for _, g := range G {
		gmax = max(gmax, math.Abs(g))
	}
	for j := range G {
		if math.Abs(G[j]-want.AtVec(j)) > 1e-12*math.Max(1, gmax) {
			t.Errorf("G[%d] = %v, dense %v", j, G[j], want.AtVec(j))
		}
	}
}

// TestExpectedDense: the structured O(n²H) recursions against the dense
// O(n³H) ones with gonum (stored P_t), within 1e-10 relative: the two sum
// in different orders, and over H = 100 steps of covariance propagation
// roundoff accumulates to ~1e-13 relative; 1e-10 leaves ample margin while
// still catching any wrong term (those show up at 1e-3 or more).
func TestExpectedDense(t *testing.T) {
	for _, c := range []float64{0, 0.1, 0.5} {
		in := testInstance(t, 30, 100, c)
		d := newDense(in.N)
		K := testGain(in.N)
		J, g := in.Expected(K)
		dJ, dg := d.expected(in, K)
		if relErr(J, dJ) > 1e-10 {
			t.Errorf("c=%v: J = %v, dense %v", c, J, dJ)
		}
		var gmax float64
		for _, v := range dg {
			gmax = max(gmax, math.Abs(v))
		}
		for j := range g {
			if math.Abs(g[j]-dg[j]) > 1e-10*math.Max(1, gmax) {
				t.Errorf("c=%v: ∇J[%d] = %v, dense %v", c, j, g[j], dg[j])
			}
		}
	}
}

// TestExpectedGradFiniteDifferences: ∇J against central differences of the
// closed-form J (h = 1e-5, J ≈ 0.2..20): truncation O(h²) ≈ 1e-10,
// roundoff O(ε·J/h) ≈ 1e-9, so 1e-6·max(1, ‖∇J‖_∞) per coordinate. To keep
// the test fast under -race it runs at n = 40 (the recursions do not
// depend on n = 100; TestExpectedDense and TestExpectedMonteCarlo cover
// n = 30 and 100) on every fifth coordinate.
func TestExpectedGradFiniteDifferences(t *testing.T) {
	for _, c := range []float64{0.01, 0.5} {
		in := testInstance(t, 40, 100, c)
		K := testGain(in.N)
		_, g := in.Expected(K)
		var gmax float64
		for _, v := range g {
			gmax = max(gmax, math.Abs(v))
		}
		const h = 1e-5
		Kp := slices.Clone(K)
		for j := 0; j < in.N; j += 5 {
			Kp[j] = K[j] + h
			jp, _ := in.Expected(Kp)
			Kp[j] = K[j] - h
			jm, _ := in.Expected(Kp)
			Kp[j] = K[j]
			fd := (jp - jm) / (2 * h)
			if math.Abs(fd-g[j]) > 1e-6*math.Max(1, gmax) {
				t.Errorf("c=%v: ∂J/∂K[%d] = %v, finite differences %v", c, j, g[j], fd)
			}
		}
	}
}

// TestExpectedMonteCarlo: J(K) against the mean cost of M = 1000 rollouts
// (fresh x₀ ~ N(0, I) and noise). The tolerance is 4 standard errors,
// 4·s/√M with s the sample standard deviation of the episode costs: a
// correct J fails with probability ≈ 6e-5 per draw (the streams are fixed,
// so the test is deterministic). Also at K = 0 and c = 0, where J has the
// closed form q·Σ_t tr(A^{2t}).
func TestExpectedMonteCarlo(t *testing.T) {
	const m = 1000
	for _, c := range []float64{0, 0.3} {
		in := testInstance(t, 100, 100, c)
		K := testGain(in.N)
		J, _ := in.Expected(K)
		src := testSource()
		var sum, sumSq float64
		for e := 0; e < m; e++ {
			r, err := in.Rollout(src.Rand("mc", uint64(e)), K, -1, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum += -r
			sumSq += r * r
		}
		mean := sum / m
		s := math.Sqrt((sumSq - m*mean*mean) / (m - 1))
		se := s / math.Sqrt(m)
		t.Logf("c=%v: J = %.6f, Monte Carlo %.6f ± %.6f (s = %.4f)", c, J, mean, se, s)
		if math.Abs(mean-J) > 4*se {
			t.Errorf("c=%v: J = %v, Monte Carlo mean %v, |Δ| > 4·%v", c, J, mean, se)
		}
	}

	in := testInstance(t, 100, 100, 0)
	J, _ := in.Expected(make([]float64, in.N))
	d := newDense(in.N)
	pow := mat.NewDense(in.N, in.N, nil)
	for i := 0; i < in.N; i++ {
		pow.Set(i, i, 1)
	}
	var want float64
	for s := 0; s < in.H; s++ {
		want += QScale * mat.Trace(pow) // tr(A^{2s})
		var a2 mat.Dense
		a2.Mul(d.A, d.A)
		pow.Mul(pow, &a2)
	}
	if relErr(J, want) > 1e-12 {
		t.Errorf("K=0, c=0: J = %v, q·Σ tr(A^{2t}) = %v", J, want)
	}
}

// TestSanityK0 checks the §5.2 sanity values loosely: the median of
// ‖G‖²_F at K = 0 over 41 random x₀ (fresh noise each) is within a factor 3
// of ≈19 (c = 1e-4), ≈24 (c = 1e-2), ≈40 (c = 0.1) and ≈1e4 (c = 0.5). The
// spec's numbers are medians over 20 draws of a heavy-tailed statistic
// (range 0.24–270 at c = 1e-4), so only the order of magnitude is checked.
func TestSanityK0(t *testing.T) {
	want := map[float64]float64{1e-4: 19, 1e-2: 24, 0.1: 40, 0.5: 1e4}
	src := stream.New(1, "test/envs/lqr/sanity", nil)
	for _, c := range []float64{1e-4, 1e-2, 0.1, 0.5} {
		in := testInstance(t, 100, 100, c)
		K := make([]float64, in.N)
		var g2 []float64
		for r := 0; r < 41; r++ {
			copy(in.X0, normals(src.Rand("x0", uint64(r)), in.N))
			v, _, _ := in.Stationarity(K, src.Rand("xi", uint64(r)))
			g2 = append(g2, v)
		}
		slices.Sort(g2)
		med := g2[len(g2)/2]
		t.Logf("c=%v: median ‖G‖² = %.4g (range %.3g–%.3g), spec ≈ %g", c, med, g2[0], g2[len(g2)-1], want[c])
		if med < want[c]/3 || med > want[c]*3 {
			t.Errorf("c=%v: median ‖G‖² = %v, want within a factor 3 of %v", c, med, want[c])
		}
	}
}

// TestConverged: the hook computes Stationarity with the given rng,
// compares with Tol, and reports the exact expected ‖∇J‖² and J.
func TestConverged(t *testing.T) {
	in := testInstance(t, 100, 100, 0.01)
	K := testGain(in.N)
	g2, _, _ := in.Stationarity(K, testSource().Rand("check"))
	for _, tol := range []float64{g2 / 2, g2 * 2} {
		in.Tol = tol
		if _, plain, _ := in.Converged(K, testSource().Rand("check"), false); len(plain) != 1 || plain[0].Value != g2 {
			t.Errorf("without diagnostics: metrics %v, want grad_sq %v only", plain, g2)
		}
		done, ms, err := in.Converged(K, testSource().Rand("check"), true)
		if err != nil || done != (g2 < tol) || len(ms) != 3 || ms[0].Name != MetricGradSq || ms[0].Value != g2 {
			t.Errorf("tol %v: Converged = %v, %v, %v; want %v, grad_sq %v", tol, done, ms, err, g2 < tol, g2)
		}
		// The diagnostics are the exact expected gradient and cost.
		J, grad := in.Expected(K)
		var e2 float64
		for _, g := range grad {
			e2 += g * g
		}
		if ms[1].Name != MetricExpGradSq || ms[1].Value != e2 || ms[2].Name != MetricExpCost || ms[2].Value != J {
			t.Errorf("diagnostics = %v, want exp_grad_sq %v exp_cost %v", ms[1:], e2, J)
		}
	}
}

// TestEncoding: round trip, determinism, and rejection of malformed blobs.
func TestEncoding(t *testing.T) {
	in := testInstance(t, 7, 13, 0.05)
	out, b := blobtest.RoundTrip(t, in)
	if out.N != 7 || out.H != 13 || out.Noise != 0.05 || out.Tol != DefaultTolerance || !slices.Equal(out.X0, in.X0) {
		t.Fatalf("round trip: %+v", out)
	}
	bad := func(name string, f func(*Instance)) {
		c := *in
		c.X0 = slices.Clone(in.X0)
		f(&c)
		e := blob.NewEncoder(instanceMagic, instanceVersion)
		e.Uint64(uint64(c.N))
		e.Uint64(uint64(c.H))
		e.Float64(c.Noise)
		e.Float64(c.Tol)
		e.Floats(c.X0)
		var o Instance
		if err := o.UnmarshalBinary(e.Data()); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", name, err)
		}
	}
	bad("n mismatch", func(c *Instance) { c.N = 8 })
	bad("H = 0", func(c *Instance) { c.H = 0 })
	bad("H huge", func(c *Instance) { c.H = MaxHorizon + 1 })
	bad("negative noise", func(c *Instance) { c.Noise = -1 })
	bad("NaN noise", func(c *Instance) { c.Noise = math.NaN() })
	bad("zero tol", func(c *Instance) { c.Tol = 0 })
	bad("Inf x0", func(c *Instance) { c.X0[2] = math.Inf(1) })
	for i := 0; i < len(b); i++ {
		var o Instance
		if err := o.UnmarshalBinary(b[:i]); !errors.Is(err, ErrFormat) {
			t.Fatalf("truncated at %d: err = %v", i, err)
		}
	}
	var o Instance
	if err := o.UnmarshalBinary(append(slices.Clone(b), 0)); !errors.Is(err, ErrFormat) {
		t.Errorf("trailing byte: err = %v", err)
	}
	v := slices.Clone(b)
	v[4] = 9
	if err := o.UnmarshalBinary(v); !errors.Is(err, blob.ErrVersion) {
		t.Errorf("version 9: err = %v", err)
	}
}

// TestPlanGenerate: parameters and defaults; x₀* is the first n draws of
// stream "x0star" under (seed, X0Scope), whatever the task's scope, so two
// noise levels of one seed share it.
func TestPlanGenerate(t *testing.T) {
	gen := func(vals map[string]any, scope string) *Instance {
		p := task.NewParams("dag.yaml", "generate/lqr", vals)
		g := Env{}.PlanGenerate(p)
		if err := p.Err(); err != nil {
			t.Fatal(err)
		}
		b, err := g(stream.New(75434669, scope, nil))
		if err != nil {
			t.Fatal(err)
		}
		inst, err := Env{}.Load(b)
		if err != nil {
			t.Fatal(err)
		}
		return inst
	}
	a := gen(map[string]any{"noise": 0.01}, "generate/lqr/noise=0.01/seed=75434669")
	b := gen(map[string]any{"noise": 0.5}, "generate/lqr/noise=0.5/seed=75434669")
	if a.N != DefaultDim || a.H != DefaultHorizon || a.Noise != 0.01 || a.Tol != DefaultTolerance || b.Noise != 0.5 {
		t.Fatalf("parameters: %+v, %+v", a, b)
	}
	want := normals(stream.New(75434669, X0Scope, nil).Rand("x0star"), DefaultDim)
	if !slices.Equal(a.X0, want) || !slices.Equal(b.X0, want) {
		t.Fatal("x₀* is not the first n draws of x0star under (seed, X0Scope)")
	}
	c := gen(map[string]any{"noise": 0.1, "n": 10, "horizon": 20, "tolerance": 1}, "x")
	if c.N != 10 || c.H != 20 || c.Tol != 1 || !slices.Equal(c.X0, want[:10]) {
		t.Fatalf("explicit parameters: %+v", c)
	}
	p := task.NewParams("dag.yaml", "generate/lqr", map[string]any{"noise": 0, "n": 0, "horizon": -1, "bogus": 1})
	Env{}.PlanGenerate(p)
	if err := p.Err(); err == nil {
		t.Fatal("invalid parameters accepted")
	} else {
		t.Log(err)
	}
}

// TestEvaluate: the metrics are Stationarity from the given rng and
// Expected; a snapshot of the wrong length is ErrSnapshot.
func TestEvaluate(t *testing.T) {
	in := testInstance(t, 100, 100, 0.01)
	K := testGain(in.N)
	got, err := Env{}.Evaluate(in, K, trajectory.Header{}, testSource().Rand("eval"))
	if err != nil {
		t.Fatal(err)
	}
	g2, _, _ := in.Stationarity(K, testSource().Rand("eval"))
	J, g := in.Expected(K)
	if want := []float64{g2, dot(g, g), J}; !slices.Equal(got, want) || len(Env{}.Metrics()) != 3 {
		t.Fatalf("Evaluate = %v, want %v", got, want)
	}
	if _, err := (Env{}).Evaluate(in, K[:5], trajectory.Header{}, testSource().Rand("eval")); !errors.Is(err, ErrSnapshot) {
		t.Fatalf("short snapshot: err = %v", err)
	}
}

// BenchmarkLQRSteps measures environment steps per second: one op is one
// episode of H = 100 steps at n = 100.
func BenchmarkLQRSteps(b *testing.B) {
	in := testInstance(b, DefaultDim, DefaultHorizon, 0.01)
	K := testGain(in.N)
	rng := testSource().Rand("bench")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := in.Rollout(rng, K, -1, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*in.H)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkStationarity is one stop-rule check (O(nH)).
func BenchmarkStationarity(b *testing.B) {
	in := testInstance(b, DefaultDim, DefaultHorizon, 0.01)
	K := testGain(in.N)
	rng := testSource().Rand("bench")
	for i := 0; i < b.N; i++ {
		in.Stationarity(K, rng)
	}
}

// BenchmarkExpected is one exact J and ∇J (O(n²H)).
func BenchmarkExpected(b *testing.B) {
	in := testInstance(b, DefaultDim, DefaultHorizon, 0.01)
	K := testGain(in.N)
	for i := 0; i < b.N; i++ {
		in.Expected(K)
	}
}

package linreg

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"zorepro/envs/linreg/fma"
	"zorepro/pipeline/trajectory"
)

// NoiseStd is the standard deviation of the per-batch label noise ξ (§3.1.3).
const NoiseStd = 0.001

// NoiseVar is NoiseStd², written as the literal the spec uses (10⁻⁶), so that
// PopulationLoss(w*) is exactly ½·10⁻⁶.
const NoiseVar = 1e-6

// Instance is one problem instance of §3.1.
//
// The fields are exported for inspection and serialization; treat them as
// read-only. An Instance is safe for concurrent use by readers (every method
// only reads it).
type Instance struct {
	// D is the input dimension d (number of non-bias features). The length
	// of x and w is Dim() = D+1; coordinate 0 is the bias.
	D int
	// WStar is the true weight vector w* (length Dim).
	WStar []float64
	// Factor is the Dim×Dim matrix U·diag(√λ′): z = Factor·ε ~ N(0, C) for
	// ε ~ N(0, I), with C = Factor·Factorᵀ = U·diag(λ′)·Uᵀ. Column j is the
	// eigenvector of the j-th largest eigenvalue of C0 = MᵀM scaled by √λ′_j.
	Factor *mat.Dense
	// Lambda holds λ′ (length Dim) in the column order of Factor: the
	// eigenvalues of C0 sorted descending, the first ⌊d/2⌋ doubled, the rest
	// halved, and any negative value (roundoff) clamped to 0.
	Lambda []float64

	// packed is Factor packed for Correlate, made by Generate and
	// UnmarshalBinary; nil for an Instance built field by field.
	packed *fma.Packed
	// share is set on a copy that draws its training batches through a
	// cohort (WithSharer).
	share *sharing
}

// Generate draws an instance with input dimension d ≥ 1 from rng, exactly as
// §3.1:
//
//  1. w* = N(0, I_Dim)/√Dim: Dim draws.
//  2. M: Dim×Dim iid N(0,1), drawn row-major (M[0][0], M[0][1], ...).
//  3. C0 = MᵀM; its symmetric eigendecomposition (LAPACK dsyev through
//     mat.EigenSym); eigenpairs sorted by eigenvalue descending (ties keep
//     LAPACK's order); the first ⌊d/2⌋ eigenvalues doubled and the remaining
//     Dim−⌊d/2⌋ halved. An eigenvalue that roundoff made negative is clamped
//     to 0 before the square root (C0 is positive semi-definite).
//
// It panics if d < 1 or if the eigendecomposition fails to converge (which
// LAPACK reports only for non-finite input).
func Generate(d int, rng *rand.Rand) *Instance {
	if d < 1 {
		panic(fmt.Sprintf("linreg: Generate: input dimension %d < 1", d))
	}
	dim := d + 1
	sq := math.Sqrt(float64(dim))
	wstar := make([]float64, dim)
	for i := range wstar {
		wstar[i] = rng.NormFloat64() / sq
	}
	m := mat.NewDense(dim, dim, nil)
	for i := 0; i < dim; i++ {
		row := m.RawRowView(i)
		for j := range row {
			row[j] = rng.NormFloat64()
		}
	}
	c0 := mat.NewSymDense(dim, nil)
	c0.SymOuterK(1, m.T()) // Mᵀ·(Mᵀ)ᵀ = MᵀM
	var eig mat.EigenSym
	if !eig.Factorize(c0, true) {
		panic("linreg: Generate: eigendecomposition of MᵀM did not converge")
	}
	vals := eig.Values(nil)
	var u mat.Dense
	eig.VectorsTo(&u)

	order := make([]int, dim)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(vals[b], vals[a]) })

	half := d / 2
	lambda := make([]float64, dim)
	for j, k := range order {
		l := vals[k]
		if j < half {
			l *= 2
		} else {
			l /= 2
		}
		if l < 0 {
			l = 0
		}
		lambda[j] = l
	}
	factor := mat.NewDense(dim, dim, nil)
	for j, k := range order {
		r := math.Sqrt(lambda[j])
		for i := 0; i < dim; i++ {
			factor.Set(i, j, u.At(i, k)*r)
		}
	}
	return &Instance{D: d, WStar: wstar, Factor: factor, Lambda: lambda, packed: fma.Pack(factor)}
}

// Dim returns D+1, the length of a feature row and of w (with the bias).
// With Batch it makes *Instance satisfy the Problem interfaces of the
// optimizers (algos/sgd, algos/ars).
func (in *Instance) Dim() int { return in.D + 1 }

// Batch fills the n = rows(X) examples of one batch into X (n×Dim) and y
// (length n), drawing from rng in this order:
//
//  1. ε: n×Dim standard normals, row-major;
//  2. ξ: one standard normal, scaled by NoiseStd, shared by the whole batch.
//
// Then z = ε·Factorᵀ (Correlate; each row is Factor·ε_i), x = z/√d with d
// the input dimension (not Dim), x[0] = 1, and y = X·w* + ξ (BLAS dgemv).
// It panics if X does not have Dim columns or len(y) != rows(X).
func (in *Instance) Batch(rng *rand.Rand, X *mat.Dense, y []float64) {
	n, c := X.Dims()
	if c != in.Dim() || len(y) != n {
		panic(fmt.Sprintf("linreg: Batch: X is %d×%d and len(y) = %d, want n×%d and n", n, c, len(y), in.Dim()))
	}
	eps := mat.NewDense(n, in.Dim(), nil)
	for i := 0; i < n; i++ {
		row := eps.RawRowView(i)
		for j := range row {
			row[j] = rng.NormFloat64()
		}
	}
	xi := rng.NormFloat64() * NoiseStd

	in.Correlate(eps, X)
	sqd := math.Sqrt(float64(in.D))
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		for j := range row {
			row[j] /= sqd
		}
		row[0] = 1
	}
	yv := mat.NewVecDense(n, y)
	yv.MulVec(X, mat.NewVecDense(in.Dim(), in.WStar))
	for i := range y {
		y[i] += xi
	}
}

// Correlate sets Z = E·Factorᵀ: row i of Z is Factor·ε_i, a draw from
// N(0, C) when ε_i ~ N(0, I). Each element is one fused multiply–add chain
// over the columns of Factor in index order (package fma), so the bits do
// not depend on the machine or the number of cores. E and Z are n×Dim and
// must not share memory; it panics otherwise.
func (in *Instance) Correlate(E, Z *mat.Dense) {
	p := in.packed
	if p == nil { // an Instance built field by field
		p = fma.Pack(in.Factor)
	}
	p.MulT(E, Z)
}

// NewBatch allocates and fills a batch of n ≥ 1 examples (see Batch).
func (in *Instance) NewBatch(rng *rand.Rand, n int) (*mat.Dense, []float64) {
	X := mat.NewDense(n, in.Dim(), nil)
	y := make([]float64, n)
	in.Batch(rng, X, y)
	return X, y
}

// InitialWeights draws the initial parameters w0 = 5·N(0, I_Dim)/√Dim of
// §3.1.7: Dim draws, each computed as (5·n)/√Dim.
func (in *Instance) InitialWeights(rng *rand.Rand) []float64 {
	sq := math.Sqrt(float64(in.Dim()))
	w := make([]float64, in.Dim())
	for i := range w {
		w[i] = 5 * rng.NormFloat64() / sq
	}
	return w
}

// Loss returns the ½·MSE of w on a batch: (1/n)·Σ_i ½(x_i·w − y_i)². The
// predictions are X·w (BLAS dgemv); the sum runs in row order. It panics on
// mismatched dimensions.
func Loss(w []float64, X *mat.Dense, y []float64) float64 {
	n, c := X.Dims()
	if len(w) != c || len(y) != n {
		panic(fmt.Sprintf("linreg: Loss: X is %d×%d, len(w) = %d, len(y) = %d", n, c, len(w), len(y)))
	}
	pred := make([]float64, n)
	mat.NewVecDense(n, pred).MulVec(X, mat.NewVecDense(c, w))
	return halfMSE(pred, y)
}

// halfMSE is (1/n)·Σ_i ½(pred_i − y_i)², summed in index order.
func halfMSE(pred, y []float64) float64 {
	var sum float64
	for i, p := range pred {
		e := p - y[i]
		sum += 0.5 * e * e
	}
	return sum / float64(len(pred))
}

// PopulationLoss returns the exact expected per-example loss of raw weights w
// under the instance's distribution (spec §6.14):
//
//	½·(w−w*)ᵀ Σ_x (w−w*) + ½·NoiseVar,  Σ_x = [[1, 0], [0, C[1:,1:]/d]].
//
// It is computed without forming Σ_x as ½·(e₀² + ‖Factor[1:,:]ᵀ·e[1:]‖²/d) +
// ½·NoiseVar with e = w − w*, which costs O(Dim²) and is never negative. The
// shared per-batch noise does not change the expectation. PopulationLoss(w*)
// is exactly ½·NoiseVar. It panics if len(w) != Dim.
func (in *Instance) PopulationLoss(w []float64) float64 {
	if len(w) != in.Dim() {
		panic(fmt.Sprintf("linreg: PopulationLoss: len(w) = %d, want %d", len(w), in.Dim()))
	}
	e := make([]float64, in.Dim())
	for i := range e {
		e[i] = w[i] - in.WStar[i]
	}
	q := e[0] * e[0]
	if in.D > 0 {
		u := mat.NewVecDense(in.Dim(), nil)
		fs := in.Factor.Slice(1, in.Dim(), 0, in.Dim())
		u.MulVec(fs.T(), mat.NewVecDense(in.D, e[1:]))
		q += mat.Dot(u, u) / float64(in.D)
	}
	return 0.5*q + 0.5*NoiseVar
}

// Covariance returns C = Factor·Factorᵀ, the covariance of the unscaled rows z.
func (in *Instance) Covariance() *mat.SymDense {
	c := mat.NewSymDense(in.Dim(), nil)
	c.SymOuterK(1, in.Factor)
	return c
}

// SigmaX returns Σ_x = E[xxᵀ] = [[1, 0], [0, C[1:,1:]/d]], the second-moment
// matrix of a feature row including the bias.
func (in *Instance) SigmaX() *mat.SymDense {
	c := in.Covariance()
	s := mat.NewSymDense(in.Dim(), nil)
	s.SetSym(0, 0, 1)
	for i := 1; i < in.Dim(); i++ {
		for j := i; j < in.Dim(); j++ {
			s.SetSym(i, j, c.At(i, j)/float64(in.D))
		}
	}
	return s
}

// SnapshotLen returns the length of a snapshot in the given layout, or an
// ErrLayout error.
func (in *Instance) SnapshotLen(layout trajectory.Layout) (int, error) {
	switch layout {
	case trajectory.Raw:
		return in.Dim(), nil
	case trajectory.Normalized:
		return in.Dim() + 2*in.D, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrLayout, layout)
}

func (in *Instance) checkSnapshot(layout trajectory.Layout, snap []float64) error {
	n, err := in.SnapshotLen(layout)
	if err != nil {
		return err
	}
	if len(snap) != n {
		return fmt.Errorf("%w: layout %q at d = %d needs %d values, got %d", ErrSnapshot, layout, in.D, n, len(snap))
	}
	return nil
}

// EvalSnapshot returns the ½·MSE on the batch (X, y) of the predictor stored
// in snap with the given layout: for trajectory.Raw it equals Loss(snap, X, y)
// bit for bit; for trajectory.Normalized the prediction of row x is z·w with
// z = [1, (x[1:]−μ)/s] (μ, s taken from the snapshot, i.e. the statistics
// current when it was taken), summed over coordinates in index order.
//
// An unknown layout or a snapshot of the wrong length is a returned error
// (snapshots come from decoded artifacts); X and y must match Dim (panic).
func (in *Instance) EvalSnapshot(layout trajectory.Layout, snap []float64, X *mat.Dense, y []float64) (float64, error) {
	if err := in.checkSnapshot(layout, snap); err != nil {
		return 0, err
	}
	if layout == trajectory.Raw {
		return Loss(snap, X, y), nil
	}
	n, c := X.Dims()
	if c != in.Dim() || len(y) != n {
		panic(fmt.Sprintf("linreg: EvalSnapshot: X is %d×%d and len(y) = %d, want n×%d and n", n, c, len(y), in.Dim()))
	}
	dim := in.Dim()
	w, mu, s := snap[:dim], snap[dim:dim+in.D], snap[dim+in.D:]
	pred := make([]float64, n)
	for i := range pred {
		x := X.RawRowView(i)
		p := w[0] // z[0] = 1
		for j := 1; j < dim; j++ {
			p += (x[j] - mu[j-1]) / s[j-1] * w[j]
		}
		pred[i] = p
	}
	return halfMSE(pred, y), nil
}

// RawWeights maps a snapshot to weights on raw features x. For trajectory.Raw it
// returns a copy of snap. For trajectory.Normalized (w ‖ μ ‖ s) it returns w̃ with
// w̃_j = w_j/s_j for j ≥ 1 and w̃_0 = w_0 − Σ_j w_j·μ_j/s_j (sum in index
// order), so that x·w̃ = z·w.
func (in *Instance) RawWeights(layout trajectory.Layout, snap []float64) ([]float64, error) {
	if err := in.checkSnapshot(layout, snap); err != nil {
		return nil, err
	}
	if layout == trajectory.Raw {
		return slices.Clone(snap), nil
	}
	dim := in.Dim()
	w, mu, s := snap[:dim], snap[dim:dim+in.D], snap[dim+in.D:]
	out := make([]float64, dim)
	b := w[0]
	for j := 1; j < dim; j++ {
		out[j] = w[j] / s[j-1]
		b -= w[j] * mu[j-1] / s[j-1]
	}
	out[0] = b
	return out, nil
}

// PopulationLossSnapshot is PopulationLoss of RawWeights(layout, snap).
func (in *Instance) PopulationLossSnapshot(layout trajectory.Layout, snap []float64) (float64, error) {
	w, err := in.RawWeights(layout, snap)
	if err != nil {
		return 0, err
	}
	return in.PopulationLoss(w), nil
}

// Encoding (version 1), all integers and floats little-endian, floats as
// their IEEE-754 bits:
//
//	"ZLRI" | uint32 version | uint64 d | uint64 Dim |
//	WStar [Dim]float64 | Lambda [Dim]float64 | Factor [Dim·Dim]float64 row-major
const (
	instanceMagic   = "ZLRI"
	instanceVersion = 1
	headerLen       = 4 + 4 + 8 + 8
	// maxDim bounds Dim in decoding so sizes cannot overflow.
	maxDim = 1 << 16
)

// MarshalBinary encodes the instance deterministically (see the encoding
// comment above). It never fails for an instance made by Generate or
// UnmarshalBinary; it returns ErrFormat for inconsistent dimensions.
func (in *Instance) MarshalBinary() ([]byte, error) {
	if in.D < 1 || in.Dim() > maxDim || len(in.WStar) != in.Dim() || len(in.Lambda) != in.Dim() || in.Factor == nil {
		return nil, fmt.Errorf("%w: inconsistent instance dimensions", ErrFormat)
	}
	if r, c := in.Factor.Dims(); r != in.Dim() || c != in.Dim() {
		return nil, fmt.Errorf("%w: Factor is %d×%d, want %d×%d", ErrFormat, r, c, in.Dim(), in.Dim())
	}
	b := make([]byte, 0, headerLen+8*(2*in.Dim()+in.Dim()*in.Dim()))
	b = append(b, instanceMagic...)
	b = binary.LittleEndian.AppendUint32(b, instanceVersion)
	b = binary.LittleEndian.AppendUint64(b, uint64(in.D))
	b = binary.LittleEndian.AppendUint64(b, uint64(in.Dim()))
	put := func(v float64) { b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v)) }
	for _, v := range in.WStar {
		put(v)
	}
	for _, v := range in.Lambda {
		put(v)
	}
	for i := 0; i < in.Dim(); i++ {
		for _, v := range in.Factor.RawRowView(i) {
			put(v)
		}
	}
	return b, nil
}

// UnmarshalBinary decodes an encoding made by MarshalBinary. It checks the
// magic, the version (ErrVersion), Dim = d+1 with 1 ≤ d < 2¹⁶, the exact
// length, that all values are finite and that Lambda is non-negative
// (ErrFormat). On error the receiver is left unchanged. It never panics.
func (in *Instance) UnmarshalBinary(data []byte) error {
	if len(data) < headerLen {
		return fmt.Errorf("%w: %d bytes is shorter than the %d-byte header", ErrFormat, len(data), headerLen)
	}
	if string(data[:4]) != instanceMagic {
		return fmt.Errorf("%w: bad magic %q", ErrFormat, data[:4])
	}
	if v := binary.LittleEndian.Uint32(data[4:8]); v != instanceVersion {
		return fmt.Errorf("%w: version %d, this build reads %d", ErrVersion, v, instanceVersion)
	}
	d := binary.LittleEndian.Uint64(data[8:16])
	dim := binary.LittleEndian.Uint64(data[16:24])
	if d < 1 || d >= maxDim || dim != d+1 {
		return fmt.Errorf("%w: d = %d, Dim = %d (want 1 ≤ d < %d, Dim = d+1)", ErrFormat, d, dim, maxDim)
	}
	n := int(dim)
	want := headerLen + 8*(2*n+n*n)
	if len(data) != want {
		return fmt.Errorf("%w: %d bytes, want %d for d = %d", ErrFormat, len(data), want, d)
	}
	vals := make([]float64, 2*n+n*n)
	for i := range vals {
		v := math.Float64frombits(binary.LittleEndian.Uint64(data[headerLen+8*i:]))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: non-finite value at float %d", ErrFormat, i)
		}
		vals[i] = v
	}
	lambda := vals[n : 2*n : 2*n]
	for j, l := range lambda {
		if l < 0 {
			return fmt.Errorf("%w: Lambda[%d] = %g < 0", ErrFormat, j, l)
		}
	}
	*in = Instance{
		D:      int(d),
		WStar:  vals[:n:n],
		Lambda: lambda,
		Factor: mat.NewDense(n, n, vals[2*n:]),
	}
	in.packed = fma.Pack(in.Factor)
	return nil
}

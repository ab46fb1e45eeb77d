package olr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"zorepro/envs/linreg"
	"zorepro/envs/linreg/fma"
)

// ErrFormat is returned when an instance's bytes cannot be decoded.
var ErrFormat = errors.New("olr: malformed instance")

// Instance is one stream: a linear-regression instance and the bounds.
type Instance struct {
	Lin    *linreg.Instance
	CTheta float64 // radius of Θ
	CA     float64 // bound on |a|
}

// Dim is b, the number of parameters (d features plus the bias).
func (in *Instance) Dim() int { return in.Lin.Dim() }

// Constants returns the theorem's C_θ, C_s, C_a, loss bound C and
// Lipschitz constant L.
func (in *Instance) Constants() (cTheta, cS, cA, c, l float64) {
	cS = 1
	m := in.CTheta*cS + in.CA
	return in.CTheta, cS, in.CA, m * m, m * cS
}

// Draw fills the rows of S (n×b) with bounded features and a with their
// targets. The draw order is ε (n×b, row-major) for the features, then n
// noise values.
func (in *Instance) Draw(rng *rand.Rand, S *mat.Dense, a []float64) {
	n, b := S.Dims()
	if b != in.Dim() || len(a) != n {
		panic(fmt.Sprintf("olr: Draw: S is %d×%d and a has %d, want b = %d", n, b, len(a), in.Dim()))
	}
	eps := mat.NewDense(n, b, nil)
	raw := eps.RawMatrix()
	for i := range raw.Data {
		raw.Data[i] = rng.NormFloat64()
	}
	in.Lin.Correlate(eps, S)
	scale := 1 / math.Sqrt(float64(in.Lin.D))
	for i := 0; i < n; i++ {
		row := S.RawRowView(i)
		for j := range row {
			row[j] *= scale
		}
		row[0] = 1
		var dot, norm2 float64
		for j, v := range row {
			dot += v * in.Lin.WStar[j]
			norm2 += v * v
		}
		y := dot + linreg.NoiseStd*rng.NormFloat64()
		norm := math.Sqrt(norm2)
		for j := range row {
			row[j] /= norm
		}
		a[i] = math.Max(-in.CA, math.Min(in.CA, y/norm))
	}
}

// Project maps θ onto the ball ‖θ‖ ≤ C_θ in place.
func (in *Instance) Project(theta []float64) {
	var n2 float64
	for _, v := range theta {
		n2 += v * v
	}
	if n := math.Sqrt(n2); n > in.CTheta {
		f := in.CTheta / n
		for i := range theta {
			theta[i] *= f
		}
	}
}

// Moments accumulates SᵀS, Sᵀa and aᵀa of the realised stream.
type Moments struct {
	in  *Instance
	sts *mat.SymDense
	sta []float64
	ata float64
	n   int64
}

// NewMoments returns empty moments for the instance's dimension.
func (in *Instance) NewMoments() *Moments {
	b := in.Dim()
	return &Moments{in: in, sts: mat.NewSymDense(b, nil), sta: make([]float64, b)}
}

// Add accumulates a chunk of rounds. SᵀS is added with fma.GramAdd: per
// chunk, one fused multiply–add chain per element over the rounds in order.
func (m *Moments) Add(S *mat.Dense, a []float64) {
	fma.GramAdd(m.sts, S)
	n, b := S.Dims()
	for i := 0; i < n; i++ {
		row := S.RawRowView(i)
		for j := 0; j < b; j++ {
			m.sta[j] += row[j] * a[i]
		}
		m.ata += a[i] * a[i]
	}
	m.n += int64(n)
}

// Rounds returns the number of rounds added.
func (m *Moments) Rounds() int64 { return m.n }

// Loss returns Σ_i (θᵀs_i − a_i)² over the rounds added.
func (m *Moments) Loss(theta []float64) float64 {
	b := len(theta)
	t := mat.NewVecDense(b, theta)
	var q mat.VecDense
	q.MulVec(m.sts, t)
	var l float64
	for j := 0; j < b; j++ {
		l += theta[j]*q.AtVec(j) - 2*theta[j]*m.sta[j]
	}
	return math.Max(0, l+m.ata)
}

// Best returns the optimum in hindsight over Θ and whether the ball
// constraint was active.
func (m *Moments) Best() (theta []float64, constrained bool, err error) {
	b := m.sts.SymmetricDim()
	var eig mat.EigenSym
	if !eig.Factorize(m.sts, true) {
		return nil, false, errors.New("olr: eigendecomposition of SᵀS failed")
	}
	vals := eig.Values(nil)
	var u mat.Dense
	eig.VectorsTo(&u)
	// Coordinates of Sᵀa in the eigenbasis.
	var c mat.VecDense
	c.MulVec(u.T(), mat.NewVecDense(b, m.sta))
	solve := func(lambda float64) ([]float64, float64) {
		z := make([]float64, b)
		var n2 float64
		for j := 0; j < b; j++ {
			den := vals[j] + lambda
			if den <= 1e-12*math.Max(1, vals[b-1]) {
				continue // a null direction of SᵀS: the minimum-norm solution leaves it at 0
			}
			z[j] = c.AtVec(j) / den
			n2 += z[j] * z[j]
		}
		return z, math.Sqrt(n2)
	}
	z, norm := solve(0)
	if norm > m.in.CTheta {
		constrained = true
		lo, hi := 0.0, 1.0
		for {
			if _, n := solve(hi); n <= m.in.CTheta {
				break
			}
			lo, hi = hi, hi*2
		}
		for i := 0; i < 200 && hi-lo > 1e-15*hi; i++ {
			mid := (lo + hi) / 2
			if _, n := solve(mid); n > m.in.CTheta {
				lo = mid
			} else {
				hi = mid
			}
		}
		z, _ = solve(hi)
	}
	var th mat.VecDense
	th.MulVec(&u, mat.NewVecDense(b, z))
	return th.RawVector().Data, constrained, nil
}

// Regret returns the regret of a learner whose summed loss over the rounds
// added is learnerLoss: learnerLoss − min_{θ∈Θ} Σ c_i(θ).
func (m *Moments) Regret(learnerLoss float64) (regret float64, constrained bool, err error) {
	best, constrained, err := m.Best()
	if err != nil {
		return 0, false, err
	}
	return learnerLoss - m.Loss(best), constrained, nil
}

// MarshalBinary encodes the instance ("ZOLR" v1 ‖ C_θ ‖ C_a ‖ the linreg
// instance).
func (in *Instance) MarshalBinary() ([]byte, error) {
	lin, err := in.Lin.MarshalBinary()
	if err != nil {
		return nil, err
	}
	out := []byte("ZOLR")
	out = binary.LittleEndian.AppendUint32(out, 1)
	out = binary.LittleEndian.AppendUint64(out, math.Float64bits(in.CTheta))
	out = binary.LittleEndian.AppendUint64(out, math.Float64bits(in.CA))
	return append(out, lin...), nil
}

// UnmarshalBinary decodes an instance.
func (in *Instance) UnmarshalBinary(data []byte) error {
	if len(data) < 24 || string(data[:4]) != "ZOLR" || binary.LittleEndian.Uint32(data[4:8]) != 1 {
		return fmt.Errorf("%w: bad header", ErrFormat)
	}
	ct := math.Float64frombits(binary.LittleEndian.Uint64(data[8:16]))
	ca := math.Float64frombits(binary.LittleEndian.Uint64(data[16:24]))
	if !(ct > 0) || !(ca > 0) || math.IsInf(ct, 0) || math.IsInf(ca, 0) {
		return fmt.Errorf("%w: bounds %v, %v", ErrFormat, ct, ca)
	}
	lin := new(linreg.Instance)
	if err := lin.UnmarshalBinary(data[24:]); err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	*in = Instance{Lin: lin, CTheta: ct, CA: ca}
	return nil
}

// MarshalBinary encodes the moments (for checkpoints): rounds, aᵀa, Sᵀa
// and the upper triangle of SᵀS, little-endian float64 bits.
func (m *Moments) MarshalBinary() ([]byte, error) {
	b := len(m.sta)
	out := binary.LittleEndian.AppendUint64(nil, uint64(m.n))
	out = binary.LittleEndian.AppendUint64(out, math.Float64bits(m.ata))
	for _, v := range m.sta {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
	}
	for i := 0; i < b; i++ {
		for j := i; j < b; j++ {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(m.sts.At(i, j)))
		}
	}
	return out, nil
}

// UnmarshalBinary decodes moments of the instance's dimension.
func (m *Moments) UnmarshalBinary(data []byte) error {
	b := len(m.sta)
	if len(data) != 8*(2+b+b*(b+1)/2) {
		return fmt.Errorf("%w: moments of %d bytes for b = %d", ErrFormat, len(data), b)
	}
	f := func() float64 {
		v := math.Float64frombits(binary.LittleEndian.Uint64(data))
		data = data[8:]
		return v
	}
	m.n = int64(binary.LittleEndian.Uint64(data))
	data = data[8:]
	m.ata = f()
	for j := range m.sta {
		m.sta[j] = f()
	}
	for i := 0; i < b; i++ {
		for j := i; j < b; j++ {
			m.sts.SetSym(i, j, f())
		}
	}
	return nil
}

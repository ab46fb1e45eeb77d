package algos

import (
	"fmt"
	"math"

	"zorepro/pipeline/blob"
)

// RunningStat is the per-coordinate running mean and variance of spec §1
// (Welford), used for ARS input normalization. It holds n, the mean M and
// the sum of squared deviations S. The zero value is not usable; call
// NewRunningStat.
type RunningStat struct {
	n    int64
	m, s []float64
}

// NewRunningStat returns an empty RunningStat over dim coordinates.
func NewRunningStat(dim int) *RunningStat {
	return &RunningStat{m: make([]float64, dim), s: make([]float64, dim)}
}

// Dim returns the number of coordinates.
func (r *RunningStat) Dim() int { return len(r.m) }

// N returns the number of pushes.
func (r *RunningStat) N() int64 { return r.n }

// Push adds one observation: if n was 0 then M = x; otherwise, per
// coordinate, δ = x − M, M += δ/n_new, S += δ·δ·n_old/n_new (evaluated left to
// right). It panics if len(x) != Dim().
func (r *RunningStat) Push(x []float64) {
	if len(x) != len(r.m) {
		panic(fmt.Sprintf("algos: RunningStat.Push: len(x) = %d, want %d", len(x), len(r.m)))
	}
	n1 := r.n
	r.n++
	if r.n == 1 {
		copy(r.m, x)
		return
	}
	nn, no := float64(r.n), float64(n1)
	for i, xi := range x {
		delta := xi - r.m[i]
		r.m[i] += delta / nn
		r.s[i] += delta * delta * no / nn
	}
}

func dstOf(dst []float64, n int) []float64 {
	if dst == nil {
		return make([]float64, n)
	}
	if len(dst) != n {
		panic(fmt.Sprintf("algos: RunningStat: len(dst) = %d, want %d", len(dst), n))
	}
	return dst
}

// Mean writes M into dst (allocated if nil) and returns it; it is 0 before
// any push.
func (r *RunningStat) Mean(dst []float64) []float64 {
	dst = dstOf(dst, len(r.m))
	copy(dst, r.m)
	return dst
}

// Var writes the variance into dst (allocated if nil) and returns it:
// S/(n−1) when n > 1, with every coordinate whose value is exactly 0 set to 1;
// all ones when n ≤ 1.
func (r *RunningStat) Var(dst []float64) []float64 {
	dst = dstOf(dst, len(r.m))
	for i := range dst {
		v := 1.0
		if r.n > 1 {
			v = r.s[i] / float64(r.n-1)
			if v == 0 {
				v = 1
			}
		}
		dst[i] = v
	}
	return dst
}

// Std writes √Var into dst (allocated if nil) and returns it.
func (r *RunningStat) Std(dst []float64) []float64 {
	dst = r.Var(dst)
	for i, v := range dst {
		dst[i] = math.Sqrt(v)
	}
	return dst
}

const (
	runStatMagic   = "ZRST"
	runStatVersion = 1
)

// MarshalBinary encodes n, M and S ("ZRST", version 1).
func (r *RunningStat) MarshalBinary() ([]byte, error) {
	e := blob.NewEncoder(runStatMagic, runStatVersion)
	e.Int64(r.n)
	e.Floats(r.m)
	e.Floats(r.s)
	return e.Data(), nil
}

// UnmarshalBinary decodes a MarshalBinary blob, replacing the receiver's
// state (including its dimension). It checks n ≥ 0 and len(M) = len(S); on
// error the receiver is unchanged.
func (r *RunningStat) UnmarshalBinary(data []byte) error {
	d := blob.NewDecoder(data, runStatMagic, runStatVersion)
	n := d.Int64()
	m := d.Floats()
	s := d.Floats()
	if n < 0 {
		d.Failf("RunningStat n = %d", n)
	}
	if len(m) != len(s) {
		d.Failf("RunningStat mean has %d coordinates, sum of squares %d", len(m), len(s))
	}
	if err := d.Finish(); err != nil {
		return err
	}
	r.n, r.m, r.s = n, m, s
	return nil
}

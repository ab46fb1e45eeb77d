package lenet

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The helpers below work on n×Classes matrices stored row-major (the layout
// Forward returns); every sum runs in index order.

func rows(op string, m []float64) int {
	if len(m) == 0 || len(m)%Classes != 0 {
		panic(fmt.Sprintf("lenet: %s: length %d is not a positive multiple of %d", op, len(m), Classes))
	}
	return len(m) / Classes
}

// expRow writes e_j = exp(z_j − m) into e, with m the row maximum, and
// returns m and s = Σ_j e_j.
func expRow(e, z []float64) (m, s float64) {
	m = z[0]
	for _, v := range z[1:] {
		if v > m {
			m = v
		}
	}
	for j, v := range z {
		e[j] = math.Exp(v - m)
		s += e[j]
	}
	return m, s
}

// LogSoftmax writes log pᵢⱼ = (zᵢⱼ − mᵢ) − log Σⱼ′ exp(zᵢⱼ′ − mᵢ), mᵢ the row
// maximum, into dst; dst may be logits. It panics on lengths that differ or
// are not a multiple of Classes.
func LogSoftmax(dst, logits []float64) {
	n := rows("LogSoftmax", logits)
	if len(dst) != len(logits) {
		panic(fmt.Sprintf("lenet: LogSoftmax: len(dst) = %d, want %d", len(dst), len(logits)))
	}
	var e [Classes]float64
	for i := 0; i < n; i++ {
		z := logits[i*Classes : (i+1)*Classes]
		m, s := expRow(e[:], z)
		ls := math.Log(s)
		d := dst[i*Classes : (i+1)*Classes]
		for j, v := range z {
			d[j] = (v - m) - ls
		}
	}
}

// Softmax writes pᵢⱼ = exp(zᵢⱼ − mᵢ) / Σⱼ′ exp(zᵢⱼ′ − mᵢ), mᵢ the row
// maximum, into dst; dst may be logits.
func Softmax(dst, logits []float64) {
	n := rows("Softmax", logits)
	if len(dst) != len(logits) {
		panic(fmt.Sprintf("lenet: Softmax: len(dst) = %d, want %d", len(dst), len(logits)))
	}
	for i := 0; i < n; i++ {
		d := dst[i*Classes : (i+1)*Classes]
		_, s := expRow(d, logits[i*Classes:(i+1)*Classes])
		for j := range d {
			d[j] /= s
		}
	}
}

// CrossEntropy returns the mean cross-entropy L = (1/n)·Σᵢ −log pᵢ[yᵢ] of
// the n rows of logits against labels (PyTorch's nll_loss of log_softmax,
// spec §2.4) and, when dlogits is not nil, writes ∂L/∂zᵢⱼ =
// (pᵢⱼ − 1[j = yᵢ])/n into it. It panics on mismatched lengths or a label
// outside [0, Classes).
func CrossEntropy(logits []float64, labels []int, dlogits []float64) float64 {
	return weightedNLL("CrossEntropy", logits, labels, nil, dlogits)
}

// ReinforceLoss returns the REINFORCE surrogate of spec §2.5,
// L = (1/n)·Σᵢ rᵢ·(−log pᵢ[aᵢ]) for sampled actions aᵢ and rewards rᵢ (no
// baseline), and, when dlogits is not nil, writes ∂L/∂zᵢⱼ =
// rᵢ·(pᵢⱼ − 1[j = aᵢ])/n into it. It panics on mismatched lengths or an
// action outside [0, Classes).
func ReinforceLoss(logits []float64, actions []int, rewards []float64, dlogits []float64) float64 {
	if len(rewards) != len(actions) {
		panic(fmt.Sprintf("lenet: ReinforceLoss: %d rewards for %d actions", len(rewards), len(actions)))
	}
	return weightedNLL("ReinforceLoss", logits, actions, rewards, dlogits)
}

// weightedNLL is (1/n)·Σᵢ wᵢ·(−log pᵢ[cᵢ]) with wᵢ = 1 when w is nil, where
// −log pᵢ[cᵢ] = log sᵢ − (zᵢ[cᵢ] − mᵢ) as in LogSoftmax. The loss adds the
// terms row by row and multiplies the sum by 1/n; gradient row i is
// (wᵢ·(1/n))·(pᵢⱼ − 1[j = cᵢ]) with pᵢⱼ as in Softmax.
func weightedNLL(op string, logits []float64, class []int, w, dlogits []float64) float64 {
	n := rows(op, logits)
	if len(class) != n {
		panic(fmt.Sprintf("lenet: %s: %d classes for %d rows", op, len(class), n))
	}
	if dlogits != nil && len(dlogits) != len(logits) {
		panic(fmt.Sprintf("lenet: %s: len(dlogits) = %d, want %d", op, len(dlogits), len(logits)))
	}
	inv := 1 / float64(n)
	var loss float64
	var e [Classes]float64
	for i := 0; i < n; i++ {
		c := class[i]
		if c < 0 || c >= Classes {
			panic(fmt.Sprintf("lenet: %s: class %d of row %d is outside [0, %d)", op, c, i, Classes))
		}
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		z := logits[i*Classes : (i+1)*Classes]
		m, s := expRow(e[:], z)
		loss += wi * (math.Log(s) - (z[c] - m))
		if dlogits != nil {
			d := dlogits[i*Classes : (i+1)*Classes]
			f := wi * inv
			for j := range d {
				p := e[j] / s
				if j == c {
					p -= 1
				}
				d[j] = f * p
			}
		}
	}
	return loss * inv
}

// Argmax returns the index of the first largest element of row (NaNs never
// win; an all-NaN row gives 0), the prediction of spec §2.1. It panics on an
// empty row.
func Argmax(row []float64) int {
	if len(row) == 0 {
		panic("lenet: Argmax of an empty row")
	}
	best := 0
	for j, v := range row[1:] {
		if v > row[best] {
			best = j + 1
		}
	}
	return best
}

// SampleAction draws a ~ Categorical(p) from one probability row with one
// rng.Float64() u: a is the first index whose running sum p₀+…+pₐ exceeds u,
// or, if roundoff leaves the total at or below u, the last index with
// pₐ > 0. It panics if no pₐ is positive.
func SampleAction(p []float64, rng *rand.Rand) int {
	u := rng.Float64()
	var s float64
	last := -1
	for j, v := range p {
		if v > 0 {
			last = j
		}
		s += v
		if u < s && v > 0 {
			return j
		}
	}
	if last < 0 {
		panic("lenet: SampleAction: no positive probability")
	}
	return last
}

package lenet

import (
	"math"
	"slices"
	"testing"
)

// region fingerprints the piecewise-linear pieces a forward pass went
// through: every ReLU's sign and every pool window's argmax. Between two
// passes with the same region the logits are an affine function of any one
// parameter, so the loss is smooth along that coordinate.
func region(net *Net) []byte {
	n := net.n
	var r []byte
	for _, v := range net.a1[:n*a1Len] {
		r = append(r, b2u(v > 0))
	}
	r = append(r, net.arg1[:n*a1Len]...)
	for _, v := range net.a2[:n*a2Len] {
		r = append(r, b2u(v > 0))
	}
	r = append(r, net.arg2[:n*a2Len]...)
	for _, v := range net.h1[:n*Hidden] {
		r = append(r, b2u(v > 0))
	}
	return r
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Backward against central finite differences, on every parameter tensor, in
// Eval mode and in Train mode with a fixed dropout mask (the same stream for
// every pass).
//
// Setup: 3 images with pixels in [0, 1), default-init parameters, the mean
// cross-entropy loss (L ≈ 2.3). Per tensor all coordinates when there are at
// most 40, else 40 sampled ones plus the first and last; each tensor must
// have at least 8 (or all) checked coordinates with |gradient| > 1e-5.
//
// Step and tolerance: with the ReLU signs and pool argmaxes fixed (checked:
// a coordinate whose ±h passes leave the base region is skipped, and at most
// a few may be), the logits are affine in one parameter, so the central
// difference has truncation error h²/6·|L‴| ≤ h²/6·‖∂z/∂θ‖³·O(1) ≈ 2e-11 for
// h = 1e-5 (here ‖∂z/∂θ‖ ≲ 1), and rounding error ≈ ε·|L|/h ≈ 5e-11 (L is
// computed to a few ulps of 2.3). Both are far below the tolerance
// 1e-8 + 1e-6·|g|, which still fails a gradient that is wrong by more than
// about 1e-8 absolute — far smaller than the gradients here (typically
// 1e-4 to 1e-1; the negative control below shows the check has teeth).
func TestGradientFiniteDifferences(t *testing.T) {
	const (
		h    = 1e-5
		atol = 1e-8
		rtol = 1e-6
		per  = 40
	)
	theta := NewParams(newRand(11))
	x := testImages(newRand(12), 3, 1)
	labels := []int{3, 7, 0}
	net := New(3)
	loss := func(th []float64, mode Mode) (float64, []byte) {
		logits := net.Forward(th, x, mode, newRand(13))
		return CrossEntropy(logits, labels, nil), region(net)
	}
	grads := map[Mode][]float64{}
	for _, mode := range []Mode{Eval, Train} {
		logits := net.Forward(theta, x, mode, newRand(13))
		dl := make([]float64, len(logits))
		CrossEntropy(logits, labels, dl)
		grad := make([]float64, NumParams)
		net.Backward(dl, grad)
		grads[mode] = grad
		_, base := loss(theta, mode)

		pick := newRand(14)
		var checked, skipped int
		var worst float64
		for _, ts := range Tensors() {
			coords := []int{}
			if ts.Len() <= per {
				for j := range ts.Len() {
					coords = append(coords, j)
				}
			} else {
				coords = append(pick.Perm(ts.Len())[:per], 0, ts.Len()-1)
			}
			live := 0 // checked coordinates with a gradient clearly away from 0
			for _, j := range coords {
				i := ts.Offset + j
				th := slices.Clone(theta)
				th[i] = theta[i] + h
				lp, rp := loss(th, mode)
				th[i] = theta[i] - h
				lm, rm := loss(th, mode)
				if !slices.Equal(rp, base) || !slices.Equal(rm, base) {
					skipped++
					continue
				}
				checked++
				if math.Abs(grad[i]) > 1e-5 {
					live++
				}
				fd := (lp - lm) / (2 * h)
				err := math.Abs(fd - grad[i])
				worst = max(worst, err)
				if err > atol+rtol*math.Abs(grad[i]) {
					t.Errorf("%v: %s[%d]: backward %.12g, finite difference %.12g (error %.2g)", mode, ts.Name, j, grad[i], fd, err)
				}
			}
			// Dead ReLUs zero many fc1 gradients; make sure every tensor
			// still has enough coordinates where the check means something.
			if live < min(8, ts.Len()) {
				t.Errorf("%v: %s: only %d checked coordinates with |gradient| > 1e-5", mode, ts.Name, live)
			}
		}
		t.Logf("%v: %d coordinates checked, %d skipped at a kink, largest error %.2g", mode, checked, skipped, worst)
		if skipped > checked/20 {
			t.Errorf("%v: %d of %d coordinates skipped", mode, skipped, checked+skipped)
		}
	}

	// Negative control: the Eval gradient fails the Train check on fc1 (the
	// dropout mask changes it), so a wrong gradient does not slip through.
	var differ int
	ts := Tensors()[4]
	for j := 0; j < ts.Len(); j += 97 {
		i := ts.Offset + j
		th := slices.Clone(theta)
		th[i] += h
		lp, _ := loss(th, Train)
		th[i] -= 2 * h
		lm, _ := loss(th, Train)
		fd := (lp - lm) / (2 * h)
		if math.Abs(fd-grads[Eval][i]) > atol+rtol*math.Abs(grads[Eval][i]) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("the Eval gradient passes the Train-mode check: the check is too loose")
	}
}

// The loss helpers against finite differences in logit space (smooth
// everywhere): h = 1e-6 on logits of size O(1), error ≲ ε·|L|/h + h²·O(1)
// ≈ 1e-9, tolerance 1e-8.
func TestLossGradients(t *testing.T) {
	rng := newRand(15)
	n := 5
	logits := make([]float64, n*Classes)
	for i := range logits {
		logits[i] = 2 * rng.NormFloat64()
	}
	labels := []int{0, 9, 4, 4, 2}
	rewards := []float64{1, -1, -1, 1, 0.5}
	for name, f := range map[string]func(z, dz []float64) float64{
		"CrossEntropy":  func(z, dz []float64) float64 { return CrossEntropy(z, labels, dz) },
		"ReinforceLoss": func(z, dz []float64) float64 { return ReinforceLoss(z, labels, rewards, dz) },
	} {
		grad := make([]float64, len(logits))
		l0 := f(logits, grad)
		if l1 := f(logits, nil); l1 != l0 {
			t.Errorf("%s: loss %v without gradient, %v with", name, l1, l0)
		}
		const h = 1e-6
		for i := range logits {
			z := slices.Clone(logits)
			z[i] += h
			lp := f(z, nil)
			z[i] -= 2 * h
			lm := f(z, nil)
			if fd := (lp - lm) / (2 * h); math.Abs(fd-grad[i]) > 1e-8 {
				t.Errorf("%s: ∂L/∂z[%d] = %v, finite difference %v", name, i, grad[i], fd)
			}
		}
	}
}

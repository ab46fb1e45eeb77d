package lenet

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"

	"zorepro/pipeline/blob/blobtest"
)

// conv1 by hand: one image with three non-zero pixels, integer kernels
// w[c][ki][kj] = (c+1)·(5ki+kj) and biases c/2, so every output is exact.
func TestConv1HandComputed(t *testing.T) {
	theta := make([]float64, NumParams)
	w1, b1 := Tensors()[0].Of(theta), Tensors()[1].Of(theta)
	for c := 0; c < 10; c++ {
		for r := 0; r < 25; r++ {
			w1[c*25+r] = float64((c + 1) * r)
		}
		b1[c] = float64(c) / 2
	}
	x := make([]float64, InputSize)
	x[0*28+0] = 1
	x[1*28+1] = 2
	x[27*28+27] = 3
	net := New(1)
	net.Forward(theta, x, Eval, nil)
	for c := 0; c < 10; c++ {
		f, b := float64(c+1), float64(c)/2
		for _, tc := range []struct {
			y, x int
			want float64
		}{
			{0, 0, 1*0*f + 2*6*f + b}, // x[0][0]·w[0][0] + x[1][1]·w[1][1]
			{0, 1, 2*5*f + b},         // x[1][1]·w[1][0]
			{1, 0, 2*1*f + b},         // x[1][1]·w[0][1]
			{1, 1, 2*0*f + b},         // x[1][1]·w[0][0]
			{5, 5, b},                 // nothing in the window
			{23, 23, 3*24*f + b},      // x[27][27]·w[4][4]
			{23, 22, b},               // x[27][27] is outside
		} {
			if got := net.c1[c*576+tc.y*24+tc.x]; got != tc.want {
				t.Errorf("conv1[%d][%d][%d] = %v, want %v", c, tc.y, tc.x, got, tc.want)
			}
		}
	}
}

// Spec §2.2 applies max-pooling BEFORE the ReLU. The two orders give the same
// values, but not the same argmax for a window of negative pre-activations:
// pooling first records the largest negative value, ReLU first would see four
// zeros and record the first. The recorded argmax pins the order.
func TestPoolThenReLU(t *testing.T) {
	theta := make([]float64, NumParams)
	w1, b1 := Tensors()[0].Of(theta), Tensors()[1].Of(theta)
	w1[0] = 1 // channel 0 copies the pixel under the kernel's top-left tap
	b1[0] = -10
	x := make([]float64, InputSize)
	set := func(y, xx int, v ...float64) { // the 2×2 window at (y, xx)
		x[y*28+xx], x[y*28+xx+1], x[(y+1)*28+xx], x[(y+1)*28+xx+1] = v[0], v[1], v[2], v[3]
	}
	set(0, 0, 3, 7, 5, 1)     // pre-activations −7 −3 −5 −9: max −3 at 1
	set(0, 2, 12, 15, 11, 14) // 2 5 1 4: max 5 at 1
	set(0, 4, 8, 9, 16, 16)   // −2 −1 6 6: tie, first (2)
	set(0, 6, 1, 1, 1, 4)     // −9 −9 −9 −6: max at 3
	net := New(1)
	net.Forward(theta, x, Eval, nil)
	for i, want := range []struct {
		a   float64
		arg uint8
	}{{0, 1}, {5, 1}, {6, 2}, {0, 3}} {
		if a, arg := net.a1[i], net.arg1[i]; a != want.a || arg != want.arg {
			t.Errorf("pool1 window %d: activation %v argmax %d, want %v and %d", i, a, arg, want.a, want.arg)
		}
	}
}

func maxRelDiff(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = max(m, math.Abs(a[i]-b[i])/(1+math.Abs(b[i])))
	}
	return m
}

// Forward agrees with the loop-by-loop transcription of spec §2.2 in both
// modes, on raw 0–255 pixels. The two sum in different orders (gonum's dot
// kernel keeps four partial sums), so they agree to rounding: logits are
// O(10), sums have at most 320 terms, and 1e-11 relative is ~100× the
// accumulated rounding.
func TestForwardMatchesReference(t *testing.T) {
	theta := NewParams(newRand(1))
	x := pixelImages(newRand(2), 7)
	net := New(8)
	for _, mode := range []Mode{Eval, Train} {
		got := slices.Clone(net.Forward(theta, x, mode, newRand(3)))
		want := refForward(theta, x, mode, newRand(3))
		if d := maxRelDiff(got, want); d > 1e-11 {
			t.Errorf("%v: max relative difference %g from the reference", mode, d)
		}
	}
	// Train differs from Eval (a mask was applied) and masks come from rng.
	ev := slices.Clone(net.Forward(theta, x, Eval, nil))
	tr := slices.Clone(net.Forward(theta, x, Train, newRand(3)))
	if slices.Equal(ev, tr) {
		t.Error("Train mode gave the Eval logits")
	}
	var kept int
	for _, m := range net.mask[:7*Hidden] {
		switch m {
		case 2:
			kept++
		case 0:
		default:
			t.Fatalf("dropout factor %v, want 0 or 2", m)
		}
	}
	if kept < 100 || kept > 250 { // Binomial(350, ½): mean 175, sd 9.4
		t.Errorf("%d of 350 units kept", kept)
	}
}

// With gonum's BLAS an image's logits do not depend on the rest of the
// batch, bit for bit (gemm never cuts the inner dimension), so evaluation
// batch size and ARS's one-image queries cannot change results. OpenBLAS
// chooses kernels by shape (a small-matrix kernel below a size, blocked
// ones above), so there an image's logits depend on its batch's size in
// the last bits: they agree to rounding (1e-12 relative, as
// TestForwardMatchesReference argues), and every caller fixes its batch
// sizes, so results stay deterministic.
func TestBatchInvariance(t *testing.T) {
	theta := NewParams(newRand(4))
	x := pixelImages(newRand(5), 70)
	big := New(70)
	all := slices.Clone(big.Forward(theta, x, Eval, nil))
	one := New(1)
	differ := 0
	for b := 0; b < 70; b++ {
		got := one.Forward(theta, x[b*InputSize:(b+1)*InputSize], Eval, nil)
		want := all[b*Classes : (b+1)*Classes]
		if blobtest.SameBits(got, want) {
			continue
		}
		differ++
		if batchInvariant {
			t.Fatalf("image %d: alone %v, in the batch %v", b, got, want)
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
				t.Fatalf("image %d, logit %d: alone %v, in the batch %v", b, i, got[i], want[i])
			}
		}
	}
	t.Logf("%s: %d of 70 images differ in some bit between alone and in a batch of 70", BLAS(), differ)
}

// pass runs Forward (Train, a fixed dropout stream) and the cross-entropy
// Backward on a batch of 64 and returns logits and gradient.
func pass(net *Net, theta, x []float64, labels []int) ([]float64, []float64) {
	logits := slices.Clone(net.Forward(theta, x, Train, newRand(9)))
	dl := make([]float64, len(logits))
	CrossEntropy(logits, labels, dl)
	grad := make([]float64, NumParams)
	net.Backward(dl, grad)
	return logits, grad
}

func testLabels(n int) []int {
	y := make([]int, n)
	for i := range y {
		y[i] = (i * 7) % Classes
	}
	return y
}

// The same inputs give the same bits: twice in a row, on a fresh Net, and
// with GOMAXPROCS 1 and 4 (gonum's Dgemm may use goroutines for large
// products; gemm's pieces keep it serial, and this pins that).
func TestDeterministic(t *testing.T) {
	theta := NewParams(newRand(6))
	x := pixelImages(newRand(7), 64)
	y := testLabels(64)
	run := func(procs int) ([]float64, []float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		net := New(64)
		pass(net, theta, x, y) // dirty the workspaces first
		return pass(net, theta, x, y)
	}
	l1, g1 := run(1)
	l4, g4 := run(4)
	if !blobtest.SameBits(l1, l4) || !blobtest.SameBits(g1, g4) {
		t.Error("results differ between GOMAXPROCS 1 and 4")
	}
	l, g := pass(New(64), theta, x, y)
	if !blobtest.SameBits(l, l1) || !blobtest.SameBits(g, g1) {
		t.Error("a fresh Net gives different bits")
	}
	// Eight Nets passing at once, as tasks and ARS's workers do (OpenBLAS
	// is called from several threads at a time).
	var wg sync.WaitGroup
	same := make([]bool, 8)
	for i := range same {
		wg.Go(func() {
			net := New(64)
			ok := true
			for range 5 {
				l, g := pass(net, theta, x, y)
				ok = ok && blobtest.SameBits(l, l1) && blobtest.SameBits(g, g1)
			}
			same[i] = ok
		})
	}
	wg.Wait()
	if slices.Contains(same, false) {
		t.Errorf("concurrent passes: same bits %v", same)
	}
	var nz int
	for _, v := range g1 {
		if v != 0 {
			nz++
		}
	}
	if nz < NumParams/2 {
		t.Errorf("only %d of %d gradient coordinates are non-zero", nz, NumParams)
	}
}

// Steady-state passes do not allocate, and the workspaces are what
// WorkspaceBytes reports.
func TestNoAllocsAndWorkspace(t *testing.T) {
	theta := NewParams(newRand(8))
	x := pixelImages(newRand(9), 16)
	y := testLabels(16)
	net := New(16)
	fw := net.WorkspaceBytes()
	dl := make([]float64, 16*Classes)
	grad := make([]float64, NumParams)
	rng := newRand(1)
	allocs := testing.AllocsPerRun(5, func() {
		CrossEntropy(net.Forward(theta, x, Train, rng), y, dl)
		net.Backward(dl, grad)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per pass, want 0", allocs)
	}
	// forward: 25·576 + 10·576 + 64·250 + 20·64 fixed floats, per image
	// 1440 + 320 + 4·50 + 10 floats and 1440 + 320 argmax bytes.
	perImg := 8*(1440+320+3*50+10) + 1440 + 320
	if want := 8*(25*576+10*576+64*250+20*64) + 16*perImg; fw != want {
		t.Errorf("forward workspace %d bytes, want %d", fw, want)
	}
	if bw := net.WorkspaceBytes() - fw; bw != 8*(16*(50+320)+20*64+64*250+1440+10*576)+64 {
		t.Errorf("backward workspace %d bytes", bw)
	}
}

func TestPanics(t *testing.T) {
	theta := make([]float64, NumParams)
	x := make([]float64, InputSize)
	for name, f := range map[string]func(){
		"capacity":       func() { New(0) },
		"short theta":    func() { New(1).Forward(theta[1:], x, Eval, nil) },
		"ragged x":       func() { New(1).Forward(theta, x[1:], Eval, nil) },
		"empty x":        func() { New(1).Forward(theta, nil, Eval, nil) },
		"over capacity":  func() { New(1).Forward(theta, append(x, x...), Eval, nil) },
		"train nil rng":  func() { New(1).Forward(theta, x, Train, nil) },
		"bad mode":       func() { New(1).Forward(theta, x, Mode(7), nil) },
		"no forward":     func() { New(1).Backward(make([]float64, 10), theta) },
		"short dlogits":  func() { n := New(1); n.Forward(theta, x, Eval, nil); n.Backward(make([]float64, 9), theta) },
		"short gradient": func() { n := New(1); n.Forward(theta, x, Eval, nil); n.Backward(make([]float64, 10), theta[1:]) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
	if s := fmt.Sprint(Eval, Train, Mode(3)); s != "eval train Mode(3)" {
		t.Errorf("Mode strings %q", s)
	}
}

// poolReLU's special values: NaN and ±Inf take PyTorch's rule (a NaN
// replaces the running maximum; ReLU(NaN) = 0 as v0.3's threshold), signed
// zeros give +0, and finite windows match a plain float comparison.
func TestPoolReLUSpecialValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	negz := math.Copysign(0, -1)
	for _, tc := range []struct {
		w    [4]float64
		want float64
		arg  uint8
	}{
		{[4]float64{1, nan, 3, 2}, 0, 1},
		{[4]float64{nan, 1, nan, 2}, 0, 2},
		{[4]float64{1, inf, 3, 2}, inf, 1},
		{[4]float64{-inf, -1, -3, -2}, 0, 1},
		{[4]float64{inf, -inf, 0, 0}, inf, 0},
		{[4]float64{negz, -1, -3, -2}, 0, 0},
		{[4]float64{-5, -1, -1, -2}, 0, 1},
		{[4]float64{1e-300, 2e-300, 2e-300, -1}, 2e-300, 1},
	} {
		c := []float64{tc.w[0], tc.w[1], tc.w[2], tc.w[3]} // one 2×2 map
		out, arg := make([]float64, 1), make([]uint8, 1)
		poolReLU(out, arg, c, 1, 2)
		if math.Float64bits(out[0]) != math.Float64bits(tc.want) || arg[0] != tc.arg {
			t.Errorf("window %v: %v at %d, want %v at %d", tc.w, out[0], arg[0], tc.want, tc.arg)
		}
	}
	// Finite random windows: the same as first-maximum float comparison.
	rng := newRand(31)
	c := make([]float64, 20*64)
	for i := range c {
		c[i] = rng.NormFloat64()
		if i%7 == 0 {
			c[i] = c[i/2] // ties
		}
	}
	out, arg := make([]float64, 320), make([]uint8, 320)
	poolReLU(out, arg, c, 20, 8)
	for u := range out {
		k, y, x := u/16, u%16/4, u%4
		w := []float64{c[k*64+2*y*8+2*x], c[k*64+2*y*8+2*x+1], c[k*64+(2*y+1)*8+2*x], c[k*64+(2*y+1)*8+2*x+1]}
		first := 0
		for j, v := range w {
			if v > w[first] {
				first = j
			}
		}
		if out[u] != max(w[first], 0) || int(arg[u]) != first {
			t.Fatalf("unit %d, window %v: %v at %d, want %v at %d", u, w, out[u], arg[u], max(w[first], 0), first)
		}
	}
}

// fc1 reads conv2's pooled output flattened in (channel, y, x) order, as
// PyTorch's view(-1, 320). The weights below make a2[c][y][x] an integer
// that encodes (c, y, x), let fc1 unit k copy flat element idx[k] and fc2
// copy unit k to logit k, so logit k must equal the code of idx[k].
func TestFlattenOrder(t *testing.T) {
	theta := make([]float64, NumParams)
	ts := Tensors()
	ts[0].Of(theta)[0] = 1 // conv1 channel 0 copies the pixel under tap (0,0)
	w2, b2 := ts[2].Of(theta), ts[3].Of(theta)
	for c := 0; c < 20; c++ {
		w2[c*250] = 1 // conv2 channel c copies conv1's channel 0 at tap (0,0)
		b2[c] = float64(1000 * c)
	}
	idx := []int{0, 1, 4, 15, 16, 17, 100, 203, 318, 319}
	w3, w4 := ts[4].Of(theta), ts[6].Of(theta)
	for k, i := range idx {
		w3[k*320+i] = 1
		w4[k*50+k] = 1
	}
	x := make([]float64, InputSize)
	for i := range x {
		x[i] = float64(i) // pixel (y, x) = 28y + x: window maxima are bottom-right
	}
	logits := New(1).Forward(theta, x, Eval, nil)
	for k, i := range idx {
		c, qy, qx := i/16, i%16/4, i%4
		// a1[0][py][px] = x[2py+1][2px+1]; a2[c][qy][qx] = a1[0][2qy+1][2qx+1] + 1000c.
		want := float64((4*qy+3)*28 + 4*qx + 3 + 1000*c)
		if logits[k] != want {
			t.Errorf("flat index %d (c %d, y %d, x %d): logit %v, want %v", i, c, qy, qx, logits[k], want)
		}
	}
}

// unpool against its definition, written as the plain loop with the skip
// as a branch: units whose output is +0 (cut by the ReLU) or whose gradient
// is ±0 contribute nothing. The branch-free unpool must give the same bits
// of dc, of the bias sums and of hit, on gradients with zeros of both signs
// and outputs with many +0.
func TestUnpoolMatchesDefinition(t *testing.T) {
	rng := newRand(41)
	negz := math.Copysign(0, -1)
	for trial := range 50 {
		const ch, side = 20, 8
		n := ch * side / 2 * side / 2
		a, da, arg := make([]float64, n), make([]float64, n), make([]uint8, n)
		for u := range n {
			if rng.IntN(2) == 0 {
				a[u] = rng.Float64() * 3
			}
			switch rng.IntN(4) {
			case 0:
				da[u] = negz
			case 1:
				da[u] = 0
			default:
				da[u] = rng.NormFloat64()
			}
			arg[u] = uint8(rng.IntN(4))
		}
		gb := make([]float64, ch)
		dc := make([]float64, ch*side*side)
		hit := make([]uint8, side*side)
		unpool(dc, gb, da, a, arg, ch, side, hit)

		wantGb, wantDc, wantHit := make([]float64, ch), make([]float64, ch*side*side), make([]uint8, side*side)
		half := side / 2
		for k := range ch {
			for y := range half {
				for x := range half {
					u := k*half*half + y*half + x
					if da[u] == 0 || !(a[u] > 0) {
						continue
					}
					pos := (2*y+int(arg[u]>>1))*side + 2*x + int(arg[u]&1)
					wantDc[k*side*side+pos] = da[u]
					wantGb[k] += da[u]
					wantHit[pos] = 1
				}
			}
		}
		for i := range dc {
			if math.Float64bits(dc[i]) != math.Float64bits(wantDc[i]) {
				t.Fatalf("trial %d: dc[%d] = %v, want %v", trial, i, dc[i], wantDc[i])
			}
		}
		for k := range gb {
			if math.Float64bits(gb[k]) != math.Float64bits(wantGb[k]) {
				t.Fatalf("trial %d: gb[%d] = %v, want %v", trial, k, gb[k], wantGb[k])
			}
		}
		if !slices.Equal(hit, wantHit) {
			t.Fatalf("trial %d: hit %v, want %v", trial, hit, wantHit)
		}
	}
}

// im2col2 against its formula p[(y·8+x)·250 + c·25 + ki·5 + kj] =
// a[c·144 + (y+ki)·12 + x+kj], on a map whose every value is distinct.
func TestIm2col2Formula(t *testing.T) {
	a := make([]float64, a1Len)
	for i := range a {
		a[i] = float64(i) + 0.5
	}
	p := make([]float64, c2Px*c2In)
	im2col2(p, a)
	for y := range c2Sz {
		for x := range c2Sz {
			for c := range c1Ch {
				for ki := range k5 {
					for kj := range k5 {
						got := p[(y*c2Sz+x)*c2In+c*kk+ki*k5+kj]
						if want := a[c*p1Px+(y+ki)*p1Sz+x+kj]; got != want {
							t.Fatalf("patch (%d,%d), tap (%d,%d,%d): %v, want %v", y, x, c, ki, kj, got, want)
						}
					}
				}
			}
		}
	}
}

package lenet

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
)

// Mode selects dropout.
type Mode int

const (
	// Eval disables dropout (PyTorch's model.eval()).
	Eval Mode = iota
	// Train applies dropout after fc1 with masks drawn from the rng given
	// to Forward (PyTorch's model.train()).
	Train
)

func (m Mode) String() string {
	switch m {
	case Eval:
		return "eval"
	case Train:
		return "train"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Layer geometry (spec §2.2).
const (
	k5    = 5            // kernel side
	kk    = k5 * k5      // 25 taps per input channel
	c1Ch  = 10           // conv1 output channels
	c1Sz  = 24           // conv1 output side
	c1Px  = c1Sz * c1Sz  // 576
	p1Sz  = 12           // pool1 output side
	p1Px  = p1Sz * p1Sz  // 144
	a1Len = c1Ch * p1Px  // 1440 activations after pool1+ReLU
	c2Ch  = 20           // conv2 output channels
	c2In  = c1Ch * kk    // 250: conv2 patch length (in·kh·kw)
	c2Sz  = 8            // conv2 output side
	c2Px  = c2Sz * c2Sz  // 64
	p2Sz  = 4            // pool2 output side
	p2Px  = p2Sz * p2Sz  // 16
	a2Len = c2Ch * p2Px  // 320 = fc1 input
	keepP = 1 - DropoutP // keep probability
	scale = 1 / keepP    // inverted-dropout factor (2)
)

// Net is LeNet (spec §2.2) with workspaces for batches of up to Cap
// images. The parameters are not part of a Net: Forward takes them as a
// flat vector (see Tensors for the layout), so one Net serves any number of
// parameter vectors, e.g. ARS's perturbed copies.
//
// A Net is not safe for concurrent use; use one Net per goroutine. Its
// results are deterministic: the same parameters, images, mode and dropout
// stream give the same bits, whatever GOMAXPROCS, and each image's logits
// do not depend on the other images of the batch.
type Net struct {
	cap int

	// state of the last Forward, read by Backward
	n     int
	mode  Mode
	theta []float64
	x     []float64

	// per-image scratch
	cols1 []float64 // 25×576: conv1 im2col, row (ki,kj), column (y,x)
	c1    []float64 // 10×576: conv1 output (with bias, before pooling)
	p2    []float64 // 64×250: conv2 patches, row (y,x), column (c,ki,kj)
	c2    []float64 // 20×64: conv2 output (with bias, before pooling)

	// per-batch activations, image-major
	a1   []float64 // cap×1440: relu(maxpool(conv1)), (c,y,x)
	arg1 []uint8   // cap×1440: argmax of each pool1 window, 2·dy+dx
	a2   []float64 // cap×320: relu(maxpool(conv2)) = flattened fc1 input, (c,y,x)
	arg2 []uint8   // cap×320
	h1   []float64 // cap×50: relu(fc1)
	mask []float64 // cap×50: dropout factors, 0 or 2 (Train)
	d1   []float64 // cap×50: h1·mask (Train)
	out  []float64 // cap×10: logits

	bw    *backward  // allocated by the first Backward
	stats *gemmStats // benchmark instrumentation; nil otherwise

	// direct: the convolutions of Forward run as direct AVX2 kernels
	// (conv_openblas.go) rather than im2col + Dgemm, with the same bits;
	// New sets it where the build has them (directConv). Tests and
	// benchmarks clear it to compare the two.
	direct bool
}

// backward holds the scratch only Backward needs.
type backward struct {
	dD1 []float64 // cap×50: ∂L/∂(fc2 input), then ∂L/∂(fc1 pre-activation)
	dA2 []float64 // cap×320
	dC2 []float64 // 20×64: ∂L/∂(conv2 output) of one image
	dP2 []float64 // 64×250: ∂L/∂(conv2 patches) of one image
	dA1 []float64 // 1440
	dC1 []float64 // 10×576
	hit [c2Px]uint8
}

// New returns a Net for batches of 1 to capacity images. It panics if
// capacity < 1.
func New(capacity int) *Net {
	if capacity < 1 {
		panic(fmt.Sprintf("lenet: New: capacity %d < 1", capacity))
	}
	c := capacity
	return &Net{
		cap:   c,
		cols1: make([]float64, kk*c1Px),
		c1:    make([]float64, c1Ch*c1Px),
		p2:    make([]float64, c2Px*c2In),
		c2:    make([]float64, c2Ch*c2Px),
		a1:    make([]float64, c*a1Len),
		arg1:  make([]uint8, c*a1Len),
		a2:    make([]float64, c*a2Len),
		arg2:  make([]uint8, c*a2Len),
		h1:    make([]float64, c*Hidden),
		mask:  make([]float64, c*Hidden),
		d1:    make([]float64, c*Hidden),
		out:   make([]float64, c*Classes),

		direct: directConv,
	}
}

// Cap returns the largest batch the Net accepts.
func (net *Net) Cap() int { return net.cap }

// WorkspaceBytes returns the bytes of the Net's buffers: the forward
// workspaces, plus the backward ones once Backward has run.
func (net *Net) WorkspaceBytes() int {
	f := len(net.cols1) + len(net.c1) + len(net.p2) + len(net.c2) + len(net.a1) + len(net.a2) +
		len(net.h1) + len(net.mask) + len(net.d1) + len(net.out)
	b := len(net.arg1) + len(net.arg2)
	if bw := net.bw; bw != nil {
		f += len(bw.dD1) + len(bw.dA2) + len(bw.dC2) + len(bw.dP2) + len(bw.dA1) + len(bw.dC1)
		b += len(bw.hit)
	}
	return 8*f + b
}

// Forward computes the logits of the n = len(x)/InputSize images in x
// (each InputSize pixels, row-major; n ≤ Cap) under the parameters theta
// (length NumParams) and returns them as n×Classes values, row-major. The
// returned slice belongs to the Net and is overwritten by the next Forward.
//
// The layers are those of spec §2.2: conv1 (1→10, 5×5) → maxpool 2 → ReLU →
// conv2 (10→20, 5×5) → maxpool 2 → ReLU → flatten (c,y,x) → fc1 (320→50) →
// ReLU → dropout → fc2 (50→10). Convolutions run image by image, as im2col
// + Dgemm or, where the build has them, as direct kernels that give the
// same bits (see Net.direct); the linear layers are one Dgemm over the
// batch. Every layer starts
// from its bias and adds the products (C = bias, then C += W·X). Max-pooling
// takes the first maximum of each 2×2 window in row-major order (a NaN wins,
// as in PyTorch); ReLU(v) = v if v > 0, else 0.
//
// In Train mode, dropout draws one rng.Float64() u per fc1 unit, image by
// image and unit by unit (n·50 draws); a unit is kept iff u < 1−DropoutP and
// kept units are multiplied by 1/(1−DropoutP) = 2. In Eval mode rng is not
// used and may be nil.
//
// Backward may follow; it reads theta and x, which must not be modified in
// between. Forward panics on a wrong parameter length, an x that is empty,
// not a multiple of InputSize or larger than Cap images, or Train with a
// nil rng.
func (net *Net) Forward(theta, x []float64, mode Mode, rng *rand.Rand) []float64 {
	checkParams("Forward", theta)
	n := len(x) / InputSize
	if len(x)%InputSize != 0 || n < 1 || n > net.cap {
		panic(fmt.Sprintf("lenet: Forward: len(x) = %d, want a multiple of %d for 1 to %d images", len(x), InputSize, net.cap))
	}
	if mode != Eval && mode != Train {
		panic(fmt.Sprintf("lenet: Forward: unknown %v", mode))
	}
	if mode == Train && rng == nil {
		panic("lenet: Forward: Train mode needs a dropout rng")
	}
	net.n, net.mode, net.theta, net.x = 0, mode, theta, x

	w1, b1 := theta[OffConv1W:OffConv1B], theta[OffConv1B:OffConv2W]
	w2, b2 := theta[OffConv2W:OffConv2B], theta[OffConv2B:OffFC1W]
	w3, b3 := theta[OffFC1W:OffFC1B], theta[OffFC1B:OffFC2W]
	w4, b4 := theta[OffFC2W:OffFC2B], theta[OffFC2B:NumParams]

	for b := 0; b < n; b++ {
		a1 := net.a1[b*a1Len : (b+1)*a1Len]
		net.conv1(w1, b1, x[b*InputSize:(b+1)*InputSize])
		poolReLU(a1, net.arg1[b*a1Len:(b+1)*a1Len], net.c1, c1Ch, c1Sz)
		net.conv2(w2, b2, a1)
		poolReLU(net.a2[b*a2Len:(b+1)*a2Len], net.arg2[b*a2Len:(b+1)*a2Len], net.c2, c2Ch, c2Sz)
	}

	h1 := net.h1[:n*Hidden]
	fillCols(h1, b3)
	gemm(net.stats, blas.NoTrans, blas.Trans, n, Hidden, a2Len, 1, net.a2, a2Len, w3, a2Len, 1, h1, Hidden)
	for i, v := range h1 {
		if !(v > 0) {
			h1[i] = 0
		}
	}

	in2 := h1
	if mode == Train {
		mask, d1 := net.mask[:n*Hidden], net.d1[:n*Hidden]
		for i, v := range h1 {
			if rng.Float64() < keepP {
				mask[i], d1[i] = scale, v*scale
			} else {
				mask[i], d1[i] = 0, 0
			}
		}
		in2 = d1
	}

	out := net.out[:n*Classes]
	fillCols(out, b4)
	gemm(net.stats, blas.NoTrans, blas.Trans, n, Classes, Hidden, 1, in2, Hidden, w4, Hidden, 1, out, Classes)
	net.n = n
	return out
}

// Backward computes the gradient, with respect to the parameters of the last
// Forward, of a loss L whose gradient with respect to that Forward's logits
// is dlogits (n×Classes, row-major), and writes it into grad (length
// NumParams, same layout as theta), overwriting it. In Train mode the
// gradient flows through the dropout mask of that Forward; ReLU and
// max-pooling pass gradient to positive units and to the recorded argmax
// (PyTorch's conventions: ReLU′(0) = 0).
//
// Summation orders are fixed: bias gradients add image by image, unit by
// unit; weight gradients are Dgemm products over the batch (fc) or
// accumulated image by image (conv, β = 1). It panics if no Forward
// preceded it or on wrong lengths.
func (net *Net) Backward(dlogits, grad []float64) {
	n := net.n
	if n == 0 {
		panic("lenet: Backward without a preceding Forward")
	}
	if len(dlogits) != n*Classes {
		panic(fmt.Sprintf("lenet: Backward: len(dlogits) = %d, want %d", len(dlogits), n*Classes))
	}
	checkParams("Backward (grad)", grad)
	bw := net.backwardScratch()
	clear(grad)
	theta := net.theta
	w2 := theta[OffConv2W:OffConv2B]
	w3 := theta[OffFC1W:OffFC1B]
	w4 := theta[OffFC2W:OffFC2B]
	gw1, gb1 := grad[OffConv1W:OffConv1B], grad[OffConv1B:OffConv2W]
	gw2, gb2 := grad[OffConv2W:OffConv2B], grad[OffConv2B:OffFC1W]
	gw3, gb3 := grad[OffFC1W:OffFC1B], grad[OffFC1B:OffFC2W]
	gw4, gb4 := grad[OffFC2W:OffFC2B], grad[OffFC2B:NumParams]

	// fc2
	h1 := net.h1[:n*Hidden]
	in2 := h1
	if net.mode == Train {
		in2 = net.d1[:n*Hidden]
	}
	sumRows(gb4, dlogits)
	gemm(net.stats, blas.Trans, blas.NoTrans, Classes, Hidden, n, 1, dlogits, Classes, in2, Hidden, 0, gw4, Hidden)
	dz1 := bw.dD1[:n*Hidden]
	gemm(net.stats, blas.NoTrans, blas.NoTrans, n, Hidden, Classes, 1, dlogits, Classes, w4, Hidden, 0, dz1, Hidden)

	// dropout, ReLU
	for i, g := range dz1 {
		switch {
		case !(h1[i] > 0):
			dz1[i] = 0
		case net.mode == Train:
			if net.mask[i] == 0 {
				dz1[i] = 0
			} else {
				dz1[i] = g * net.mask[i]
			}
		}
	}

	// fc1
	sumRows(gb3, dz1)
	a2 := net.a2[:n*a2Len]
	gemm(net.stats, blas.Trans, blas.NoTrans, Hidden, a2Len, n, 1, dz1, Hidden, a2, a2Len, 0, gw3, a2Len)
	da2 := bw.dA2[:n*a2Len]
	gemm(net.stats, blas.NoTrans, blas.NoTrans, n, a2Len, Hidden, 1, dz1, Hidden, w3, a2Len, 0, da2, a2Len)

	// convolutions, image by image
	for b := 0; b < n; b++ {
		a1 := net.a1[b*a1Len : (b+1)*a1Len]

		// ReLU and pool2 → conv2 output gradient
		clear(bw.dC2)
		clear(bw.hit[:])
		unpool(bw.dC2, gb2, da2[b*a2Len:(b+1)*a2Len], net.a2[b*a2Len:(b+1)*a2Len], net.arg2[b*a2Len:(b+1)*a2Len], c2Ch, c2Sz, bw.hit[:])

		// conv2: weight gradient and patch gradient
		im2col2(net.p2, a1)
		gemm(net.stats, blas.NoTrans, blas.NoTrans, c2Ch, c2In, c2Px, 1, bw.dC2, c2Px, net.p2, c2In, 1, gw2, c2In)
		gemm(net.stats, blas.Trans, blas.NoTrans, c2Px, c2In, c2Ch, 1, bw.dC2, c2Px, w2, c2In, 0, bw.dP2, c2In)
		col2im2(bw.dA1, bw.dP2, bw.hit[:])

		// ReLU and pool1 → conv1 output gradient
		clear(bw.dC1)
		unpool(bw.dC1, gb1, bw.dA1, a1, net.arg1[b*a1Len:(b+1)*a1Len], c1Ch, c1Sz, nil)

		// conv1: weight gradient (the input gradient is not needed)
		im2col1(net.cols1, net.x[b*InputSize:(b+1)*InputSize])
		gemm(net.stats, blas.NoTrans, blas.Trans, c1Ch, kk, c1Px, 1, bw.dC1, c1Px, net.cols1, c1Px, 1, gw1, kk)
	}
}

// conv1GEMM sets c1 to conv1 of one image (28×28), bias included: its
// patches laid out by im2col1, then c1 = b1, c1 += W1 · cols (one Dgemm).
func (net *Net) conv1GEMM(w1, b1, img []float64) {
	im2col1(net.cols1, img)
	fillRows(net.c1, b1, c1Px)
	gemm(net.stats, blas.NoTrans, blas.NoTrans, c1Ch, c1Px, kk, 1, w1, kk, net.cols1, c1Px, 1, net.c1, c1Px)
}

// conv2GEMM sets c2 to conv2 of one pooled map a1 (10×12×12), bias
// included: its patches laid out by im2col2, then c2 = b2, c2 += W2 · pᵀ.
func (net *Net) conv2GEMM(w2, b2, a1 []float64) {
	im2col2(net.p2, a1)
	fillRows(net.c2, b2, c2Px)
	gemm(net.stats, blas.NoTrans, blas.Trans, c2Ch, c2Px, c2In, 1, w2, c2In, net.p2, c2In, 1, net.c2, c2Px)
}

func (net *Net) backwardScratch() *backward {
	if net.bw == nil {
		c := net.cap
		net.bw = &backward{
			dD1: make([]float64, c*Hidden),
			dA2: make([]float64, c*a2Len),
			dC2: make([]float64, c2Ch*c2Px),
			dP2: make([]float64, c2Px*c2In),
			dA1: make([]float64, a1Len),
			dC1: make([]float64, c1Ch*c1Px),
		}
	}
	return net.bw
}

// fillRows sets row r of the len(bias)×cols matrix c to bias[r].
func fillRows(c, bias []float64, cols int) {
	for r, v := range bias {
		row := c[r*cols : (r+1)*cols]
		for j := range row {
			row[j] = v
		}
	}
}

// fillCols sets every row of the matrix c (len(bias) columns) to bias.
func fillCols(c, bias []float64) {
	for i := 0; i < len(c); i += len(bias) {
		copy(c[i:i+len(bias)], bias)
	}
}

// sumRows sets dst[j] = Σ_i m[i][j] (len(dst) columns), summing rows in
// order.
func sumRows(dst, m []float64) {
	cols := len(dst)
	for i := 0; i < len(m); i += cols {
		for j, v := range m[i : i+cols] {
			dst[j] += v
		}
	}
}

// im2col1 lays out the 5×5 patches of a 28×28 image as the 25×576 matrix
// cols: cols[(ki·5+kj)·576 + y·24 + x] = img[(y+ki)·28 + x+kj], so that
// conv1 = W1 (10×25) · cols.
func im2col1(cols, img []float64) {
	for ki := 0; ki < k5; ki++ {
		for kj := 0; kj < k5; kj++ {
			row := cols[(ki*k5+kj)*c1Px : (ki*k5+kj+1)*c1Px]
			for y := 0; y < c1Sz; y++ {
				copy(row[y*c1Sz:(y+1)*c1Sz], img[(y+ki)*InputW+kj:])
			}
		}
	}
}

// im2col2 lays out the 10×5×5 patches of the 10×12×12 map a as the 64×250
// matrix p: p[(y·8+x)·250 + c·25 + ki·5 + kj] = a[c·144 + (y+ki)·12 + x+kj],
// so that conv2 = W2 (20×250) · pᵀ. Each row of a is read once, into
// registers, and written into the eight patches that overlap it (written
// out: a loop over the patches with array copies makes the whole
// forward+backward pass about 6% slower).
func im2col2(p, a []float64) {
	for y := 0; y < c2Sz; y++ {
		out := p[y*c2Sz*c2In : (y+1)*c2Sz*c2In]
		for c := 0; c < c1Ch; c++ {
			for ki := 0; ki < k5; ki++ {
				src := (*[p1Sz]float64)(a[c*p1Px+(y+ki)*p1Sz:])
				s0, s1, s2, s3, s4, s5 := src[0], src[1], src[2], src[3], src[4], src[5]
				s6, s7, s8, s9, s10, s11 := src[6], src[7], src[8], src[9], src[10], src[11]
				o := c*kk + ki*k5
				d := (*[k5]float64)(out[o:])
				d[0], d[1], d[2], d[3], d[4] = s0, s1, s2, s3, s4
				d = (*[k5]float64)(out[o+c2In:])
				d[0], d[1], d[2], d[3], d[4] = s1, s2, s3, s4, s5
				d = (*[k5]float64)(out[o+2*c2In:])
				d[0], d[1], d[2], d[3], d[4] = s2, s3, s4, s5, s6
				d = (*[k5]float64)(out[o+3*c2In:])
				d[0], d[1], d[2], d[3], d[4] = s3, s4, s5, s6, s7
				d = (*[k5]float64)(out[o+4*c2In:])
				d[0], d[1], d[2], d[3], d[4] = s4, s5, s6, s7, s8
				d = (*[k5]float64)(out[o+5*c2In:])
				d[0], d[1], d[2], d[3], d[4] = s5, s6, s7, s8, s9
				d = (*[k5]float64)(out[o+6*c2In:])
				d[0], d[1], d[2], d[3], d[4] = s6, s7, s8, s9, s10
				d = (*[k5]float64)(out[o+7*c2In:])
				d[0], d[1], d[2], d[3], d[4] = s7, s8, s9, s10, s11
			}
		}
	}
}

// col2im2 is the adjoint of im2col2: it sets da to the sum, over the patch
// rows of dp, of each patch element into its source position; rows with
// hit[row] = 0 are known to be zero and skipped (adding +0 to a sum that
// started at +0 changes no bits).
func col2im2(da, dp []float64, hit []uint8) {
	clear(da)
	for y := 0; y < c2Sz; y++ {
		for x := 0; x < c2Sz; x++ {
			if hit[y*c2Sz+x] == 0 {
				continue
			}
			row := dp[(y*c2Sz+x)*c2In : (y*c2Sz+x+1)*c2In]
			for c := 0; c < c1Ch; c++ {
				for ki := 0; ki < k5; ki++ {
					dst := da[c*p1Px+(y+ki)*p1Sz+x : c*p1Px+(y+ki)*p1Sz+x+k5]
					src := row[c*kk+ki*k5 : c*kk+ki*k5+k5]
					dst[0] += src[0]
					dst[1] += src[1]
					dst[2] += src[2]
					dst[3] += src[3]
					dst[4] += src[4]
				}
			}
		}
	}
}

// poolReLU max-pools each of the ch channels of the side×side maps in c
// (2×2, stride 2) and then applies ReLU: out[c][y][x] = relu(max of the
// window), arg[c][y][x] = 2·dy+dx of the window's first maximum in
// row-major order.
//
// Windows of finite values compare order-preserving integer keys of the
// floats (see key), which compiles to conditional moves: data-dependent
// branches would mispredict on about half the windows and cost more than
// the rest of the pooling. The keys order −0 below +0, so a window whose
// maximum is a zero may record a different zero than a float comparison
// would; its output is 0 either way and no gradient flows through it.
// Windows holding a NaN or ±Inf take poolNaN, PyTorch's rule.
func poolReLU(out []float64, arg []uint8, c []float64, ch, side int) {
	half := side / 2
	for k := 0; k < ch; k++ {
		m := c[k*side*side : (k+1)*side*side]
		o := out[k*half*half : (k+1)*half*half]
		g := arg[k*half*half : (k+1)*half*half]
		for y := 0; y < half; y++ {
			r0 := m[2*y*side : (2*y+1)*side]
			r1 := m[(2*y+1)*side : (2*y+2)*side]
			o, g := o[y*half:(y+1)*half], g[y*half:(y+1)*half]
			for x := range o {
				v0, v1, v2, v3 := r0[2*x], r0[2*x+1], r1[2*x], r1[2*x+1]
				if s := v0 + v1 + v2 + v3; s-s != 0 {
					best, at := poolNaN(v0, v1, v2, v3)
					if !(best > 0) {
						best = 0
					}
					o[x], g[x] = best, at
					continue
				}
				bk, at := key(v0), 0
				if k1 := key(v1); k1 > bk {
					bk, at = k1, 1
				}
				if k2 := key(v2); k2 > bk {
					bk, at = k2, 2
				}
				if k3 := key(v3); k3 > bk {
					bk, at = k3, 3
				}
				if bk <= 0 { // the maximum is ≤ 0: ReLU gives +0
					bk = 0
				}
				o[x], g[x] = unkey(bk), uint8(at)
			}
		}
	}
}

// key maps a float64 to an int64 that orders like the float for non-NaN
// values (with −0 < +0): negative floats get their magnitude bits flipped.
func key(v float64) int64 {
	b := int64(math.Float64bits(v))
	return b ^ int64(uint64(b>>63)>>1)
}

// unkey inverts key.
func unkey(k int64) float64 { return math.Float64frombits(uint64(k ^ int64(uint64(k>>63)>>1))) }

// poolNaN is the max of a 2×2 window with PyTorch's NaN rule.
func poolNaN(v0, v1, v2, v3 float64) (float64, uint8) {
	best, at := v0, uint8(0)
	for i, v := range [3]float64{v1, v2, v3} {
		if v > best || v != v {
			best, at = v, uint8(i+1)
		}
	}
	return best, at
}

// unpool is the adjoint of poolReLU: for every pooled unit whose output a is
// positive and whose gradient g = da is non-zero, it writes g at the unit's
// argmax in dc (ch channels of side×side, which must be zero on entry), adds
// g to gb[channel] (unit order), and marks the position in hit (1) when hit
// is not nil.
//
// Every other unit contributes +0 instead, without a branch (about half the
// units are cut by the ReLU, at random, and a data-dependent branch would
// mispredict on them): +0 written where dc already holds +0, +0 added to a
// bias sum that starts at +0 and so is never −0 (a round-to-nearest sum is
// −0 only if both addends are), and 0 or-ed into hit. The bits are those of
// skipping the unit. A ReLU output is +0 or positive, never −0 or NaN, so
// "positive" is "not all bits zero"; a zero gradient of either sign counts
// as zero.
func unpool(dc, gb, da, a []float64, arg []uint8, ch, side int, hit []uint8) {
	half := side / 2
	n := half * half
	for k := 0; k < ch; k++ {
		dk := dc[k*side*side : (k+1)*side*side]
		ak, gk, argk := a[k*n:(k+1)*n], da[k*n:(k+1)*n], arg[k*n:(k+1)*n]
		sum := gb[k]
		for y := 0; y < half; y++ {
			for x := 0; x < half; x++ {
				u := y*half + x
				g := math.Float64bits(gk[u])
				m := ^uint64(0)
				if math.Float64bits(ak[u]) == 0 {
					m = 0
				}
				if g<<1 == 0 {
					m = 0
				}
				v := math.Float64frombits(g & m)
				pos := (2*y+int(argk[u]>>1))*side + 2*x + int(argk[u]&1)
				dk[pos] = v
				sum += v
				if hit != nil {
					hit[pos] |= uint8(m & 1)
				}
			}
		}
		gb[k] = sum
	}
}

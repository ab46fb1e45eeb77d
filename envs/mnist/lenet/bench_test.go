package lenet

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
)

// BenchmarkNet measures one core (GOMAXPROCS 1 inside the benchmark) on
// batches of MNIST-like images (80% zero pixels, as MNIST's background):
//
//	img/s        images per second end to end
//	e2e-GFLOP/s  the pass's nominal flops (2·m·n·k for each product of its
//	             im2col + Dgemm formulation) per second of the whole pass
//	gemm-share   fraction of the pass spent inside gemm (in situ, with the
//	             real operands, whose zeros gonum's kernels skip)
//	raw-GFLOP/s  the build's Dgemm alone on the sequence of shapes of the
//	             im2col + Dgemm formulation (same pieces, transposes and
//	             leading dimensions) with dense random operands, measured
//	             right after the pass in the same run
//	frac         e2e-GFLOP/s ÷ raw-GFLOP/s
//	ws-bytes     the Net's workspace bytes (WorkspaceBytes)
//
// The passes run as Forward runs them in this build (direct convolutions
// where it has them; BenchmarkConvolutions compares the two).
//
// Run: go test [-tags openblas] -run '^$' -bench Net -benchtime 3s ./envs/mnist/lenet
func BenchmarkNet(b *testing.B) {
	b.Run("forward/eval/batch=64", func(b *testing.B) { benchNet(b, 64, Eval, false) })
	b.Run("forward/train/batch=64", func(b *testing.B) { benchNet(b, 64, Train, false) })
	b.Run("forward+backward/train/batch=64", func(b *testing.B) { benchNet(b, 64, Train, true) })
	b.Run("forward/eval/batch=1", func(b *testing.B) { benchNet(b, 1, Eval, false) })
	b.Run("forward/eval/batch=100", func(b *testing.B) { benchNet(b, 100, Eval, false) })           // evaluate/mnist
	b.Run("forward+backward/train/batch=256", func(b *testing.B) { benchNet(b, 256, Train, true) }) // REINFORCE
	b.Run("forward/eval/batch=250", func(b *testing.B) { benchNet(b, 250, Eval, false) })
}

// netPass is one timed pass of a benchmark: Forward, and Backward of the
// cross-entropy when backward is set.
type netPass struct {
	theta, x []float64
	y        []int
	mode     Mode
	backward bool
	rng      *rand.Rand
	dl, grad []float64
}

func newNetPass(batch int, mode Mode, backward bool) *netPass {
	return &netPass{
		theta: NewParams(newRand(1)), x: pixelImages(newRand(2), batch), y: testLabels(batch),
		mode: mode, backward: backward, rng: newRand(3),
		dl: make([]float64, batch*Classes), grad: make([]float64, NumParams),
	}
}

func (p *netPass) run(net *Net) {
	logits := net.Forward(p.theta, p.x, p.mode, p.rng)
	if p.backward {
		CrossEntropy(logits, p.y, p.dl)
		net.Backward(p.dl, p.grad)
	}
}

func benchNet(b *testing.B, batch int, mode Mode, backward bool) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := newNetPass(batch, mode, backward)
	// One recorded pass of the im2col + Dgemm formulation for the shapes
	// and the nominal flops, then the timed passes, each followed (timer
	// stopped) by a replay of those GEMMs on dense operands, so that both
	// see the same machine load.
	ref := New(batch)
	ref.direct = false
	ref.stats = &gemmStats{record: true}
	p.run(ref)
	raw := newReplay(ref.stats.shapes)
	net := New(batch)
	st := &gemmStats{}
	net.stats = st
	var rawDur time.Duration
	b.ResetTimer()
	for range b.N {
		p.run(net)
		b.StopTimer()
		rawDur += raw.run()
		b.StartTimer()
	}
	b.StopTimer()
	el := b.Elapsed().Seconds()
	e2e := raw.flops * float64(b.N) / el / 1e9
	rawRate := raw.flops * float64(b.N) / rawDur.Seconds() / 1e9
	b.ReportMetric(float64(batch*b.N)/el, "img/s")
	b.ReportMetric(e2e, "e2e-GFLOP/s")
	b.ReportMetric(st.dur.Seconds()/el, "gemm-share")
	b.ReportMetric(rawRate, "raw-GFLOP/s")
	b.ReportMetric(e2e/rawRate, "frac")
	b.ReportMetric(float64(net.WorkspaceBytes()), "ws-bytes")
}

// BenchmarkConvolutions compares, on one core, passes whose convolutions
// are the direct kernels with the same passes through im2col + Dgemm (the
// same bits), alternating in one run:
//
//	products-ms  a pass with im2col + Dgemm
//	direct-ms    the same pass with the direct kernels
//	speedup      products-ms ÷ direct-ms
//
// Run: go test -tags openblas -run '^$' -bench Convolutions ./envs/mnist/lenet
func BenchmarkConvolutions(b *testing.B) {
	if !directConv {
		b.Skipf("%s: no direct convolution kernels in this build or on this CPU", BLAS())
	}
	for _, c := range []struct {
		name     string
		batch    int
		mode     Mode
		backward bool
	}{
		{"forward/eval/batch=100", 100, Eval, false},           // evaluate/mnist
		{"forward/train/batch=1", 1, Train, false},             // an ARS query
		{"forward+backward/train/batch=64", 64, Train, true},   // SGD
		{"forward+backward/train/batch=256", 256, Train, true}, // REINFORCE
	} {
		b.Run(c.name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			p := newNetPass(c.batch, c.mode, c.backward)
			direct, prod := New(c.batch), New(c.batch)
			prod.direct = false
			reps := max(1, 100/c.batch) // passes per timed round
			var dDur, pDur time.Duration
			for range b.N {
				t0 := time.Now()
				for range reps {
					p.run(prod)
				}
				t1 := time.Now()
				for range reps {
					p.run(direct)
				}
				pDur += t1.Sub(t0)
				dDur += time.Since(t1)
			}
			n := float64(b.N * reps)
			b.ReportMetric(pDur.Seconds()*1e3/n, "products-ms")
			b.ReportMetric(dDur.Seconds()*1e3/n, "direct-ms")
			b.ReportMetric(pDur.Seconds()/dDur.Seconds(), "speedup")
		})
	}
}

// replay is the gemm calls of one pass on dense random operands. Calls of
// the same shape share operands, as the per-image calls of a pass share the
// Net's scratch, so the replay's cache footprint matches the pass's.
type replay struct {
	shapes []gemmShape
	ops    []*[3][]float64
	flops  float64
}

func newReplay(shapes []gemmShape) *replay {
	rng := newRand(4)
	fill := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	r := &replay{shapes: shapes}
	byShape := map[gemmShape]*[3][]float64{}
	for _, s := range shapes {
		o, ok := byShape[s]
		if !ok {
			ar, br := s.m, s.k // rows of the stored A and B
			if s.tA == blas.Trans {
				ar = s.k
			}
			if s.tB == blas.Trans {
				br = s.n
			}
			o = &[3][]float64{fill(ar * s.lda), fill(br * s.ldb), fill(s.m * s.ldc)}
			byShape[s] = o
		}
		r.ops = append(r.ops, o)
		r.flops += 2 * float64(s.m) * float64(s.n) * float64(s.k)
	}
	return r
}

// run replays the calls once and returns the time taken.
func (r *replay) run() time.Duration {
	start := time.Now()
	for i, s := range r.shapes {
		o := r.ops[i]
		gemm(nil, s.tA, s.tB, s.m, s.n, s.k, 1, o[0], s.lda, o[1], s.ldb, s.beta, o[2], s.ldc)
	}
	return time.Since(start)
}

// BenchmarkConvBatching compares, on one core, each convolution's product
// done image by image (as Forward does it) with the same product batched
// over evaluate/mnist's batch of 100 images (one GEMM per layer: the
// images' patch matrices side by side), in alternating timed rounds on
// dense random operands:
//
//	per-image-GFLOP/s  100 products of one image's shape
//	batched-GFLOP/s    one product of 100 images' width
//	speedup            per-image time ÷ batched time (> 1: batching pays)
//
// It is the measurement behind Forward's choice to stay image by image:
// the layers' products are thin (10 or 20 output channels), and widening
// them only moves the operands out of the caches.
//
// Run: go test -tags openblas -run '^$' -bench ConvBatching ./envs/mnist/lenet
func BenchmarkConvBatching(b *testing.B) {
	const images = 100 // EvalBatch of envs/mnist
	layers := []struct {
		name    string
		tB      blas.Transpose
		m, n, k int
	}{
		{"conv1", blas.NoTrans, c1Ch, c1Px, kk}, // W1 · cols
		{"conv2", blas.Trans, c2Ch, c2Px, c2In}, // W2 · pᵀ
	}
	for _, l := range layers {
		b.Run(l.name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			rng := newRand(5)
			fill := func(n int) []float64 {
				v := make([]float64, n)
				for i := range v {
					v[i] = rng.NormFloat64()
				}
				return v
			}
			// The batched product's B holds the images' patch matrices side by
			// side (their columns, or their rows when transposed), as a batched
			// im2col would write them; the per-image products reuse one
			// image's B and C, as Forward reuses its scratch.
			a := fill(l.m * l.k)
			bb := fill(images * l.n * l.k)
			c := fill(images * l.n * l.m)
			one := func() {
				gemm(nil, blas.NoTrans, l.tB, l.m, l.n, l.k, 1, a, l.k, bb, ldb(l.tB, l.n, l.k), 1, c, l.n)
			}
			batched := func() {
				gemm(nil, blas.NoTrans, l.tB, l.m, images*l.n, l.k, 1, a, l.k, bb, ldb(l.tB, images*l.n, l.k), 1, c, images*l.n)
			}
			var per, bat time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				for range images {
					one()
				}
				t1 := time.Now()
				batched()
				per += t1.Sub(t0)
				bat += time.Since(t1)
			}
			flops := 2 * float64(l.m*l.n*l.k) * images * float64(b.N)
			b.ReportMetric(flops/per.Seconds()/1e9, "per-image-GFLOP/s")
			b.ReportMetric(flops/bat.Seconds()/1e9, "batched-GFLOP/s")
			b.ReportMetric(per.Seconds()/bat.Seconds(), "speedup")
		})
	}
}

// ldb is the leading dimension of a row-major k×n B, or of its n×k
// transpose.
func ldb(t blas.Transpose, n, k int) int {
	if t == blas.Trans {
		return k
	}
	return n
}

package lenet

import (
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
)

// BenchmarkNet measures one core (GOMAXPROCS 1 inside the benchmark) on
// batches of MNIST-like images (80% zero pixels, as MNIST's background):
//
//	img/s        images per second end to end
//	e2e-GFLOP/s  the pass's nominal GEMM flops (2·m·n·k per product) per
//	             second of the whole pass
//	gemm-share   fraction of the pass spent inside gemm (in situ, with the
//	             real operands, whose zeros gonum's kernels skip)
//	raw-GFLOP/s  the build's Dgemm alone on the same sequence of shapes (same
//	             pieces, transposes and leading dimensions) with dense random
//	             operands, measured right after the pass in the same run
//	frac         e2e-GFLOP/s ÷ raw-GFLOP/s (target ≥ 0.5)
//	ws-bytes     the Net's workspace bytes (WorkspaceBytes)
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

func benchNet(b *testing.B, batch int, mode Mode, backward bool) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	theta := NewParams(newRand(1))
	x := pixelImages(newRand(2), batch)
	y := testLabels(batch)
	net := New(batch)
	rng := newRand(3)
	dl := make([]float64, batch*Classes)
	grad := make([]float64, NumParams)
	step := func() {
		logits := net.Forward(theta, x, mode, rng)
		if backward {
			CrossEntropy(logits, y, dl)
			net.Backward(dl, grad)
		}
	}
	// One recorded pass for the shapes, then the timed passes, each followed
	// (timer stopped) by a replay of its GEMMs on dense operands, so that
	// both see the same machine load.
	net.stats = &gemmStats{record: true}
	step()
	raw := newReplay(net.stats.shapes)
	st := &gemmStats{}
	net.stats = st
	var rawDur time.Duration
	b.ResetTimer()
	for range b.N {
		step()
		b.StopTimer()
		rawDur += raw.run()
		b.StartTimer()
	}
	b.StopTimer()
	el := b.Elapsed().Seconds()
	e2e := st.flops / el / 1e9
	rawRate := raw.flops * float64(b.N) / rawDur.Seconds() / 1e9
	b.ReportMetric(float64(batch*b.N)/el, "img/s")
	b.ReportMetric(e2e, "e2e-GFLOP/s")
	b.ReportMetric(st.dur.Seconds()/el, "gemm-share")
	b.ReportMetric(rawRate, "raw-GFLOP/s")
	b.ReportMetric(e2e/rawRate, "frac")
	b.ReportMetric(float64(net.WorkspaceBytes()), "ws-bytes")
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

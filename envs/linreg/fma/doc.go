// Package fma computes the matrix products on the hot path of linear
// regression as fused multiply–add chains in index order:
//
//	acc := 0; for k := 0 .. K−1 { acc = fma(a[k], b[k], acc) }
//
// for every output element, so that the same inputs give the same bits on
// every machine, with any number of cores.
//
// The amd64 kernel (AVX2 and FMA, chosen at start-up when the CPU and OS
// support them) runs 32 chains side by side, one per vector lane; the
// portable kernel (other architectures, the purego build tag, or an amd64
// CPU without AVX2) runs the same chains with math.FMA. A fused multiply–add
// is correctly rounded, so both kernels give identical results; the tests
// check both against the definition, bit for bit.
//
// Two products use it:
//   - Packed.MulT: Z = E·Fᵀ with F packed once (the sampler's z = Factor·ε of
//     spec §3.1.3, about 2·10⁶ flops per example at d = 1000);
//   - GramAdd: G += SᵀS (the realised stream's moments of the online-regret
//     experiment), upper triangle only.
//
// Measured side by side on one core of the development machine (Xeon, AVX2
// and FMA), on the d = 1000 shapes: MulT takes 0.34× the time of gonum's
// Dgemm for N = 10 rows, 0.25× for 200 and 0.26× for 256 (about 37 Gflop/s);
// GramAdd of a 1,000-round chunk takes 0.27× the time of gonum's Dsyrk
// (BenchmarkMulT, BenchmarkGramAdd). The portable kernel takes about 2.1×
// gonum's time.
package fma

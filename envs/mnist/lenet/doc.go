// Package lenet is the LeNet-style network of the MNIST experiment (spec
// §2.2; d = 21,840) with its forward pass, backward pass and the losses of
// SGD and REINFORCE, written over a BLAS (im2col + Dgemm): OpenBLAS
// through cgo in a build with the openblas tag (Debian's libopenblas-dev;
// gemm_openblas.go), gonum's pure Go otherwise (gemm_gonum.go). BLAS names
// the one in use; it enters every MNIST task's identity, because the two
// differ in the last bits of their products.
//
// Parameters are one flat []float64 of NumParams values: conv1.weight,
// conv1.bias, conv2.weight, conv2.bias, fc1.weight, fc1.bias, fc2.weight,
// fc2.bias, each row-major in its PyTorch shape (Tensors, Off* constants).
// This is the vector ARS perturbs and the snapshot layout of the pipeline.
// Init draws PyTorch v0.3's default initialization in that order.
//
// A Net holds preallocated workspaces for batches of up to Cap images;
// Forward returns logits, Backward the gradient of any loss given its
// gradient with respect to the logits (CrossEntropy and ReinforceLoss
// provide both). Inputs are images of InputSize float64 pixels, in whatever
// scale the caller chooses (raw 0–255 for SGD and REINFORCE, standardized for
// ARS, spec §2.1).
//
// Determinism: results depend only on the inputs (parameters, images, mode,
// dropout stream), bit for bit for a given BLAS and GOARCH. With gonum,
// gemm calls Dgemm on pieces small enough that it never spawns goroutines
// or cuts the inner dimension, so results do not depend on GOMAXPROCS, and
// an image's logits do not depend on the rest of its batch (a batch and its
// images one by one give the same bits). OpenBLAS is set to one thread (the
// pipeline parallelises across tasks and directions) and its kernels are
// fixed per kernel core and shape, so its results do not depend on
// GOMAXPROCS or on concurrent callers either. The core is pinned to
// PinnedCore (Haswell) on every CPU with AVX2 and FMA3: OpenBLAS is opened
// with dlopen after OPENBLAS_CORETYPE is set, so the same task gives the
// same bits on any such machine; the core is part of BLAS. It picks
// kernels by shape, so there an image's logits depend on its batch's size
// in the last bits; every caller fixes its batch sizes. All other loops run
// in fixed index order. Random draws (Init, dropout, SampleAction) are
// documented on each function.
//
// Why cgo directly rather than gonum's netlib binding: the binding is a
// 2019 pseudo-version that needs CGO_LDFLAGS set by whoever builds, and the
// network needs OpenBLAS's own entry points anyway (one thread, its
// configuration and core for the identity, and a load it controls for the
// pin); one cblas_dgemm declaration next to those is less than the
// dependency.
//
// Performance: BenchmarkNet (bench_test.go) reports images per second on one
// core for Forward and Forward+Backward at batch 64 (and batch 1 and 250),
// with, in the same run, the build's Dgemm alone on the same shapes, the
// share of the pass spent in Dgemm and the workspace bytes:
//
//	go test -run '^$' -bench Net -benchtime 3s ./envs/mnist/lenet
//	go test -tags openblas -run '^$' -bench Net -benchtime 3s ./envs/mnist/lenet
//
// Convolutions run image by image. Where OpenBLAS computes with the pinned
// Haswell core, Forward's two convolutions are direct AVX2/FMA3 kernels
// (conv_openblas.go) that compute each output as that core's Dgemm kernel
// computes it from the patch matrix (one fused multiply-add chain over the
// taps in order, then the bias): the bits of im2col + Dgemm, checked by
// TestDirectConvolutionsGiveTheProductsBits and the pinned digest, without
// building the patches. BenchmarkConvolutions compares the two on one core
// (Xeon, OpenBLAS 0.3.21): an evaluation batch of 100 1.59× faster, an ARS
// query 1.50×, a training step of SGD (64 images) 1.18× and of REINFORCE
// (256) 1.14×, Backward being unchanged. Batching the products instead
// (one Dgemm per layer for 16 to 100 images, im2col laid out side by side)
// was measured slower: the batched shapes run no faster than the per-image
// ones (BenchmarkConvBatching: 0.93× for conv1, 0.95× for conv2) and their
// buffers leave the cache.
//
// Dimension mismatches are programmer errors and panic.
package lenet

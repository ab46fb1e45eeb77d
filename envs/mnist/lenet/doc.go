// Package lenet is the LeNet-style network of the MNIST experiment (spec
// §2.2; d = 21,840) with its forward pass, backward pass and the losses of
// SGD and REINFORCE, written over gonum's BLAS (im2col + Dgemm).
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
// dropout stream), bit for bit on a given GOARCH. gemm calls gonum's Dgemm on
// pieces small enough that it never spawns goroutines or cuts the inner
// dimension, so results do not depend on GOMAXPROCS, and an image's logits
// do not depend on the rest of its batch (a batch and its images one by one
// give the same bits). All other loops run in fixed index order. Random draws
// (Init, dropout, SampleAction) are documented on each function.
//
// Performance: BenchmarkNet (bench_test.go) reports images per second on one
// core for Forward and Forward+Backward at batch 64 (and batch 1 and 250),
// with, in the same run, gonum's Dgemm alone on the same shapes, the share of
// the pass spent in Dgemm and the workspace bytes:
//
//	go test -run '^$' -bench Net -benchtime 3s ./envs/mnist/lenet
//
// Dimension mismatches are programmer errors and panic.
package lenet

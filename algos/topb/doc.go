// Package topb is the direction selection and reward normalization of
// one-step ARS V2 (spec §2.6, §3.7), shared by the linear-regression ARS
// (algos/ars) and the MNIST ARS (algos/mnistars): keep the b directions
// with the largest max(r+, r−) by a stable sort with ties to the smaller
// index (§6 item 21), and scale the step by the population standard
// deviation of the kept rewards. Editing it reruns both.
package topb

// Package sgd is full-information mini-batch SGD on linear regression (spec
// §3.3): each iteration draws a batch of B examples, takes the gradient of
// the batch ½·MSE, g = (1/B)·Xᵀ(Xw − y), and steps w ← w − LR·g.
//
// Streams: iteration it draws its batch from src.Rand("batch", it). The
// snapshot layout is the raw weight vector (linreg.LayoutRaw).
package sgd

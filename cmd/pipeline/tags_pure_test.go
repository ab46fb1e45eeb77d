//go:build !openblas

package main

// openblasTag: this test binary was built without the openblas tag, so the
// pipeline binaries the tests build compute MNIST with gonum's pure Go.
const openblasTag = false

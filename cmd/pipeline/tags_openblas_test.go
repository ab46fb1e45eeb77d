//go:build openblas

package main

// openblasTag: this test binary was built with the openblas tag, so the
// pipeline binaries the tests build get it too (as `make build` does).
const openblasTag = true

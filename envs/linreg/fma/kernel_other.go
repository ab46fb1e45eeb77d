//go:build !amd64 || purego

package fma

// kernel is the portable kernel (see fma.go).
var kernel kernelFunc = kernelGo

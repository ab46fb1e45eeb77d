//go:build !amd64 || purego

package linreg

// kernel is the portable kernel (see correlate.go).
var kernel kernelFunc = kernelGo

package linreg

import (
	"math"
	"runtime"
	"testing"

	"zorepro/pipeline/stream"
)

// Batches must not depend on the number of cores: Correlate is serial, and
// Generate's eigendecomposition and products (gonum, which splits large
// products across GOMAXPROCS goroutines) must accumulate each output in a
// fixed order. This pins that.
func TestBatchBitsIndependentOfGOMAXPROCS(t *testing.T) {
	// d = 300 with a batch of 256 would take gonum's parallel GEMM path
	// (at least 4 output blocks of 64×64).
	src := stream.New(5488, "test", nil)
	in := Generate(300, src.Rand("instance"))
	batch := func(procs int) []float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		X, y := in.NewBatch(src.Rand("batch", 1), 256)
		return append(append([]float64(nil), X.RawMatrix().Data...), y...)
	}
	one, many := batch(1), batch(8)
	for i := range one {
		if math.Float64bits(one[i]) != math.Float64bits(many[i]) {
			t.Fatalf("element %d differs between GOMAXPROCS 1 and 8: %v vs %v", i, one[i], many[i])
		}
	}
	inOne := func(procs int) []float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return Generate(200, stream.New(1, "g", nil).Rand("instance")).Factor.RawMatrix().Data
	}
	a, b := inOne(1), inOne(8)
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("Generate differs between GOMAXPROCS 1 and 8 at %d", i)
		}
	}
}

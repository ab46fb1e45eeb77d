package linreg

import (
	"math"
	"runtime"
	"testing"

	"zorepro/pipeline/stream"
)

// gonum's GEMM splits large products across GOMAXPROCS goroutines; each
// output block is still accumulated by one goroutine in a fixed order, so
// batches must not depend on the number of cores. This pins that.
func TestBatchBitsIndependentOfGOMAXPROCS(t *testing.T) {
	// d = 300 with a batch of 256 is large enough for gonum's parallel
	// GEMM path (at least 4 output blocks of 64×64).
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

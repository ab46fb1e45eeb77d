package mnistars

import (
	"runtime"
	"testing"

	"zorepro/envs/mnist/mnisttest"
	"zorepro/pipeline/stream"
)

// BenchmarkIteration measures one ARS iteration with the paper's N = 50,
// b = 20 (100 queries, eval mode) on the full-size LeNet (synthetic
// images), serially and with the directions spread over GOMAXPROCS
// workers, reporting samples (queries) per second.
func BenchmarkIteration(b *testing.B) {
	b.Run("serial", func(b *testing.B) { benchIteration(b, nil) })
	b.Run("parallel", func(b *testing.B) { benchIteration(b, workers(runtime.GOMAXPROCS(0))) })
}

func benchIteration(b *testing.B, par func(n int, fn func(i int) error) error) {
	in := mnisttest.TwoClasses(9, 1000, 10)
	m, err := Factory{}.New(Config{Alpha: 0.02, Directions: 50, Nu: 0.03, Top: 20}, in, stream.New(1, "bench", nil))
	if err != nil {
		b.Fatal(err)
	}
	a := m.(*ARS)
	a.SetParallel(par)
	if _, err := a.Step(1); err != nil { // iteration 1 runs in train mode; time the eval-mode ones
		b.Fatal(err)
	}
	var samples int64
	b.ResetTimer()
	for i := range b.N {
		st, err := a.Step(int64(i + 2))
		if err != nil {
			b.Fatal(err)
		}
		samples += st.Samples
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

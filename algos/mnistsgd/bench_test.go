package mnistsgd

import (
	"testing"

	"zorepro/envs/mnist/mnisttest"
	"zorepro/pipeline/stream"
)

// BenchmarkIteration measures one SGD iteration at the paper's batch 64 on
// the full-size LeNet (synthetic images), reporting samples per second.
func BenchmarkIteration(b *testing.B) {
	in := mnisttest.TwoClasses(9, 1000, 10)
	m, err := Factory{}.New(Config{LR: 0.01, Momentum: 0.5, Batch: DefaultBatch}, in, stream.New(1, "bench", nil))
	if err != nil {
		b.Fatal(err)
	}
	var samples int64
	b.ResetTimer()
	for i := range b.N {
		st, err := m.Step(int64(i + 1))
		if err != nil {
			b.Fatal(err)
		}
		samples += st.Samples
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

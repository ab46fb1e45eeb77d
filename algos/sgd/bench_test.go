package sgd

import (
	"testing"

	"zorepro/envs/linreg"
	"zorepro/pipeline/stream"
)

// BenchmarkStepD1000 measures samples per second at d = 1000 with the
// figure's settings (lr 0.01, batch 256); batches go through the
// precomputed covariance factor.
func BenchmarkStepD1000(b *testing.B) {
	src := stream.New(5488, "bench/sgd", nil)
	in := linreg.Generate(1000, src.Rand("instance"))
	s := New(Config{LR: 0.01, Batch: 256}, in, in.InitialWeights(src.Rand("w0")), src)
	var samples int64
	it := int64(0)
	for b.Loop() {
		it++
		st, err := s.Step(it)
		if err != nil {
			b.Fatal(err)
		}
		samples += st.Samples
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

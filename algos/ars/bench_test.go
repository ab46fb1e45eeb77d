package ars

import (
	"testing"

	"zorepro/envs/linreg"
	"zorepro/pipeline/stream"
)

// BenchmarkStepD1000 measures samples per second at d = 1000 with the
// paper's settings (α 0.03, N = b = 200, ν 0.03).
func BenchmarkStepD1000(b *testing.B) {
	src := stream.New(5488, "bench/ars", nil)
	in := linreg.Generate(1000, src.Rand("instance"))
	a, err := New(Config{Alpha: 0.03, Directions: 200, Top: 200, Nu: 0.03}, in, in.InitialWeights(src.Rand("w0")), src)
	if err != nil {
		b.Fatal(err)
	}
	var samples int64
	it := int64(0)
	for b.Loop() {
		it++
		st, err := a.Step(it)
		if err != nil {
			b.Fatal(err)
		}
		samples += st.Samples
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}

package events

import (
	"path/filepath"
	"testing"
)

// benchmarkWriter appends b.N iter events with two metrics and reports
// committed events per second (including the final Close).
func benchmarkWriter(b *testing.B, opt WriterOptions) {
	l, err := Open(filepath.Join(b.TempDir(), "events.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	run, err := l.BeginRun(nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	w := l.NewWriter(opt)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w.Append(iterEvent("bench/task", run, i))
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(l.commits.Load()-1)/float64(b.N), "tx/event")
}

func BenchmarkWriterThroughput(b *testing.B) { benchmarkWriter(b, WriterOptions{}) }

func BenchmarkWriterOneTxPerEvent(b *testing.B) { benchmarkWriter(b, WriterOptions{MaxBatch: 1}) }

package pipeline_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"zorepro/algos"
	"zorepro/algos/ars"
	"zorepro/envs/linreg"
	"zorepro/pipeline/events"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// eventRecorder records iterations as a task's Env does: converted to
// task.Iter and handed to the run's batching writer in blocks.
type eventRecorder struct {
	w     *events.Writer
	task  string
	block []task.Iter
}

func (r *eventRecorder) Iteration(ev task.Iter) {
	it := task.Iter{Iteration: ev.Iteration, Samples: ev.Samples, Digest: ev.Digest}
	if len(ev.Metrics) > 0 {
		it.Metrics = make([]task.Metric, len(ev.Metrics))
		for i, m := range ev.Metrics {
			it.Metrics[i] = task.Metric{Name: m.Name, Value: m.Value}
		}
	}
	r.block = append(r.block, it)
	if len(r.block) == 512 {
		r.flush()
	}
}

func (r *eventRecorder) flush() {
	if len(r.block) > 0 {
		r.w.Append(events.Event{Type: "iter", Run: 1, Task: r.task, Iters: r.block})
		r.block = nil
	}
}
func (*eventRecorder) CheckpointDue(int64) bool      { return false }
func (*eventRecorder) Checkpoint([]byte) error       { return nil }
func (*eventRecorder) Resume() ([]byte, bool, error) { return nil, false, nil }

type quiet struct{ *eventRecorder }

func (quiet) Iteration(task.Iter) {}

// BenchmarkRecordingOverhead trains ARS on linear regression (d = 10, the
// smallest and so the most event-heavy case: ~5,000 iterations per 100k
// samples) with and without per-iteration event recording, alternating
// the two in one run, and reports their time ratio. The writer commits in
// the background as it does during a pipeline run; the final wait for its
// last commit is charged to recording.
func BenchmarkRecordingOverhead(b *testing.B) {
	inst := linreg.Generate(10, stream.New(1, "bench", nil).Rand("instance"))
	log, err := events.Open(filepath.Join(b.TempDir(), "events.db"), events.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	w := log.NewWriter(events.WriterOptions{})
	defer w.Close()
	cfg := ars.Config{Alpha: 0.03, Directions: 10, Top: 10, Nu: 0.03}
	train := func(rec algos.Recorder, i int) {
		src := stream.New(uint64(i), "bench/train", nil)
		m, err := ars.New(cfg, inst, inst.InitialWeights(src.Rand("init")), src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := algos.Run(context.Background(), m, algos.Budget{Samples: 100000}, algos.Schedule{Every: 1}, rec); err != nil {
			b.Fatal(err)
		}
	}
	var with, without time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		train(quiet{&eventRecorder{}}, i)
		t1 := time.Now()
		rec := &eventRecorder{w: w, task: "train/bench"}
		train(rec, i)
		rec.flush()
		t2 := time.Now()
		without += t1.Sub(t0)
		with += t2.Sub(t1)
	}
	// The writer commits in the background as a run goes; what is left at
	// the end (one last commit and its fsync) counts against recording.
	t3 := time.Now()
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	with += time.Since(t3)
	b.ReportMetric(float64(with)/float64(without), "with/without")
	b.ReportMetric(float64(without)/float64(b.N)/1e6, "ms/run-unrecorded")
}

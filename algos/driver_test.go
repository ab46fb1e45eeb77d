package algos_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// walk is a toy Method: w[0] counts iterations, w[1] is a random walk drawn
// from the stream "step"[it]. Each iteration consumes per samples; Done fires
// at iteration doneAt (if > 0).
type walk struct {
	src    stream.Source
	per    int64
	doneAt int64
	w      []float64
	steps  int
}

func newWalk(per, doneAt int64) *walk {
	return &walk{src: stream.New(7151, "test/algos/walk", nil), per: per, doneAt: doneAt, w: make([]float64, 2)}
}

func (m *walk) Step(it int64) (algos.Stat, error) {
	m.steps++
	m.w[0]++
	x := m.src.Rand("step", uint64(it)).NormFloat64()
	m.w[1] += x
	return algos.Stat{Samples: m.per, Done: it == m.doneAt, Metrics: []task.Metric{{Name: "x", Value: x}}}, nil
}
func (m *walk) Params() []float64   { return m.w }
func (m *walk) Snapshot() []float64 { return m.w }
func (m *walk) MarshalState() ([]byte, error) {
	e := blob.NewEncoder("WALK", 1)
	e.Floats(m.w)
	return e.Data(), nil
}
func (m *walk) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, "WALK", 1)
	w := d.Floats()
	if len(w) != 2 {
		d.Failf("walk: %d params", len(w))
	}
	if err := d.Finish(); err != nil {
		return err
	}
	m.w = w
	return nil
}

func iterations(tr *trajectory.Trajectory) []int64 {
	var its []int64
	for _, p := range tr.Points {
		its = append(its, p.Iteration)
	}
	return its
}

func run(t *testing.T, m algos.Method, b algos.Budget, s algos.Schedule) *trajectory.Trajectory {
	t.Helper()
	tr, err := algos.Run(context.Background(), m, b, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestBudget checks the stop rules of §3.2 and §3.8: REINFORCE's 512 samples
// per iteration against 300,000 end at 300,032 after 586 iterations; the
// strict tuning rule with ARS's 2N = 20 stops at the first total > 100,000.
func TestBudget(t *testing.T) {
	cases := []struct {
		per     int64
		b       algos.Budget
		its     int64
		samples int64
	}{
		{512, algos.Budget{Samples: 300000}, 586, 300032},
		{20, algos.Budget{Samples: 100000}, 5000, 100000},
		{20, algos.Budget{Samples: 100000, Strict: true}, 5001, 100020},
		{64, algos.Budget{Samples: 1}, 1, 64},
	}
	for _, c := range cases {
		tr := run(t, newWalk(c.per, 0), c.b, algos.Schedule{})
		last := tr.Points[len(tr.Points)-1]
		if last.Iteration != c.its || last.Samples != c.samples {
			t.Errorf("per %d, %+v: ended at iteration %d with %d samples, want %d and %d", c.per, c.b, last.Iteration, last.Samples, c.its, c.samples)
		}
		if len(tr.Points) != 2 && c.its > 1 || tr.Points[0].Iteration != 1 {
			t.Errorf("per %d, %+v: points %v, want first and last", c.per, c.b, iterations(tr))
		}
	}
	// The method's own stop rule.
	tr := run(t, newWalk(1, 7), algos.Budget{Samples: 1000}, algos.Schedule{Every: 5})
	if got := iterations(tr); !slices.Equal(got, []int64{1, 5, 7}) {
		t.Errorf("Done at 7, Every 5: points %v", got)
	}
}

// TestSchedule checks Every and PerDecade against hand-computed iterations.
// PerDecade = 2 thresholds: ⌈10^(k/2)⌉ = 1, 4, 10, 32, 100, 317, 1000, 3163,
// 10000; at 64 samples per iteration they are crossed at iterations 1 (64),
// 2 (128), 5 (320), 16 (1024) and 50 (3200); the budget 5000 ends at 79.
func TestSchedule(t *testing.T) {
	cases := []struct {
		per  int64
		b    int64
		s    algos.Schedule
		want []int64
	}{
		{64, 1000, algos.Schedule{Every: 10}, []int64{1, 10, 16}},
		{1, 1000, algos.Schedule{PerDecade: 1}, []int64{1, 10, 100, 1000}},
		{1, 1000, algos.Schedule{PerDecade: 3}, []int64{1, 3, 5, 10, 22, 47, 100, 216, 465, 1000}},
		{64, 5000, algos.Schedule{PerDecade: 2}, []int64{1, 2, 5, 16, 50, 79}},
		{64, 5000, algos.Schedule{PerDecade: 2, Every: 30}, []int64{1, 2, 5, 16, 30, 50, 60, 79}},
		{64, 5000, algos.Schedule{}, []int64{1, 79}},
		// 64 samples per iteration crosses 300, 600, 900 at iterations 5, 10, 15.
		{64, 1000, algos.Schedule{EverySamples: 300}, []int64{1, 5, 10, 15, 16}},
	}
	for _, c := range cases {
		tr := run(t, newWalk(c.per, 0), algos.Budget{Samples: c.b}, c.s)
		if got := iterations(tr); !slices.Equal(got, c.want) {
			t.Errorf("per %d, budget %d, %+v: points %v, want %v", c.per, c.b, c.s, got, c.want)
		}
	}
}

func TestEventsAndSnapshots(t *testing.T) {
	rec := &algostest.MemRecorder{}
	tr, err := algos.Run(context.Background(), newWalk(3, 0), algos.Budget{Samples: 30}, algos.Schedule{Every: 1}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != 10 || len(tr.Points) != 10 {
		t.Fatalf("%d events, %d points, want 10", len(rec.Events), len(tr.Points))
	}
	for i, ev := range rec.Events {
		p := tr.Points[i]
		if ev.Iteration != int64(i+1) || ev.Samples != 3*int64(i+1) || p.Samples != ev.Samples || ev.Digest != trajectory.Digest(p.Params) {
			t.Fatalf("event %d = %+v, point %+v", i, ev, p)
		}
		if p.Params[0] != float64(i+1) {
			t.Fatalf("point %d aliases the live parameters: %v", i, p.Params)
		}
	}
}

// TestResume interrupts and resumes the toy method at several iterations.
func TestResume(t *testing.T) {
	algostest.CheckResume(t, func() algos.Method { return newWalk(64, 0) },
		algos.Budget{Samples: 5000}, algos.Schedule{PerDecade: 2}, []int64{1, 2, 15, 50, 76})
	algostest.CheckResume(t, func() algos.Method { return newWalk(1, 40) },
		algos.Budget{Samples: 5000, Strict: true}, algos.Schedule{Every: 7}, []int64{1, 7, 20})
}

// TestCancelBeforeStart: a cancelled context before the first iteration
// writes a checkpoint at iteration 0, from which the full run follows.
func TestCancelBeforeStart(t *testing.T) {
	ref := run(t, newWalk(10, 0), algos.Budget{Samples: 100}, algos.Schedule{})
	want, _ := ref.MarshalBinary()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := &algostest.MemRecorder{}
	m := newWalk(10, 0)
	if _, err := algos.Run(ctx, m, algos.Budget{Samples: 100}, algos.Schedule{}, rec); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if m.steps != 0 || len(rec.Checkpoints) != 1 {
		t.Fatalf("%d steps, %d checkpoints", m.steps, len(rec.Checkpoints))
	}
	if it, err := algos.CheckpointIteration(rec.Checkpoints[0]); it != 0 || err != nil {
		t.Fatalf("checkpoint after iteration %d (%v)", it, err)
	}
	tr, err := algos.Run(context.Background(), newWalk(10, 0), algos.Budget{Samples: 100}, algos.Schedule{}, &algostest.MemRecorder{From: rec.Checkpoints[0]})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tr.MarshalBinary(); !bytes.Equal(got, want) {
		t.Fatal("resume from iteration 0 differs")
	}
}

// TestResumeFinished: a checkpoint written after the last iteration returns
// the trajectory without stepping.
func TestResumeFinished(t *testing.T) {
	rec := &algostest.MemRecorder{Due: func(int64) bool { return true }}
	ref, err := algos.Run(context.Background(), newWalk(10, 0), algos.Budget{Samples: 100}, algos.Schedule{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	m := newWalk(10, 0)
	tr, err := algos.Run(context.Background(), m, algos.Budget{Samples: 100}, algos.Schedule{}, &algostest.MemRecorder{From: rec.Checkpoints[len(rec.Checkpoints)-1]})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ref.MarshalBinary()
	b, _ := tr.MarshalBinary()
	if m.steps != 0 || !bytes.Equal(a, b) {
		t.Fatalf("resumed finished run stepped %d times or differs", m.steps)
	}
}

type failing struct{ *walk }

func (f failing) Step(it int64) (algos.Stat, error) {
	if it == 3 {
		return algos.Stat{}, errors.New("boom")
	}
	if it == 2 {
		return algos.Stat{Samples: -1}, nil
	}
	return f.walk.Step(it)
}

func TestRunErrors(t *testing.T) {
	_, err := algos.Run(context.Background(), newWalk(1, 0), algos.Budget{}, algos.Schedule{Every: -1}, nil)
	if !errors.Is(err, algos.ErrBudget) || !errors.Is(err, algos.ErrSchedule) {
		t.Errorf("invalid budget and schedule: %v", err)
	}
	_, err = algos.Run(context.Background(), failing{newWalk(1, 0)}, algos.Budget{Samples: 10}, algos.Schedule{}, nil)
	if !errors.Is(err, algos.ErrSamples) {
		t.Errorf("negative samples: %v", err)
	}
	_, err = algos.Run(context.Background(), newWalk(1, 0), algos.Budget{Samples: 10}, algos.Schedule{}, &algostest.MemRecorder{From: []byte("junk")})
	if !errors.Is(err, blob.ErrFormat) {
		t.Errorf("bad checkpoint: %v", err)
	}
}

func FuzzCheckpoint(f *testing.F) {
	rec := &algostest.MemRecorder{Due: func(int64) bool { return true }}
	if _, err := algos.Run(context.Background(), newWalk(10, 0), algos.Budget{Samples: 30}, algos.Schedule{Every: 1}, rec); err != nil {
		f.Fatal(err)
	}
	for _, c := range rec.Checkpoints {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = algos.CheckpointIteration(data)
		m := newWalk(10, 0)
		_, _ = algos.Run(context.Background(), m, algos.Budget{Samples: 30}, algos.Schedule{}, &algostest.MemRecorder{From: data})
	})
}

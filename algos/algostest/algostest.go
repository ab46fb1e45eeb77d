// Package algostest provides test helpers for algos.Method implementations:
// a constructor that fails the test, an in-memory Recorder and a checker
// that interrupting and resuming a run from checkpoints reproduces the
// uninterrupted run bit for bit.
package algostest

import (
	"bytes"
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Must is newMethod(cfg, p, w0, src), failing t on error; newMethod is the
// New of a method that starts from given parameters (reinforce.New,
// sgd.New, nreinforce.New, instantiated).
func Must[C, P, M any](t testing.TB, newMethod func(C, P, []float64, stream.Source) (M, error), cfg C, p P, w0 []float64, src stream.Source) M {
	t.Helper()
	m, err := newMethod(cfg, p, w0, src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// MemRecorder is an in-memory algos.Recorder.
type MemRecorder struct {
	// Events are the recorded events, in call order.
	Events []task.Iter
	// Checkpoints are all blobs written, in order.
	Checkpoints [][]byte
	// Due decides CheckpointDue; nil means never.
	Due func(it int64) bool
	// OnIteration, if set, is called after each event is recorded.
	OnIteration func(ev task.Iter)
	// From is returned by Resume when non-nil.
	From []byte
}

// Iteration implements algos.Recorder.
func (r *MemRecorder) Iteration(ev task.Iter) {
	ev.Metrics = slices.Clone(ev.Metrics)
	r.Events = append(r.Events, ev)
	if r.OnIteration != nil {
		r.OnIteration(ev)
	}
}

// CheckpointDue implements algos.Recorder.
func (r *MemRecorder) CheckpointDue(it int64) bool { return r.Due != nil && r.Due(it) }

// Checkpoint implements algos.Recorder.
func (r *MemRecorder) Checkpoint(state []byte) error {
	r.Checkpoints = append(r.Checkpoints, slices.Clone(state))
	return nil
}

// Resume implements algos.Recorder.
func (r *MemRecorder) Resume() ([]byte, bool, error) { return r.From, r.From != nil, nil }

// SameEvents reports whether two event lists are equal bit for bit.
func SameEvents(a, b []task.Iter) bool {
	return slices.EqualFunc(a, b, func(x, y task.Iter) bool {
		return x.Iteration == y.Iteration && x.Samples == y.Samples && x.Digest == y.Digest &&
			slices.EqualFunc(x.Metrics, y.Metrics, func(p, q task.Metric) bool {
				return p.Name == q.Name && math.Float64bits(p.Value) == math.Float64bits(q.Value)
			})
	})
}

// CheckResume runs newMethod() to completion, then for each k in at runs a
// fresh method that checkpoints after iteration k and is cancelled after
// iteration k+2 (which writes a second checkpoint), and resumes each of the
// two checkpoints in another fresh method. Every resumed run must return a
// trajectory whose encoding equals the uninterrupted one and re-record the
// uninterrupted run's events after its checkpoint. It returns the
// uninterrupted trajectory's encoding and events.
func CheckResume(t testing.TB, newMethod func() algos.Method, b algos.Budget, s algos.Schedule, at []int64) ([]byte, []task.Iter) {
	t.Helper()
	ref := &MemRecorder{}
	traj, err := algos.Run(context.Background(), newMethod(), b, s, ref)
	if err != nil {
		t.Fatalf("uninterrupted run: %v", err)
	}
	want, err := traj.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	last := ref.Events[len(ref.Events)-1].Iteration
	for _, k := range at {
		if k < 1 || k+2 >= last {
			t.Fatalf("checkpoint iteration %d outside [1, %d)", k, last-2)
		}
		ctx, cancel := context.WithCancel(context.Background())
		rec := &MemRecorder{
			Due: func(it int64) bool { return it == k },
			OnIteration: func(ev task.Iter) {
				if ev.Iteration == k+2 {
					cancel()
				}
			},
		}
		_, err := algos.Run(ctx, newMethod(), b, s, rec)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("k=%d: interrupted run returned %v, want context.Canceled", k, err)
		}
		if len(rec.Checkpoints) != 2 {
			t.Fatalf("k=%d: %d checkpoints, want 2", k, len(rec.Checkpoints))
		}
		for i, blob := range rec.Checkpoints {
			from, err := algos.CheckpointIteration(blob)
			if err != nil || from != k+2*int64(i) {
				t.Fatalf("k=%d: checkpoint %d is after iteration %d (%v), want %d", k, i, from, err, k+2*int64(i))
			}
			res := &MemRecorder{From: blob}
			got, err := algos.Run(context.Background(), newMethod(), b, s, res)
			if err != nil {
				t.Fatalf("resume from %d: %v", from, err)
			}
			gb, err := got.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gb, want) {
				t.Fatalf("resume from iteration %d: trajectory differs from the uninterrupted run", from)
			}
			if !SameEvents(res.Events, ref.Events[from:]) {
				t.Fatalf("resume from iteration %d: events differ from the uninterrupted run", from)
			}
		}
	}
	return want, ref.Events
}

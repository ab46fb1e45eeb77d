package events

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"zorepro/pipeline/task"
)

func TestIterEncodingRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for range 2000 {
		it := task.Iter{Samples: int64(rng.Uint64()), Digest: rng.Uint64()}
		for range rng.IntN(5) {
			name := make([]byte, rng.IntN(300))
			for i := range name {
				name[i] = byte(rng.Uint32())
			}
			it.Metrics = append(it.Metrics, task.Metric{Name: string(name), Value: math.Float64frombits(rng.Uint64())})
		}
		got, err := decodeIter(appendIter(nil, &it))
		if err != nil {
			t.Fatal(err)
		}
		if !sameIter(got, it) {
			t.Fatalf("round trip of %+v gave %+v", it, got)
		}
	}
}

func TestDecodeIterRejects(t *testing.T) {
	valid := appendIter(nil, &task.Iter{Samples: 5, Digest: 9, Metrics: []task.Metric{{Name: "loss", Value: 1}}})
	for name, b := range map[string][]byte{
		"empty":          nil,
		"short digest":   valid[:5],
		"no count":       valid[:9],
		"short name":     valid[:12],
		"short value":    valid[:len(valid)-1],
		"trailing":       append(append([]byte(nil), valid...), 0),
		"huge count":     append(append([]byte(nil), valid[:9]...), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"varint overrun": {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
	} {
		if it, err := decodeIter(b); err == nil || !errors.Is(err, ErrCorruptLog) {
			t.Errorf("%s: decodeIter = %+v, %v; want ErrCorruptLog", name, it, err)
		}
	}
}

// FuzzDecodeIter checks that the decoder never panics and that whatever it
// accepts re-encodes to something that decodes to the same value.
func FuzzDecodeIter(f *testing.F) {
	f.Add([]byte{})
	f.Add(appendIter(nil, &task.Iter{}))
	f.Add(appendIter(nil, &task.Iter{Samples: -1, Digest: math.MaxUint64, Metrics: []task.Metric{{Name: "loss", Value: math.NaN()}, {Name: "", Value: math.Inf(-1)}}}))
	f.Add([]byte{0x02, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		it, err := decodeIter(b)
		if err != nil {
			return
		}
		enc := appendIter(nil, &it)
		if len(enc) > len(b) {
			t.Fatalf("decoded %d bytes into a value that encodes to %d", len(b), len(enc))
		}
		again, err := decodeIter(enc)
		if err != nil || !sameIter(again, it) {
			t.Fatalf("re-encoding %+v: %+v, %v", it, again, err)
		}
	})
}

// sameIter compares bit-exactly (NaN == NaN with the same bits).
func sameIter(a, b task.Iter) bool {
	if a.Iteration != b.Iteration || a.Samples != b.Samples || a.Digest != b.Digest || len(a.Metrics) != len(b.Metrics) {
		return false
	}
	for i := range a.Metrics {
		if a.Metrics[i].Name != b.Metrics[i].Name ||
			math.Float64bits(a.Metrics[i].Value) != math.Float64bits(b.Metrics[i].Value) {
			return false
		}
	}
	return true
}

func TestBlockRoundTripAndReads(t *testing.T) {
	its := []task.Iter{
		{Iteration: 7, Samples: 20, Digest: 1, Metrics: []task.Metric{{Name: "loss", Value: math.Copysign(0, -1)}}},
		{Iteration: 8, Samples: 40, Digest: 2},
		{Iteration: 100, Samples: 60, Digest: math.MaxUint64, Metrics: []task.Metric{{Name: "a", Value: math.NaN()}, {Name: "b", Value: math.Inf(1)}}},
	}
	got, err := decodeBlock(7, appendBlock(nil, its))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].Iteration != 100 || got[1].Samples != 40 || math.Float64bits(got[0].Metrics[0].Value) != math.Float64bits(math.Copysign(0, -1)) || !math.IsNaN(got[2].Metrics[0].Value) {
		t.Fatalf("round trip: %+v", got)
	}
	l := openTest(t)
	w := l.NewWriter(WriterOptions{})
	w.Append(Event{Type: TypeIter, Run: 1, Task: "t", Iters: its[:2]})
	w.Append(Event{Type: TypeIter, Run: 1, Task: "t", Iter: &its[2]})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	read, err := l.Iterations("t", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != 3 || read[0].Iteration != 7 || read[2].Iteration != 100 {
		t.Fatalf("Iterations = %+v", read)
	}
	if _, n, err := l.Stats(); err != nil || n != 3 {
		t.Fatalf("Stats iters = %d, %v", n, err)
	}
}

func FuzzDecodeBlock(f *testing.F) {
	f.Add(int64(0), appendBlock(nil, []task.Iter{{Iteration: 0}, {Iteration: 3, Metrics: []task.Metric{{Name: "x", Value: 1}}}}))
	f.Add(int64(5), []byte{0})
	f.Fuzz(func(t *testing.T, first int64, b []byte) {
		if first < 0 {
			first = -first
		}
		if first < 0 {
			return
		}
		its, err := decodeBlock(first, b)
		if err != nil {
			return
		}
		again, err := decodeBlock(first, appendBlock(nil, its))
		if err != nil || len(again) != len(its) {
			t.Fatalf("re-encode: %v", err)
		}
	})
}

// LastIteration reads the last block of one task's run only: not a later
// run's, not the next task's, and nothing for a run or task without
// iterations; it equals the last of Iterations.
func TestLastIteration(t *testing.T) {
	l := openTest(t)
	w := l.NewWriter(WriterOptions{})
	block := func(first int64, n int) []task.Iter {
		var its []task.Iter
		for i := 0; i < n; i++ {
			its = append(its, task.Iter{Iteration: first + int64(i), Samples: 10 * (first + int64(i))})
		}
		return its
	}
	w.Append(Event{Type: TypeIter, Run: 1, Task: "a", Iters: block(0, 5)})
	w.Append(Event{Type: TypeIter, Run: 1, Task: "a", Iters: block(5, 3)})
	w.Append(Event{Type: TypeIter, Run: 2, Task: "a", Iters: block(4, 2)})
	w.Append(Event{Type: TypeIter, Run: 1, Task: "b", Iters: block(100, 1)})
	w.Append(Event{Type: TypeIter, Run: 3, Task: "c", Iters: block(0, 1)})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		task string
		run  uint64
		want int64 // -1: none
	}{{"a", 1, 7}, {"a", 2, 5}, {"a", 3, -1}, {"b", 1, 100}, {"b", 2, -1}, {"c", 3, 0}, {"c", 1, -1}, {"unknown", 1, -1}} {
		it, ok, err := l.LastIteration(c.task, c.run)
		if err != nil || ok != (c.want >= 0) || ok && (it.Iteration != c.want || it.Samples != 10*c.want) {
			t.Errorf("LastIteration(%s, %d) = %+v, %v, %v; want iteration %d", c.task, c.run, it, ok, err, c.want)
		}
		if all, _ := l.Iterations(c.task, c.run); ok && all[len(all)-1].Iteration != it.Iteration {
			t.Errorf("LastIteration(%s, %d) is not the last of Iterations", c.task, c.run)
		}
	}
}

// LastState is LastStates' record of one task; a task never logged has
// none.
func TestLastState(t *testing.T) {
	l := openTest(t)
	run := beginRun(t, l, nil, 1)
	w := l.NewWriter(WriterOptions{})
	w.Append(Event{Type: TypeState, Run: run, Task: "a", State: StateStarted})
	w.Append(Event{Type: TypeState, Run: run, Task: "a", State: StateDone, Action: "xxh64-1", Output: "xxh64-2"})
	w.Append(Event{Type: TypeState, Run: run, Task: "b", State: StateFailed, Error: "boom"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	all, err := l.LastStates()
	if err != nil || len(all) != 2 {
		t.Fatalf("LastStates %+v, %v", all, err)
	}
	for _, want := range all {
		got, ok, err := l.LastState(want.Task)
		if err != nil || !ok || got != want {
			t.Errorf("LastState(%s) = %+v, %v, %v; LastStates has %+v", want.Task, got, ok, err, want)
		}
	}
	if _, ok, err := l.LastState("c"); ok || err != nil {
		t.Errorf("a task never logged: %v, %v", ok, err)
	}
}

package episodic

import (
	"errors"
	"math"
	"slices"
	"testing"

	"zorepro/algos"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/task"
)

// TestValidate: every invalid field is reported at once, as ErrConfig.
func TestValidate(t *testing.T) {
	if err := (Config{Alpha: 0.1, Directions: 1, Nu: 0.2}).Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	err := Config{Alpha: math.Inf(1), Directions: 0, Nu: math.NaN()}.Validate()
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("err = %v, want ErrConfig", err)
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 3 {
		t.Fatalf("%d problems reported, want 3: %v", n, err)
	}
}

func TestDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		every int
		it    int64
		want  bool
	}{{0, 10, false}, {10, 10, true}, {10, 20, true}, {10, 11, false}, {1, 7, true}} {
		if got := (Config{DiagnosticsEvery: tc.every}).Diagnostics(tc.it); got != tc.want {
			t.Errorf("DiagnosticsEvery %d, iteration %d: %v, want %v", tc.every, tc.it, got, tc.want)
		}
	}
}

func TestDecode(t *testing.T) {
	if !slices.Equal(Hyper(), []string{"alpha", "directions", "nu"}) {
		t.Fatalf("Hyper = %v", Hyper())
	}
	p := task.NewParams("dag.yaml", "train/lqr", map[string]any{"alpha": 0.003, "directions": 10, "nu": 0.05})
	if cfg := Decode(p); p.Err() != nil || cfg != (Config{Alpha: 0.003, Directions: 10, Nu: 0.05, DiagnosticsEvery: 10}) {
		t.Fatalf("Decode = %+v, %v", cfg, p.Err())
	}
	p = task.NewParams("dag.yaml", "train/lqr", map[string]any{"alpha": 0.003, "directions": 10, "nu": 0.05, "diagnostics_every": 0})
	if cfg := Decode(p); p.Err() != nil || cfg.DiagnosticsEvery != 0 {
		t.Fatalf("Decode = %+v, %v", cfg, p.Err())
	}
	p = task.NewParams("dag.yaml", "train/lqr", map[string]any{"alpha": 0, "directions": 0, "nu": -1})
	Decode(p)
	if p.Err() == nil {
		t.Fatal("invalid parameters accepted")
	}
}

// TestParallelRun: a nil Parallel runs the indices in order and stops at
// the first error; a non-nil one is called with n and fn.
func TestParallelRun(t *testing.T) {
	var got []int
	boom := errors.New("boom")
	err := Parallel(nil).Run(5, func(i int) error {
		got = append(got, i)
		if i == 2 {
			return boom
		}
		return nil
	})
	if err != boom || !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("serial: err = %v, ran %v", err, got)
	}
	var calls []int
	par := Parallel(func(n int, fn func(i int) error) error {
		calls = append(calls, n)
		return fn(n - 1)
	})
	if err := par.Run(3, func(i int) error { got = append(got, i); return nil }); err != nil || !slices.Equal(calls, []int{3}) || got[len(got)-1] != 2 {
		t.Fatalf("parallel: err = %v, calls %v, ran %v", err, calls, got)
	}
}

// TestPolicyAscend: W starts at 0 and Ascend adds the ES-Adam step, bit for
// bit; a state round trip continues identically.
func TestPolicyAscend(t *testing.T) {
	const alpha = 0.05
	p, adam := NewPolicy(3, alpha), algos.NewESAdam(3, alpha)
	w := make([]float64, 3)
	if !slices.Equal(p.W, w) {
		t.Fatalf("W = %v, want 0", p.W)
	}
	step := func(p *Policy, g []float64) {
		p.Ascend(g)
		for j, s := range adam.Step(g) {
			w[j] += s
		}
		if !slices.Equal(p.W, w) {
			t.Fatalf("W = %v, want %v", p.W, w)
		}
	}
	step(p, []float64{1, -2, 0.5})
	st, err := p.MarshalState("ZTST", 1)
	if err != nil {
		t.Fatal(err)
	}
	q := NewPolicy(3, alpha)
	if err := q.UnmarshalState(st, "ZTST", 1); err != nil || !slices.Equal(q.W, p.W) {
		t.Fatalf("restore: %v, W = %v", err, q.W)
	}
	if err := q.UnmarshalState(st, "ZOTH", 1); !errors.Is(err, blob.ErrFormat) {
		t.Errorf("other magic: err = %v", err)
	}
	step(q, []float64{-3, 0.25, 1})
}

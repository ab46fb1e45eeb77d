package task

import (
	"math"
	"strings"
	"testing"
)

func TestResolvedIsCanonicalAndIncludesDefaults(t *testing.T) {
	p := NewParams("dag.yaml", "s", map[string]any{
		"lr": 0.1, "n": 10, "big": 1e5, "name": "ars", "flag": true,
		"xs": []any{1, 0.5}, "grid": map[string]any{"alpha": []any{0.01, 0.02}}, "d": 10,
	}, "d")
	if got := p.Float("lr"); got != 0.1 {
		t.Fatal(got)
	}
	if got := p.Int("n"); got != 10 {
		t.Fatal(got)
	}
	if got := p.Int("big"); got != 100000 { // YAML reads 1e5 as a float
		t.Fatal(got)
	}
	p.String("name")
	p.Bool("flag")
	p.Floats("xs")
	p.Float("missing", Default(2.5))
	g, ok := p.Sub("grid")
	if !ok {
		t.Fatal("no grid")
	}
	g.Floats("alpha")
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	want := `big 100000|flag true|grid.alpha [0.01,0.02]|lr 0.1|missing 2.5|n 10|name "ars"|xs [1,0.5]`
	if got := strings.Join(p.Resolved(), "|"); got != want {
		t.Fatalf("resolved:\n got %s\nwant %s", got, want)
	}
	for _, k := range p.Keys() {
		if k == "d" {
			t.Fatalf("implicit coordinate d listed in Keys: %v", p.Keys())
		}
	}
}

func TestProblemsNameFieldAndAreAllReported(t *testing.T) {
	p := NewParams("dag.yaml", "train/x", map[string]any{
		"lr": -1, "n": 1.5, "name": 3, "xs": []any{1, "a"}, "extra": 1, "grid": map[string]any{"beta": []any{1}},
		"batch": 0, "step": math.Inf(1), "eps": math.NaN(), "ns": []any{3, 0},
	})
	p.Float("lr", Above(0))
	p.Int("batch", Above(0))
	p.Float("step", Above(0))
	p.Float("eps", Min(0))
	p.Ints("ns", Above(0))
	p.Int("n")
	p.String("name")
	p.Floats("xs", Min(0))
	p.Float("need", Required())
	p.String("mode", Default("a"), OneOf("a", "b"))
	g, _ := p.Sub("grid")
	g.Floats("alpha")
	err := p.Err()
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{
		`dag.yaml: stage "train/x": params.lr: must be > 0, got -1`,
		"params.n: must be an integer, got 1.5",
		"params.batch: must be >= 1, got 0", // 0 is a value, not a missing one
		"params.step: must be a finite number, got +Inf",
		"params.eps: must be a finite number, got NaN",
		"params.ns[1]: must be >= 1, got 0",
		"params.name: must be a string, got a number",
		"params.xs[1]: must be a number, got a string",
		"params.need: missing (required)",
		"params.extra: unknown parameter",
		"params.grid.beta: unknown parameter",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in\n%v", w, err)
		}
	}
}

func TestPeekDoesNotConsume(t *testing.T) {
	p := NewParams("f", "s", map[string]any{"x": 1})
	if v, ok := p.Peek("x"); !ok || v != 1 {
		t.Fatal(v, ok)
	}
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), "params.x: unknown parameter") {
		t.Fatalf("Peek consumed x: %v", err)
	}
}

// CostTable interpolates measured points as a power law and extrapolates
// with the nearest segment.
func TestCostTable(t *testing.T) {
	tab := CostTable{{Size: 10, Cost: 1}, {Size: 100, Cost: 4}, {Size: 1000, Cost: 100}}
	for _, c := range []struct{ size, want float64 }{
		{10, 1}, {100, 4}, {1000, 100},
		{math.Sqrt(10 * 100), 2},      // halfway in log-log: sqrt(1*4)
		{1, 1 / 4.0},                  // below: the first segment's exponent (0.602)
		{10000, 2500},                 // above: the last segment's (1.398)
		{math.Sqrt(100 * 1000), 20.0}, // sqrt(4*100)
	} {
		if got := tab.At(c.size); math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("At(%g) = %g, want %g", c.size, got, c.want)
		}
	}
	if (CostTable{}).At(5) != 1 || (CostTable{{Size: 10, Cost: 3}}).At(99) != 3 {
		t.Error("empty or one-point tables")
	}
}

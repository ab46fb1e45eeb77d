package tune_test

import (
	"encoding/json"
	"strings"
	"testing"

	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
	"zorepro/stages/generate"
	"zorepro/stages/tune"
)

// quad is a fake method whose score is (a − target)² + 0.01·b, the target
// 0.4 on seed 1 and 0.42 on seed 2: the best a lies beyond a grid of
// smaller values, the best b (1) at the edge of its own.
type quad struct{}

type qcfg struct {
	A float64 `json:"a"`
	B int64   `json:"b"`
}

func (c qcfg) Validate() error           { return nil }
func (c qcfg) Header() trajectory.Header { return trajectory.Header{} }
func (quad) Hyper() []string             { return []string{"a", "b"} }
func (quad) Decode(p *task.Params) qcfg {
	return qcfg{A: p.Float("a", task.Required()), B: p.Int("b", task.Required())}
}
func (quad) New(c qcfg, inst string, src stream.Source) (algos.Method, error) {
	target := 0.4
	if inst == "2" {
		target = 0.42
	}
	return &once{v: []float64{(c.A-target)*(c.A-target) + 0.01*float64(c.B)}}, nil
}

func quadKinds() map[string]task.Kind {
	return map[string]task.Kind{
		"generate": &generate.Kind{Generators: map[string]algos.Generator{"table": table{}}},
		"tune":     &tune.Kind{Trainers: algos.Trainers{"table": {"quad": algos.Bind[string, qcfg](table{}, quad{})}}},
	}
}

const quadDAG = genStage + `  - name: tune
    inputs: {data: gen}
    kind: tune
    params:
      env: table
      method: quad
      budget: 1
      seeds: [1, 2]
      select: min
      grid: {a: [0.1, 0.15, 0.2], b: [1, 2, 3]}
      EXTEND
`

// runQuad runs the quad tune task with the given "extend" line and
// returns its chosen.json, decoded, and its table.csv.
func runQuad(t *testing.T, extend string) (chosen struct {
	Params map[string]any `json:"params"`
	Search *tune.Search   `json:"search"`
}, table string) {
	t.Helper()
	_, st, log := runDAGWith(t, t.TempDir(), strings.Replace(quadDAG, "EXTEND", extend, 1), quadKinds())
	defer log.Close()
	out := outputs(t, st, log, "tune")
	if err := json.Unmarshal([]byte(out["chosen.json"]), &chosen); err != nil {
		t.Fatal(err)
	}
	return chosen, out["table.csv"]
}

// A choice at the largest a extends a by the grid's own ratio (0.2·0.2/0.15
// = 0.267, then 0.356, then 0.475, three significant digits) until the
// choice is inside; b, chosen at its smallest (1), has no step below it
// (1·1/2 rounds to 1). The new trials score as grid trials would, the
// table marks each point's round, and chosen.json says where the search
// stopped.
func TestExtendBeyondTheGridEdge(t *testing.T) {
	chosen, table := runQuad(t, "extend: 3")
	s := chosen.Search
	if s == nil || s.Rounds != 3 || len(s.Extended) != 3 {
		t.Fatalf("search %+v", s)
	}
	for i, want := range []float64{0.267, 0.356, 0.475} {
		if e := s.Extended[i]; e.Axis != "a" || e.Value != want || e.Edge != "largest" || e.Round != i+1 {
			t.Errorf("extension %d: %+v, want a=%v beyond the largest in round %d", i, e, want, i+1)
		}
	}
	if chosen.Params["a"] != 0.356 || chosen.Params["b"] != 1.0 {
		t.Errorf("chosen %v, want a = 0.356 (inside the extended grid), b = 1", chosen.Params)
	}
	if !strings.Contains(s.Stopped, "inside the extended grid after 3 round(s)") {
		t.Errorf("stopped: %q", s.Stopped)
	}
	// 9 grid points, then 3 a new point per round (each b).
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 1+9+3*3 || !strings.HasSuffix(lines[0], ",round") || !strings.HasPrefix(lines[10], "9,0.267,1,") || !strings.HasSuffix(lines[10], ",1") {
		t.Fatalf("table.csv:\n%s", table)
	}
	// (0.267 − 0.4)² + 0.01 on seed 1: the trial ran as a part would.
	if want := "9,0.267,1,"; !strings.HasPrefix(lines[10], want) || !strings.Contains(lines[10], ",0.027689000000000005,") {
		t.Errorf("row %q", lines[10])
	}
}

// With fewer rounds allowed the search stops at the limit, still at the
// edge, and says so.
func TestExtendStopsAtItsLimit(t *testing.T) {
	chosen, _ := runQuad(t, "extend: 2")
	if s := chosen.Search; s == nil || s.Rounds != 2 || !strings.Contains(s.Stopped, "still at an edge after 2 extension round(s)") || chosen.Params["a"] != 0.356 {
		t.Fatalf("search %+v, chosen %v", s, chosen.Params)
	}
}

// Without "extend" the outputs are the grid's alone: no round column, no
// search.
func TestNoExtendKeepsTheGrid(t *testing.T) {
	chosen, table := runQuad(t, "")
	if chosen.Search != nil || strings.Contains(table, "round") || chosen.Params["a"] != 0.2 {
		t.Fatalf("search %+v, chosen %v, table:\n%s", chosen.Search, chosen.Params, table)
	}
}

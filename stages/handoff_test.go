package stages_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"zorepro/pipeline/events"
	"zorepro/pipeline/pipelinetest"
	"zorepro/pipeline/task"
	"zorepro/stages/evaluate/curvecsv"
	"zorepro/stages/tune/chosenjson"
)

// handoffDAG runs every field of the files one stage hands to the next:
// a tune task with a reference point and an extension round, a second one
// that carries its ν, a train task that takes the second's
// choice, and its evaluation.
const handoffDAG = `version: 1
stages:
  - name: generate/linreg
    kind: generate
    params: {env: linreg}
    matrix: {d: [10], seed: [283, 5488]}
  - name: tune/linreg
    kind: tune
    inputs: {data: {stage: generate/linreg, where: {seed: [283]}}}
    matrix: {d: [10], method: [ars]}
    params: {env: linreg, seeds: [283], budget: 3000, strict_budget: true, score: test_loss, select: min,
      grid: {alpha: [0.01, 0.02, 0.03], directions: [10], nu: [0.02, 0.03], top: [10]}, extend: 1,
      reference: {alpha: 0.02, directions: 10, nu: 0.03, top: 10}}
  - name: tune/carry
    kind: tune
    inputs:
      data: {stage: generate/linreg, where: {seed: [283]}}
      carry: tune/linreg
    matrix: {d: [10], method: [ars]}
    params: {env: linreg, seeds: [283], budget: 3000, strict_budget: true, score: test_loss, select: min,
      grid: {alpha: [0.02, 0.03]}, carry: [nu], directions: 10, top: 10, nu: 0.03}
  - name: train/linreg
    kind: train
    inputs: {data: generate/linreg, hyper: tune/carry}
    matrix: {d: [10], method: [ars], seed: [5488]}
    params: {env: linreg, budget: 3000, alpha: 0.03, directions: 10, top: 10, nu: 0.03, snapshot_every: 1}
  - name: evaluate/linreg
    kind: evaluate
    inputs: {trained: train/linreg, data: generate/linreg}
    matrix: {d: [10], method: [ars], seed: [5488]}
    params: {env: linreg}
`

// The shared parsers read exactly what the stages write: chosenjson every
// field of both tune tasks' chosen.json (an unknown field is an error) and
// curvecsv every row of curve.csv, bit for bit the evaluate task's
// iteration events.
func TestHandoffParsersReadWhatStagesWrite(t *testing.T) {
	outs, _ := runStagesDAG(t, handoffDAG, false)

	var seen []string
	for _, tk := range []string{"tune/linreg/d=10/method=ars", "tune/carry/d=10/method=ars"} {
		data := lastStore.read(t, outs[tk], "chosen.json")
		c, err := chosenjson.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tk, err, data)
		}
		// Every field written is read: the generic decoding's keys are
		// the typed value's, and re-encoding gives the same JSON.
		var generic, again map[string]any
		json.Unmarshal(data, &generic)
		b, _ := json.Marshal(c)
		json.Unmarshal(b, &again)
		if g, a := mustJSON(t, generic), mustJSON(t, again); g != a {
			t.Errorf("%s: written\n%s\nparsed and re-encoded\n%s", tk, g, a)
		}
		for k := range generic {
			seen = append(seen, k)
		}
		if _, ok := c.Number("alpha"); !ok {
			t.Errorf("%s: no numeric alpha in %s", tk, data)
		}
	}
	for _, k := range []string{"params", "point", "score", "score_name", "select", "seeds", "search", "reference", "reference_point", "reference_score", "carried", "carried_from"} {
		if !strings.Contains(" "+strings.Join(seen, " ")+" ", " "+k+" ") {
			t.Errorf("no tune task of the test wrote %q: the test covers less than it says", k)
		}
	}

	ev := "evaluate/linreg/d=10/method=ars/seed=5488"
	data := lastStore.read(t, outs[ev], "curve.csv")
	c, err := curvecsv.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	iters := pipelinetest.ReadLog(t, lastStore.st.Root(), func(l *events.Log) ([]task.Iter, error) {
		runs, err := l.IterRuns(ev)
		if err != nil || len(runs) == 0 {
			return nil, err
		}
		return l.Iterations(ev, runs[len(runs)-1])
	})
	if len(c.Rows) < 3 || len(c.Rows) != len(iters) {
		t.Fatalf("curve.csv has %d rows, the evaluate task recorded %d iterations", len(c.Rows), len(iters))
	}
	for i, r := range c.Rows {
		it := iters[i]
		if r.Iteration != it.Iteration || r.Samples != it.Samples || len(r.Values) != len(it.Metrics) {
			t.Fatalf("row %d: %+v, event %+v", i, r, it)
		}
		for j, m := range it.Metrics {
			if c.Metrics[j] != m.Name || math.Float64bits(r.Values[j]) != math.Float64bits(m.Value) {
				t.Errorf("row %d %s: parsed %v, event %s %v", i, c.Metrics[j], r.Values[j], m.Name, m.Value)
			}
		}
	}
	samples, _ := c.Column("samples")
	if samples[len(samples)-1] != float64(c.Rows[len(c.Rows)-1].Samples) {
		t.Errorf("samples column %v", samples)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetIndent("", " ")
	if err := e.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

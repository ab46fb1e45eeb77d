//go:build mujoco

package stages_test

import (
	"fmt"
	"math"
	"testing"

	"zorepro/envs/mujoco"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// baselineDAG evaluates where ARS and ExAct start on Hopper at H = 3, on
// two seeds each.
const baselineDAG = `version: 1
stages:
  - name: generate/crossover
    kind: generate
    params: {env: hopper}
    matrix: {name: [hopper], horizon: [3]}
  - name: baseline/crossover
    kind: baseline
    inputs: {data: generate/crossover}
    matrix: {name: [hopper], horizon: [3], method: [arsv1, exact], seed: [11, 12]}
    params: {env: hopper, alpha: 1e-3, directions: 2, nu: 0.1}
`

// A baseline task evaluates the policy its method starts from, never
// stepped: for ARS and ExAct that is W = 0, so its curve.csv is one row at
// iteration 0 and samples 0 whose return is the mean over the instance's
// 100 episodes of the zero policy, drawn from the task's own "eval"
// stream at index 0, as an evaluate task draws a snapshot's.
func TestBaselineEvaluatesTheStartingPolicy(t *testing.T) {
	outs, _ := runDAG(t, baselineDAG, dagRun{})
	in, err := mujoco.NewInstance("hopper", 3, 100)
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]float64, in.ActDim()*in.ObsDim())
	seen := map[string]bool{}
	for _, method := range []string{"arsv1", "exact"} {
		for _, seed := range []uint64{11, 12} {
			path := fmt.Sprintf("baseline/crossover/horizon=3/method=%s/name=hopper/seed=%d", method, seed)
			want, err := in.EvalReturn(zero, stream.New(seed, path, nil).Rand("eval", 0))
			if err != nil {
				t.Fatal(err)
			}
			got := string(lastStore.read(t, outs[path], "curve.csv"))
			if w := "iteration,samples,return\n0,0," + task.FormatFloat(want) + "\n"; got != w {
				t.Errorf("%s curve.csv:\n%s\nwant (W = 0 evaluated from its own stream):\n%s", path, got, w)
			}
			// W = 0 on Hopper stands still: nearly its alive bonus, 1 a step.
			if math.Abs(want-3) > 0.1 {
				t.Errorf("%s: the zero policy returns %v over H = 3, want about 3", path, want)
			}
			seen[got] = true
		}
	}
	if len(seen) != 4 {
		t.Errorf("%d distinct curves from 4 tasks: each task must draw its own episodes", len(seen))
	}
}

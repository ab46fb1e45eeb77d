//go:build mujoco

package locomotion

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"zorepro/envs/mujoco"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

var update = flag.Bool("update", false, "rewrite testdata/rollouts_$GOARCH.golden")

var specs = []*mujoco.Spec{HopperSpec, Walker2dSpec, AntSpec, HumanoidSpec}

// The bodies have gym's dimensions: p actions, n observations, d = p·n
// policy parameters (the crossover experiment's d), and dt.
func TestDimensions(t *testing.T) {
	want := map[string][4]float64{
		"hopper": {3, 11, 33, 0.008}, "walker2d": {6, 17, 102, 0.008},
		"ant": {8, 111, 888, 0.05}, "humanoid": {17, 376, 6392, 0.015},
	}
	for _, s := range specs {
		m, err := mujoco.Open(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		w := want[s.Name]
		if p, n := m.ActDim(), m.ObsDim(); float64(p) != w[0] || float64(n) != w[1] || float64(p*n) != w[2] || math.Abs(m.Dt()-w[3]) > 1e-15 {
			t.Errorf("%s: p = %d, n = %d, dt = %v; want %v", s.Name, p, n, m.Dt(), w)
		}
	}
}

// TestRolloutGolden pins the returns of a zero policy over 100 steps and a
// random one over 50 on every body, bit for bit (testdata, by GOARCH;
// -update rewrites it): any change to a model, a term or MuJoCo shows.
func TestRolloutGolden(t *testing.T) {
	var b strings.Builder
	for _, s := range specs {
		m, err := mujoco.Open(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		W := make([]float64, m.ActDim()*m.ObsDim())
		r0, err := m.Rollout(rand.New(rand.NewPCG(1, 2)), W, 100, -1, nil, nil)
		if err != nil {
			t.Fatalf("%s, W = 0: %v", s.Name, err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range W {
			W[i] = 0.1 * rng.NormFloat64()
		}
		r1, err := m.Rollout(rand.New(rand.NewPCG(5, 6)), W, 50, -1, nil, nil)
		if err != nil {
			t.Fatalf("%s, random W: %v", s.Name, err)
		}
		fmt.Fprintf(&b, "%s %x %x\n", s.Name, math.Float64bits(r0), math.Float64bits(r1))
		t.Logf("%s: W = 0 over 100 steps %.6g; W ~ N(0, 0.1²) over 50 steps %.6g", s.Name, r0, r1)
	}
	path := filepath.Join("testdata", "rollouts_"+runtime.GOARCH+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it with -update)", err)
	}
	if b.String() != string(want) {
		t.Errorf("returns:\n%s\ngolden:\n%s", b.String(), want)
	}
}

// Each body's environment generates instances of that body only.
func TestEnvAcceptsItsBodyOnly(t *testing.T) {
	p := task.NewParams("dag.yaml", "generate/crossover", map[string]any{"name": "swimmer", "horizon": 5})
	NewAnt().PlanGenerate(p)
	if p.Err() == nil || !strings.Contains(p.Err().Error(), "name") {
		t.Errorf("the ant environment generated a swimmer: %v", p.Err())
	}
	p = task.NewParams("dag.yaml", "generate/crossover", map[string]any{"name": "ant", "horizon": 5})
	gen := NewAnt().PlanGenerate(p)
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	data, err := gen(stream.New(1, "generate/crossover", nil))
	if err != nil {
		t.Fatal(err)
	}
	in, err := NewAnt().Load(data)
	if err != nil || in.Name != "ant" || in.H != 5 {
		t.Fatalf("instance %+v, %v", in, err)
	}
}

// TestZeroPolicyReturns pins what a body earns standing still: the policy
// W = 0, where ARS and ExAct start, evaluated as the crossover experiment
// evaluates (the mean of 100 episodes from reset; rng PCG(1, 2) draws the
// episodes' streams). Without early termination the alive bonus is paid
// every step however the body lies (5 a step on Humanoid, 1 on the
// others), so these are the returns a method must beat to have learned
// anything; docs/report-and-statistics.md quotes them (to 4 significant
// digits, the tolerance here).
func TestZeroPolicyReturns(t *testing.T) {
	want := map[string][4]float64{ // H = 13, 21, 34, 55
		"hopper":   {12.93, 20.76, 33.68, 54.37},
		"walker2d": {12.94, 20.87, 33.60, 53.23},
		"ant":      {13.21, 21.20, 34.16, 55.02},
		"humanoid": {61.98, 102.4, 170.1, 271.4},
	}
	for _, s := range specs {
		for i, h := range []int{13, 21, 34, 55} {
			in, err := mujoco.NewInstance(s.Name, h, 100)
			if err != nil {
				t.Fatal(err)
			}
			r, err := in.EvalReturn(make([]float64, in.ActDim()*in.ObsDim()), rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatalf("%s at H = %d: %v", s.Name, h, err)
			}
			t.Logf("%s H = %d: %.6g", s.Name, h, r)
			if w := want[s.Name][i]; math.Abs(r-w) > 5e-4*math.Abs(w) {
				t.Errorf("%s at H = %d: W = 0 returns %.6g, want %.4g", s.Name, h, r, w)
			}
		}
	}
}

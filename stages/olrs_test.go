package stages_test

import (
	"math"
	"testing"

	"zorepro/algos"
	"zorepro/algos/algostest"
	"zorepro/algos/olrs"
	"zorepro/algos/olrs/actionrs"
	"zorepro/algos/olrs/paramrs"
	"zorepro/envs/linreg"
	"zorepro/envs/olr"
	"zorepro/pipeline/stream"
)

// Known answers of the regret experiment's learners on the §3.1 stream
// (the rules' own tests in algos/olrs need no environment).

func olrInst() *olr.Instance {
	return &olr.Instance{Lin: linreg.Generate(6, stream.New(5488, "olrs-test", nil).Rand("instance")), CTheta: 3, CA: 3}
}

func TestOLRSResumeIsBitExact(t *testing.T) {
	in := olrInst()
	for name, f := range map[string]algos.Algorithm[olrs.Config, *olr.Instance]{"paramrs": paramrs.Factory[*olr.Instance, *olr.Moments]{}, "actionrs": actionrs.Factory[*olr.Instance, *olr.Moments]{}} {
		t.Run(name, func(t *testing.T) {
			cfg := olrs.Config{Method: name, T: 5000, Chunk: 250}
			algostest.CheckResume(t, func() algos.Method {
				m, err := f.New(cfg, in, stream.New(1, "t", nil))
				if err != nil {
					t.Fatal(err)
				}
				return m
			}, cfg.Budget(), algos.Schedule{Every: 4}, []int64{1, 7, 13})
		})
	}
}

// TestOLRSRegretAccountingWithALearningRule: with a step size that learns
// (not the theorem's conservative one), Algorithm 2's average regret
// against the optimum in hindsight falls well below its early value, and
// the played predictions' regret exceeds θ's by about δ² (the e-noise).
// This checks the protocol: losses, moments and the hindsight optimum.
func TestOLRSRegretAccountingWithALearningRule(t *testing.T) {
	in := olrInst()
	snap := func(T int64) []float64 {
		m := olrs.New[*olr.Moments](in, &actionrs.Rule{Alpha: 0.02, Delta: 0.1}, T, 100, stream.New(2, "t", nil))
		if _, err := algos.Run(t.Context(), m, algos.Budget{Samples: T}, algos.Schedule{Every: math.MaxInt64}, nil); err != nil {
			t.Fatal(err)
		}
		return m.Snapshot()
	}
	early, late := snap(200), snap(20000)
	if !(late[0] < early[0]/4) || late[0] < -1e-9 {
		t.Fatalf("average regret: T=200 %v, T=20000 %v", early[0], late[0])
	}
	if gap := late[1] - late[0]; math.Abs(gap-0.01) > 0.003 {
		t.Fatalf("played − θ regret = %v, want ≈ δ² = 0.01", gap)
	}
}

// TestOLRSTheoremSchedules pins α and δ of Theorem 1 for one instance.
func TestOLRSTheoremSchedules(t *testing.T) {
	in := olrInst() // b = 7, C_θ = 3, C_s = 1, C_a = 3: C = 36, L = 6
	a1, d1 := paramrs.Schedule(in, 10000)
	wantD1 := math.Pow(1e4, -0.25) * math.Sqrt(3*7*(36*36+1)/(2*6.0))
	if math.Abs(d1-wantD1) > 1e-12*wantD1 || math.Abs(a1-3*wantD1/(7*(36*36+1)*100)) > 1e-12*a1 {
		t.Fatalf("Algorithm 1: α = %v, δ = %v", a1, d1)
	}
	a2, d2 := actionrs.Schedule(in, 10000)
	wantD2 := math.Pow(1e4, -0.25) * math.Sqrt(3*(36*36+1)*1/(2*36.0))
	if math.Abs(d2-wantD2) > 1e-12*wantD2 || math.Abs(a2-3*wantD2/((36*36+1)*1*100)) > 1e-12*a2 {
		t.Fatalf("Algorithm 2: α = %v, δ = %v", a2, d2)
	}
}

package olrs_test

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

// estimate returns the gradient estimate a rule's round implied:
// (θ_before − θ_after)/α.
func estimate(r olrs.Rule, alpha float64, theta, s []float64, a float64, seed uint64, k int) []float64 {
	th := append([]float64(nil), theta...)
	r.Round(th, s, a, stream.New(seed, "est", nil).Rand("e", uint64(k)))
	out := make([]float64, len(th))
	for j := range th {
		out[j] = (theta[j] - th[j]) / alpha
	}
	return out
}

// The paper's Appendix A: both estimators are unbiased for the gradient of
// their smoothed losses, which for the quadratic c(θ) = (θᵀs − a)² equals
// ∇c(θ) = 2(θᵀs − a)s (smoothing over the ball adds δ²‖s‖²/(b+2), a
// constant; over e ∈ {±1} it adds δ²).
func TestEstimatorsAreUnbiased(t *testing.T) {
	theta := []float64{0.3, -0.2, 0.5, 0.1}
	s := []float64{0.5, 0.5, -0.5, 0.5}
	a := 0.4
	var pred float64
	for j := range s {
		pred += theta[j] * s[j]
	}
	grad := make([]float64, len(s))
	for j := range s {
		grad[j] = 2 * (pred - a) * s[j]
	}

	// Algorithm 2: averaging the two equally likely e is exact.
	act := &actionrs.Rule{Alpha: 1e-3, Delta: 0.1}
	mean := make([]float64, len(s))
	seen := map[float64]bool{}
	for k := 0; len(seen) < 2 || k < 2; k++ {
		est := estimate(act, act.Alpha, theta, s, a, 7, k)
		sign := est[0] // distinguishes e = +1 from e = −1
		if seen[sign] {
			continue
		}
		seen[sign] = true
		for j := range mean {
			mean[j] += est[j] / 2
		}
	}
	for j := range mean {
		if math.Abs(mean[j]-grad[j]) > 1e-12 {
			t.Fatalf("Algorithm 2: E[estimate][%d] = %v, ∇c = %v", j, mean[j], grad[j])
		}
	}

	// Algorithm 1: Monte Carlo over u, within 5 standard errors.
	par := &paramrs.Rule{Alpha: 1e-3, Delta: 0.2}
	const n = 200000
	sum, sum2 := make([]float64, len(s)), make([]float64, len(s))
	for k := 0; k < n; k++ {
		est := estimate(par, par.Alpha, theta, s, a, 11, k)
		for j := range est {
			sum[j] += est[j]
			sum2[j] += est[j] * est[j]
		}
	}
	for j := range sum {
		m := sum[j] / n
		se := math.Sqrt((sum2[j]/n - m*m) / n)
		if math.Abs(m-grad[j]) > 5*se {
			t.Errorf("Algorithm 1: E[estimate][%d] = %v ± %v, ∇c = %v", j, m, se, grad[j])
		}
	}
}

func inst() *olr.Instance {
	return &olr.Instance{Lin: linreg.Generate(6, stream.New(5488, "olrs-test", nil).Rand("instance")), CTheta: 3, CA: 3}
}

func TestResumeIsBitExact(t *testing.T) {
	in := inst()
	for name, f := range map[string]algos.Algorithm[olrs.Config, *olr.Instance]{"paramrs": paramrs.Factory{}, "actionrs": actionrs.Factory{}} {
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

// TestRegretAccountingWithALearningRule: with a step size that learns
// (not the theorem's conservative one), Algorithm 2's average regret
// against the optimum in hindsight falls well below its early value, and
// the played predictions' regret exceeds θ's by about δ² (the e-noise).
// This checks the protocol: losses, moments and the hindsight optimum.
func TestRegretAccountingWithALearningRule(t *testing.T) {
	in := inst()
	snap := func(T int64) []float64 {
		m := olrs.New(in, &actionrs.Rule{Alpha: 0.02, Delta: 0.1}, T, 100, stream.New(2, "t", nil))
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

// TestTheoremSchedules pins α and δ of Theorem 1 for one instance.
func TestTheoremSchedules(t *testing.T) {
	in := inst() // b = 7, C_θ = 3, C_s = 1, C_a = 3: C = 36, L = 6
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

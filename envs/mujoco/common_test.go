package mujoco

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"zorepro/pipeline/blob"
	"zorepro/pipeline/task"
)

// Tests in this file need no simulator; they run in every build.

// ownNames returns the names of the package's own environments, sorted:
// the tests of this package exercise them; Names also holds the bodies
// other packages register (locomotion_test.go imports one).
func ownNames() []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

// TestSpecs: dimensions and constants of spec §4.1; the embedded XML is the
// file under assets/.
func TestSpecs(t *testing.T) {
	if got := ownNames(); !slices.Equal(got, []string{HalfCheetah, Swimmer}) {
		t.Fatalf("the package's own environments = %v", got)
	}
	for _, n := range ownNames() { // Names also holds any body registered (e.g. by locomotion_test.go's import)
		if !slices.Contains(Names(), n) {
			t.Errorf("Names %v lacks %s", Names(), n)
		}
	}
	for _, c := range []struct {
		name               string
		n, p, skip, nq, nv int
		frameSkip          int
		ctrlCost           float64
		gaussVel           bool
		file               string
	}{
		{Swimmer, 8, 2, 2, 5, 5, 4, 1e-4, false, "swimmer.xml"},
		{HalfCheetah, 17, 6, 1, 9, 9, 5, 0.1, true, "half_cheetah.xml"},
	} {
		s, err := Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if s.ObsDim() != c.n || s.ActDim() != c.p || s.ObsSkip != c.skip || s.NQ != c.nq || s.NV != c.nv ||
			s.FrameSkip != c.frameSkip || s.CtrlCost != c.ctrlCost || s.GaussVel != c.gaussVel || s.File != c.file {
			t.Errorf("%s: spec %+v", c.name, *s)
		}
		disk, err := os.ReadFile("assets/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(disk, s.XML) || s.SHA256() != sha256.Sum256(disk) {
			t.Errorf("%s: embedded XML differs from assets/%s", c.name, c.file)
		}
	}
	if _, err := Lookup("octopus"); !errors.Is(err, ErrUnknownEnv) {
		t.Fatalf("Lookup(ant): err = %v", err)
	}
}

// TestDrawReset: the draw order of the reset noise (all positions, then all
// velocities) and its values, draw by draw.
func TestDrawReset(t *testing.T) {
	for _, name := range ownNames() {
		s, _ := Lookup(name)
		dq, dv := make([]float64, s.NQ), make([]float64, s.NV)
		s.DrawReset(rand.New(rand.NewPCG(3, 4)), dq, dv)
		ref := rand.New(rand.NewPCG(3, 4))
		for i, x := range dq {
			if want := -0.1 + float64(0.2*ref.Float64()); x != want {
				t.Fatalf("%s: dqpos[%d] = %v, want %v", name, i, x, want)
			}
		}
		for i, x := range dv {
			var want float64
			if s.GaussVel {
				want = float64(0.1 * ref.NormFloat64())
			} else {
				want = -0.1 + float64(0.2*ref.Float64())
			}
			if x != want {
				t.Fatalf("%s: dqvel[%d] = %v, want %v", name, i, x, want)
			}
		}
	}
}

// TestDrawResetDistribution: mean and standard deviation of every noise
// coordinate over many draws, within 5 standard errors: U(−0.1, 0.1) has
// σ = 0.1/√3 and kurtosis 1.8, 0.1·N(0,1) has σ = 0.1 and kurtosis 3; the
// standard error of a sample std is ≈ σ·√((κ−1)/4N). Uniform draws also
// stay inside [−0.1, 0.1).
func TestDrawResetDistribution(t *testing.T) {
	const N = 40000
	for _, name := range ownNames() {
		s, _ := Lookup(name)
		rng := rand.New(rand.NewPCG(11, 12))
		dq, dv := make([]float64, s.NQ), make([]float64, s.NV)
		samples := make([][]float64, s.NQ+s.NV)
		for k := 0; k < N; k++ {
			s.DrawReset(rng, dq, dv)
			for i, x := range append(slices.Clone(dq), dv...) {
				samples[i] = append(samples[i], x)
			}
		}
		for i, xs := range samples {
			gauss := i >= s.NQ && s.GaussVel
			checkNoise(t, name, i, xs, gauss)
		}
	}
}

// checkNoise checks one coordinate's samples against U(−0.1, 0.1) or
// 0.1·N(0, 1) (see TestDrawResetDistribution).
func checkNoise(t *testing.T, name string, i int, xs []float64, gauss bool) {
	t.Helper()
	n := float64(len(xs))
	sigma, kurt := 0.1/math.Sqrt(3), 1.8
	if gauss {
		sigma, kurt = 0.1, 3
	}
	var sum, ss float64
	for _, x := range xs {
		sum += x
		if !gauss && (x < -0.1 || x >= 0.1) {
			t.Fatalf("%s coordinate %d: uniform draw %v outside [−0.1, 0.1)", name, i, x)
		}
	}
	mean := sum / n
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	if tol := 5 * sigma / math.Sqrt(n); math.Abs(mean) > tol {
		t.Errorf("%s coordinate %d: mean %.3g, want |mean| ≤ %.3g", name, i, mean, tol)
	}
	if tol := 5 * sigma * math.Sqrt((kurt-1)/(4*n)); math.Abs(sd-sigma) > tol {
		t.Errorf("%s coordinate %d: std %.5g, want %.5g ± %.3g", name, i, sd, sigma, tol)
	}
}

// TestDecode: malformed encodings are ErrFormat (never a panic), checked
// before the simulator is needed.
func TestDecode(t *testing.T) {
	s, _ := Lookup(Swimmer)
	enc := func(name string, h, eps uint64, sum []byte, ver uint64) []byte {
		e := blob.NewEncoder(instanceMagic, instanceVersion)
		e.String(name)
		e.Uint64(h)
		e.Uint64(eps)
		e.Blob(sum)
		e.Uint64(ver)
		return e.Data()
	}
	sum := s.SHA256()
	good := enc(Swimmer, 15, 100, sum[:], WantVersion)
	in, spec, err := decode(good)
	if err != nil || spec != s || in.Name != Swimmer || in.H != 15 || in.Episodes != 100 || in.ModelSHA256 != sum || in.MuJoCo != WantVersion {
		t.Fatalf("decode = %+v, %v", in, err)
	}
	for what, b := range map[string][]byte{
		"truncated":   good[:len(good)-1],
		"trailing":    append(slices.Clone(good), 0),
		"unknown env": enc("octopus", 15, 100, sum[:], WantVersion),
		"horizon 0":   enc(Swimmer, 0, 100, sum[:], WantVersion),
		"horizon big": enc(Swimmer, MaxHorizon+1, 100, sum[:], WantVersion),
		"episodes 0":  enc(Swimmer, 15, 0, sum[:], WantVersion),
		"short hash":  enc(Swimmer, 15, 100, sum[:31], WantVersion),
		"empty":       nil,
	} {
		if _, _, err := decode(b); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", what, err)
		}
		var in Instance
		if err := in.UnmarshalBinary(b); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: UnmarshalBinary err = %v, want ErrFormat", what, err)
		}
	}
}

// TestPlanGenerateParams: invalid parameters are all reported at planning
// time, in every build.
func TestPlanGenerateParams(t *testing.T) {
	p := task.NewParams("dag.yaml", "generate/mujoco", map[string]any{"name": "octopus", "horizon": 0, "episodes": 0, "bogus": 1})
	Env{}.PlanGenerate(p)
	err := p.Err()
	if err == nil {
		t.Fatal("invalid parameters accepted")
	}
	for _, field := range []string{"params.name", "params.horizon", "params.episodes", "params.bogus"} {
		if !bytes.Contains([]byte(err.Error()), []byte(field)) {
			t.Errorf("error does not mention %s: %v", field, err)
		}
	}
	p = task.NewParams("dag.yaml", "generate/mujoco", map[string]any{"name": Swimmer, "horizon": 15})
	Env{}.PlanGenerate(p)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if got := p.Resolved(); !slices.Equal(got, []string{"episodes 100", "horizon 15", `name "swimmer"`}) {
		t.Fatalf("resolved = %q", got)
	}
	if got := (Env{}).Metrics(); !slices.Equal(got, []string{MetricReturn}) {
		t.Fatalf("Metrics = %v", got)
	}
}

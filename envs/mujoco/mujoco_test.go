//go:build mujoco

package mujoco

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

var update = flag.Bool("update", false, "rewrite testdata/rollouts_$GOARCH.golden")

func open(t testing.TB, name string) *Model {
	t.Helper()
	m, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newSim(t testing.TB, m *Model) *Sim {
	t.Helper()
	s, err := m.NewSim()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// randW returns a p×n policy with N(0, scale²) entries.
func randW(m *Model, scale float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	W := make([]float64, m.ActDim()*m.ObsDim())
	for i := range W {
		W[i] = scale * rng.NormFloat64()
	}
	return W
}

func cfloats(p unsafe.Pointer, n int) []float64 { return unsafe.Slice((*float64)(p), n) }

// TestVersion: the linked library is MuJoCo 2.2.2 and is reported as such.
func TestVersion(t *testing.T) {
	v, s, err := Version()
	if err != nil || v != WantVersion || s != "2.2.2" {
		t.Fatalf("Version = %d, %q, %v", v, s, err)
	}
	if got := (Env{}).NativeVersions(); !slices.Equal(got, []string{"mujoco 2.2.2"}) {
		t.Fatalf("NativeVersions = %q", got)
	}
}

// torsoInertia is the HalfCheetah torso's principal inertia under MuJoCo
// 1.50's rule, computed here from its two capsules as solid cylinders of
// length 2h + r (mass shared by length): the torso along x through the
// body origin, the head centred at (0.6, 0, 0.1) with its axis tilted 0.87
// rad about y from z; each cylinder's inertia rotated into the body frame
// and moved to the body's centre of mass (parallel axis theorem).
func torsoInertia(mass float64) []float64 {
	const r = 0.046
	type cyl struct {
		l      float64    // length 2h + r
		pos, u [3]float64 // centre and unit axis in the body frame
	}
	cs := []cyl{{2*0.5 + r, [3]float64{}, [3]float64{1, 0, 0}},
		{2*0.15 + r, [3]float64{0.6, 0, 0.1}, [3]float64{math.Sin(0.87), 0, math.Cos(0.87)}}}
	var com [3]float64
	for _, c := range cs {
		for k := range com {
			com[k] += c.l / (cs[0].l + cs[1].l) * c.pos[k]
		}
	}
	in := mat.NewSymDense(3, nil)
	for _, c := range cs {
		m := mass * c.l / (cs[0].l + cs[1].l)
		axial, across := m*r*r/2, m*(3*r*r+c.l*c.l)/12
		var d [3]float64
		for k := range d {
			d[k] = c.pos[k] - com[k]
		}
		dd := d[0]*d[0] + d[1]*d[1] + d[2]*d[2]
		for a := 0; a < 3; a++ {
			for b := a; b < 3; b++ {
				v := (axial-across)*c.u[a]*c.u[b] + m*(-d[a]*d[b])
				if a == b {
					v += across + m*dd
				}
				in.SetSym(a, b, in.At(a, b)+v)
			}
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(in, false) {
		panic("torsoInertia: no eigenvalues")
	}
	vals := eig.Values(nil)
	slices.Sort(vals)
	return vals
}

// principal returns a body's principal moments of inertia, ascending.
func principal(e *Model, body int) []float64 {
	in := slices.Clone(cfloats(unsafe.Pointer(e.m.body_inertia), 3*int(e.m.nbody))[3*body : 3*body+3])
	slices.Sort(in)
	return in
}

func near(a, b []float64, tol float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*math.Max(1, math.Abs(b[i])) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestModelValues: the compiled models carry the values of gym's assets
// that matter for the dynamics (spec §4.1).
func TestModelValues(t *testing.T) {
	sw := open(t, Swimmer)
	if o := sw.m.opt; o.timestep != 0.01 || o.integrator != 1 /* mjINT_RK4 */ || o.viscosity != 0.1 || o.density != 4000 || o.collision != 1 /* mjCOL_PAIR */ {
		t.Errorf("swimmer options: timestep %v integrator %v viscosity %v density %v collision %v", o.timestep, o.integrator, o.viscosity, o.density, o.collision)
	}
	if sw.Dt() != 0.04 {
		t.Errorf("swimmer dt = %v", sw.Dt())
	}
	// Three capsules of radius 0.1 and length 1 at density 1000, weighed
	// as MuJoCo 1.50 did (a solid cylinder of length 2h + r = 1.1, see
	// assets/swimmer.xml): 1000·π·0.1²·1.1 = 11π each, not MuJoCo
	// 2.2.2's exact 1000·(π·0.1²·1 + 4/3·π·0.1³) = 35.6047.
	cap := 11 * math.Pi
	inertia := []float64{cap * 0.01 / 2, cap * (3*0.01 + 1.1*1.1) / 12, cap * (3*0.01 + 1.1*1.1) / 12}
	for i, mass := range cfloats(unsafe.Pointer(sw.m.body_mass), int(sw.m.nbody))[1:] {
		if math.Abs(mass-cap) > 1e-9*cap {
			t.Errorf("swimmer body %d mass %v, want %v", i+1, mass, cap)
		}
		if got := principal(sw, i+1); !near(got, inertia, 1e-9) {
			t.Errorf("swimmer body %d principal inertia %v, want %v", i+1, got, inertia)
		}
	}
	for i, a := range cfloats(unsafe.Pointer(sw.m.dof_armature), 5) {
		if a != 0.1 {
			t.Errorf("swimmer dof %d armature %v", i, a)
		}
	}
	checkActuators(t, sw, []float64{150, 150})

	hc := open(t, HalfCheetah)
	if o := hc.m.opt; o.timestep != 0.01 || o.integrator != 0 /* mjINT_EULER */ || [3]float64{float64(o.gravity[0]), float64(o.gravity[1]), float64(o.gravity[2])} != [3]float64{0, 0, -9.81} {
		t.Errorf("halfcheetah options: timestep %v integrator %v gravity %v", o.timestep, o.integrator, o.gravity)
	}
	if hc.Dt() != 0.05 {
		t.Errorf("halfcheetah dt = %v", hc.Dt())
	}
	var total float64
	for _, mass := range cfloats(unsafe.Pointer(hc.m.body_mass), int(hc.m.nbody)) {
		total += mass
	}
	if math.Abs(total-14) > 1e-9 {
		t.Errorf("halfcheetah total mass %v, want 14 (settotalmass)", total)
	}
	// The bodies weigh what gym's HalfCheetah-v2 reports under mujoco-py
	// 1.50 (MuJoCo 1.50's capsule rule, a cylinder of length 2h + r; see
	// assets/half_cheetah.xml), not MuJoCo 2.2.2's exact capsule masses
	// (6.2502 1.5435 1.5874 1.0954 1.4381 1.2008 0.8845).
	published := []float64{6.36031332, 1.53524804, 1.58093995, 1.0691906, 1.42558747, 1.17885117, 0.84986945}
	halves := [][]float64{{0.5, 0.15}, {0.145}, {0.15}, {0.094}, {0.133}, {0.106}, {0.07}}
	const r = 0.046
	vol := func(hs []float64) (v float64) {
		for _, h := range hs {
			v += math.Pi * r * r * (2*h + r)
		}
		return v
	}
	var vsum float64
	for _, hs := range halves {
		vsum += vol(hs)
	}
	for i, mass := range cfloats(unsafe.Pointer(hc.m.body_mass), int(hc.m.nbody))[1:] {
		if want := 14 * vol(halves[i]) / vsum; math.Abs(mass-want) > 1e-12 || math.Abs(mass-published[i]) > 1e-8 {
			t.Errorf("halfcheetah body %d mass %.10f, want %.10f (gym under MuJoCo 1.50: %.8f)", i+1, mass, want, published[i])
		}
		if i == 0 {
			if got, want := principal(hc, 1), torsoInertia(mass); !near(got, want, 1e-9) {
				t.Errorf("halfcheetah torso principal inertia %v, want %v", got, want)
			}
			continue
		}
		// One capsule: the solid cylinder's principal inertia about its
		// centre.
		L := 2*halves[i][0] + r
		cyl := []float64{mass * r * r / 2, mass * (3*r*r + L*L) / 12, mass * (3*r*r + L*L) / 12}
		if got := principal(hc, i+1); !near(got, cyl, 1e-9) {
			t.Errorf("halfcheetah body %d principal inertia %v, want %v", i+1, got, cyl)
		}
	}
	// Joints rootx, rootz, rooty, bthigh, bshin, bfoot, fthigh, fshin, ffoot.
	stiff := []float64{0, 0, 0, 240, 180, 120, 180, 120, 60}
	damp := []float64{0, 0, 0, 6, 4.5, 3, 4.5, 3, 1.5}
	arm := []float64{0, 0, 0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}
	rng := []float64{0, 0, 0, 0, 0, 0, -.52, 1.05, -.785, .785, -.4, .785, -1, .7, -1.2, .87, -.5, .5}
	lim := unsafe.Slice((*byte)(unsafe.Pointer(hc.m.jnt_limited)), 9)
	if !slices.Equal(cfloats(unsafe.Pointer(hc.m.jnt_stiffness), 9), stiff) ||
		!slices.Equal(cfloats(unsafe.Pointer(hc.m.dof_damping), 9), damp) ||
		!slices.Equal(cfloats(unsafe.Pointer(hc.m.dof_armature), 9), arm) ||
		!slices.Equal(cfloats(unsafe.Pointer(hc.m.jnt_range), 18), rng) ||
		!slices.Equal(lim, []byte{0, 0, 0, 1, 1, 1, 1, 1, 1}) {
		t.Errorf("halfcheetah joints: stiffness %v damping %v armature %v range %v limited %v",
			cfloats(unsafe.Pointer(hc.m.jnt_stiffness), 9), cfloats(unsafe.Pointer(hc.m.dof_damping), 9),
			cfloats(unsafe.Pointer(hc.m.dof_armature), 9), cfloats(unsafe.Pointer(hc.m.jnt_range), 18), lim)
	}
	checkActuators(t, hc, []float64{120, 90, 60, 120, 60, 30})
}

func checkActuators(t *testing.T, m *Model, gears []float64) {
	t.Helper()
	nu := int(m.m.nu)
	gear := cfloats(unsafe.Pointer(m.m.actuator_gear), 6*nu)
	cr := cfloats(unsafe.Pointer(m.m.actuator_ctrlrange), 2*nu)
	cl := unsafe.Slice((*byte)(unsafe.Pointer(m.m.actuator_ctrllimited)), nu)
	for i, g := range gears {
		if gear[6*i] != g || cr[2*i] != -1 || cr[2*i+1] != 1 || cl[i] != 1 {
			t.Errorf("%s actuator %d: gear %v ctrlrange %v limited %v, want gear %v, [−1, 1], limited", m.spec.Name, i, gear[6*i], cr[2*i:2*i+2], cl[i], g)
		}
	}
}

// TestObsLayout: on a state set by hand the observation is
// qpos[2:] ‖ qvel (Swimmer) and qpos[1:] ‖ qvel (HalfCheetah).
func TestObsLayout(t *testing.T) {
	for _, name := range ownNames() {
		m := open(t, name)
		s := newSim(t, m)
		nq, nv := m.spec.NQ, m.spec.NV
		qpos, qvel := make([]float64, nq), make([]float64, nv)
		for i := range qpos {
			qpos[i] = 0.01 * float64(i+1)
		}
		for i := range qvel {
			qvel[i] = -0.1 * float64(i+1)
		}
		if err := s.SetState(qpos, qvel); err != nil {
			t.Fatal(err)
		}
		want := append(slices.Clone(qpos[m.spec.ObsSkip:]), qvel...)
		if got := s.Obs(); !slices.Equal(got, want) || len(got) != m.ObsDim() {
			t.Errorf("%s: obs %v, want %v", name, got, want)
		}
		if !slices.Equal(s.QPos(), qpos) || !slices.Equal(s.QVel(), qvel) {
			t.Errorf("%s: state not kept by SetState", name)
		}
	}
}

// TestRewardFreeFlight: a hand-computed step. The cheetah at its initial
// configuration, 0.7 above the floor, with forward velocity v and zero
// action falls freely for 0.05 s (no contact, no internal forces), so
// x_after − x_before = v·dt and the reward is v (up to rounding).
func TestRewardFreeFlight(t *testing.T) {
	m := open(t, HalfCheetah)
	s := newSim(t, m)
	const v = 1.5
	qvel := make([]float64, 9)
	qvel[0] = v
	if err := s.SetState(m.QPos0(), qvel); err != nil {
		t.Fatal(err)
	}
	r, err := s.Step(make([]float64, 6))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r-v) > 1e-9 {
		t.Fatalf("reward %v, want %v", r, v)
	}
	if q := s.QPos(); math.Abs(q[0]-v*0.05) > 1e-10 || math.Abs(q[1]+0.5*9.81*0.05*0.05) > 0.01 {
		t.Fatalf("state after free flight: %v", q)
	}
}

// TestRewardFormula: r = (x_after − x_before)/dt − c·‖a‖² with the
// UNCLIPPED action in the cost, while MuJoCo clamps the control: an action
// beyond ±1 moves the body exactly as the clipped one and costs more.
func TestRewardFormula(t *testing.T) {
	for _, name := range ownNames() {
		m := open(t, name)
		p := m.ActDim()
		a := make([]float64, p)
		clip := make([]float64, p)
		for i := range a {
			a[i] = 0.7 * float64(i+1) * math.Pow(-1, float64(i)) // crosses ±1 from i = 1
			clip[i] = max(-1, min(1, a[i]))
		}
		step := func(a []float64) (r float64, before, after []float64) {
			s := newSim(t, m)
			if err := s.Reset(rand.New(rand.NewPCG(5, 6))); err != nil {
				t.Fatal(err)
			}
			before = s.QPos()
			r, err := s.Step(a)
			if err != nil {
				t.Fatal(err)
			}
			return r, before, s.QPos()
		}
		r, before, after := step(a)
		rc, _, afterClip := step(clip)
		if !slices.Equal(after, afterClip) {
			t.Errorf("%s: the unclipped action moved the body differently from the clipped one", name)
		}
		cost := func(a []float64) float64 {
			var cc float64
			for _, x := range a {
				cc += float64(x * x)
			}
			return float64(m.spec.CtrlCost * cc)
		}
		want := float64((after[0]-before[0])/m.Dt()) - cost(a)
		if r != want {
			t.Errorf("%s: reward %v, want (x_after − x_before)/dt − c‖a‖² = %v", name, r, want)
		}
		if d, wd := r-rc, cost(clip)-cost(a); math.Abs(d-wd) > 1e-12 || d >= 0 {
			t.Errorf("%s: reward difference clipped vs unclipped %v, want %v", name, d, wd)
		}
	}
}

// manualRollout replays Rollout with a Sim and the policy computed in Go:
// a_i = Σ_j W_ij s_j in index order, each product rounded, delta added
// after the sum; returns Σ r_t in step order and s_t.
func manualRollout(t *testing.T, m *Model, rng *rand.Rand, W []float64, h, tp int, delta []float64) (float64, []float64) {
	t.Helper()
	s := newSim(t, m)
	if err := s.Reset(rng); err != nil {
		t.Fatal(err)
	}
	p, n := m.ActDim(), m.ObsDim()
	var ret float64
	var obsT []float64
	a := make([]float64, p)
	for k := 0; k < h; k++ {
		obs := s.Obs()
		for i := range a {
			var acc float64
			for j := 0; j < n; j++ {
				acc += float64(W[i*n+j] * obs[j])
			}
			a[i] = acc
		}
		if delta != nil && k == tp {
			for i := range a {
				a[i] += delta[i]
			}
			obsT = obs
		}
		r, err := s.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		ret += r
	}
	return ret, obsT
}

// TestRolloutMatchesSteps: a Rollout (one cgo call) equals, bit for bit,
// the same episode stepped by hand with the policy computed in Go, with and
// without the ExAct perturbation; s_t is the observation before acting.
func TestRolloutMatchesSteps(t *testing.T) {
	for _, name := range ownNames() {
		m := open(t, name)
		W := randW(m, 0.1, 1)
		h, tp := 40, 17
		delta := make([]float64, m.ActDim())
		for i := range delta {
			delta[i] = 0.2 * float64(i+1)
		}
		got, err := m.Rollout(rand.New(rand.NewPCG(7, 8)), W, h, -1, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := manualRollout(t, m, rand.New(rand.NewPCG(7, 8)), W, h, -1, nil)
		if got != want {
			t.Errorf("%s: Rollout %v, stepped %v", name, got, want)
		}
		obs := make([]float64, m.ObsDim())
		got, err = m.Rollout(rand.New(rand.NewPCG(7, 8)), W, h, tp, delta, obs)
		if err != nil {
			t.Fatal(err)
		}
		want, wantObs := manualRollout(t, m, rand.New(rand.NewPCG(7, 8)), W, h, tp, delta)
		if got != want || !slices.Equal(obs, wantObs) {
			t.Errorf("%s: perturbed Rollout %v obs %v, stepped %v obs %v", name, got, obs, want, wantObs)
		}
		// The perturbation matters, and a t = 0 perturbation sees the reset state.
		unpert, _ := m.Rollout(rand.New(rand.NewPCG(7, 8)), W, h, -1, nil, nil)
		if got == unpert {
			t.Errorf("%s: perturbation had no effect", name)
		}
		if _, err := m.Rollout(rand.New(rand.NewPCG(7, 8)), W, h, 0, delta, obs); err != nil {
			t.Fatal(err)
		}
		s := newSim(t, m)
		if err := s.Reset(rand.New(rand.NewPCG(7, 8))); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(obs, s.Obs()) {
			t.Errorf("%s: s_0 %v, reset observation %v", name, obs, s.Obs())
		}
	}
}

// rolloutCase is one deterministic rollout of the repeatability tests.
type rolloutCase struct {
	name   string
	h, t   int
	seed   uint64
	wScale float64
	pert   bool
}

func rolloutCases() []rolloutCase {
	var cs []rolloutCase
	for _, name := range ownNames() {
		for i, h := range []int{1, 2, 7, 15, 200} {
			cs = append(cs,
				rolloutCase{name, h, -1, uint64(100 + i), 0, false},
				rolloutCase{name, h, -1, uint64(200 + i), 0.3, false},
				rolloutCase{name, h, h / 2, uint64(300 + i), 0.3, true})
		}
	}
	return cs
}

// rolloutFunc runs one episode (Model.Rollout or a variant).
type rolloutFunc func(m *Model, rng *rand.Rand, W []float64, h, t int, delta, obs []float64) (float64, error)

func pooled(m *Model, rng *rand.Rand, W []float64, h, t int, delta, obs []float64) (float64, error) {
	return m.Rollout(rng, W, h, t, delta, obs)
}

// fresh runs an episode on a new mjData, reset with mode.
func fresh(mode int) rolloutFunc {
	return func(m *Model, rng *rand.Rand, W []float64, h, t int, delta, obs []float64) (float64, error) {
		return m.freshRollout(_Ctype_int(mode), rng, W, h, t, delta, obs)
	}
}

// run returns the return's bits and, for a perturbed case, those of s_t.
func (c rolloutCase) run(t testing.TB, f rolloutFunc) []uint64 {
	m, err := Open(c.name)
	if err != nil {
		t.Fatal(err)
	}
	W := randW(m, c.wScale, c.seed)
	var delta, obs []float64
	if c.pert {
		delta = make([]float64, m.ActDim())
		for i := range delta {
			delta[i] = 0.2
		}
		obs = make([]float64, m.ObsDim())
	}
	r, err := f(m, rand.New(rand.NewPCG(c.seed, 1)), W, c.h, c.t, delta, obs)
	if err != nil {
		t.Fatalf("%+v: %v", c, err)
	}
	out := []uint64{math.Float64bits(r)}
	for _, x := range obs {
		out = append(out, math.Float64bits(x))
	}
	return out
}

func runAll(t testing.TB) [][]uint64 { return runAllWith(t, pooled) }

func runAllWith(t testing.TB, f rolloutFunc) [][]uint64 {
	cs := rolloutCases()
	out := make([][]uint64, len(cs))
	for i, c := range cs {
		out[i] = c.run(t, f)
	}
	return out
}

func equalBits(a, b [][]uint64) bool {
	return slices.EqualFunc(a, b, func(x, y []uint64) bool { return slices.Equal(x, y) })
}

// TestRolloutRepeatable: the same stream gives bit-identical rollouts, run
// after run, on pooled mjData (dirty from other episodes) or a fresh one,
// and the fast reset equals mj_resetData: also from a buffer poisoned with
// 0xFF bytes (NaN) or 0x3F bytes (finite garbage), so no value left in the
// buffer outside what the fast reset sets is ever read.
func TestRolloutRepeatable(t *testing.T) {
	first := runAll(t)
	if !equalBits(first, runAll(t)) {
		t.Fatal("second pass differs")
	}
	for what, f := range map[string]rolloutFunc{
		"fresh mjData, mj_resetData":       fresh(resetFull),
		"fresh mjData, fast reset":         fresh(resetFast),
		"NaN-poisoned mjData, fast reset":  fresh(resetPoison | 0xFF<<8),
		"0x3F-poisoned mjData, fast reset": fresh(resetPoison | 0x3F<<8),
	} {
		if !equalBits(first, runAllWith(t, f)) {
			t.Errorf("%s differs from pooled rollouts", what)
		}
	}
}

// TestRolloutConcurrent: 8 goroutines running all cases at once (sharing
// the models and the mjData free list) reproduce the serial bits.
func TestRolloutConcurrent(t *testing.T) {
	want := runAll(t)
	const G = 8
	got := make([][][]uint64, G)
	var wg sync.WaitGroup
	for g := 0; g < G; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := rolloutCases()
			res := make([][]uint64, len(cs))
			// Each goroutine walks the cases from a different start.
			for k := range cs {
				i := (k + g*7) % len(cs)
				res[i] = cs[i].run(t, pooled)
			}
			got[g] = res
		}()
	}
	wg.Wait()
	for g := range got {
		if !equalBits(got[g], want) {
			t.Fatalf("goroutine %d differs from the serial run", g)
		}
	}
}

func formatBits(rows [][]uint64) []byte {
	var b bytes.Buffer
	v, s, _ := Version()
	fmt.Fprintf(&b, "# envs/mujoco rollouts: MuJoCo %d (%s), %s\n", v, s, runtime.GOARCH)
	for i, c := range rolloutCases() {
		fmt.Fprintf(&b, "%s h=%d t=%d seed=%d w=%g", c.name, c.h, c.t, c.seed, c.wScale)
		for _, x := range rows[i] {
			fmt.Fprintf(&b, " %016x", x)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// TestRolloutGolden: the rollouts match testdata/rollouts_$GOARCH.golden
// (regenerate with -update after a deliberate change to the models or the
// episode code).
func TestRolloutGolden(t *testing.T) {
	path := filepath.Join("testdata", "rollouts_"+runtime.GOARCH+".golden")
	got := formatBits(runAll(t))
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("no golden file for %s (create it with -update)", runtime.GOARCH)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatal("golden file length differs")
	}
}

const helperEnv = "ZOREPRO_MUJOCO_HELPER"

// TestHelperProcess prints the rollout bits when run as a child of
// TestRolloutAcrossProcesses; otherwise it does nothing.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process only")
	}
	os.Stdout.Write(formatBits(runAll(t)))
}

// TestRolloutAcrossProcesses: two fresh processes (the test binary run
// again) produce this process's bits.
func TestRolloutAcrossProcesses(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		t.Skip("in the helper")
	}
	want := formatBits(runAll(t))
	for k := 0; k < 2; k++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child %d: %v", k, err)
		}
		// The test binary appends "PASS\n" after the helper's output.
		if !bytes.HasPrefix(out, want) {
			t.Fatalf("child %d output differs:\n%s", k, out)
		}
	}
}

// TestResetDistribution: the state after Sim.Reset is qpos0 + dqpos,
// 0 + dqvel with Spec.DrawReset's draws, and over many resets each
// coordinate has the mean and std of U(−0.1, 0.1) (or 0.1·N(0,1) for
// HalfCheetah's velocities) within 5 standard errors.
func TestResetDistribution(t *testing.T) {
	const N = 20000
	for _, name := range ownNames() {
		m := open(t, name)
		s := newSim(t, m)
		rng := rand.New(rand.NewPCG(21, 22))
		ref := rand.New(rand.NewPCG(21, 22))
		dq, dv := make([]float64, m.spec.NQ), make([]float64, m.spec.NV)
		samples := make([][]float64, m.spec.NQ+m.spec.NV)
		q0 := m.QPos0()
		for k := 0; k < N; k++ {
			if err := s.Reset(rng); err != nil {
				t.Fatal(err)
			}
			m.spec.DrawReset(ref, dq, dv)
			qpos, qvel := s.QPos(), s.QVel()
			for i := range dq {
				if qpos[i] != q0[i]+dq[i] {
					t.Fatalf("%s reset %d: qpos[%d] = %v, want %v", name, k, i, qpos[i], q0[i]+dq[i])
				}
			}
			for i := range dv {
				if qvel[i] != 0+dv[i] {
					t.Fatalf("%s reset %d: qvel[%d] = %v, want %v", name, k, i, qvel[i], dv[i])
				}
			}
			for i, x := range append(qpos, qvel...) {
				if i < len(q0) {
					x -= q0[i]
				}
				samples[i] = append(samples[i], x)
			}
		}
		for i, xs := range samples {
			checkNoise(t, name, i, xs, i >= m.spec.NQ && m.spec.GaussVel)
		}
	}
}

// TestSwimmerGait: a hand-made travelling wave, a = (sin ωk, sin(ωk − π/2))
// with a period of 60 steps (2.4 s), the rear joint lagging the front one,
// swims forward (+x) over 1000 steps; the mirrored wave (rear leading)
// swims backward. The return telescopes to the displacement minus the
// control cost.
func TestSwimmerGait(t *testing.T) {
	m := open(t, Swimmer)
	swim := func(phase float64) (dx, ret, cost float64) {
		s := newSim(t, m)
		x0 := s.QPos()[0]
		for k := 0; k < 1000; k++ {
			w := 2 * math.Pi * float64(k) / 60
			a := []float64{math.Sin(w), math.Sin(w + phase)}
			r, err := s.Step(a)
			if err != nil {
				t.Fatal(err)
			}
			ret += r
			cost += 1e-4 * (a[0]*a[0] + a[1]*a[1])
		}
		return s.QPos()[0] - x0, ret, cost
	}
	dx, ret, cost := swim(-math.Pi / 2)
	t.Logf("forward wave: Δx = %.3f, return %.2f", dx, ret)
	if dx < 1 {
		t.Errorf("forward wave: Δx = %v, want > 1", dx)
	}
	if want := dx/m.Dt() - cost; math.Abs(ret-want) > 1e-6*math.Abs(want) {
		t.Errorf("return %v, want Δx/dt − Σc‖a‖² = %v", ret, want)
	}
	if back, _, _ := swim(math.Pi / 2); back > -1 {
		t.Errorf("mirrored wave: Δx = %v, want < −1", back)
	}
}

// TestCheetahUpright: with zero action the cheetah settles on its legs and
// stays upright for 1000 steps, from the initial state and from random
// resets: torso pitch |rooty| < 0.5 rad and torso height 0.7 + rootz > 0.4.
func TestCheetahUpright(t *testing.T) {
	m := open(t, HalfCheetah)
	zero := make([]float64, 6)
	for k := 0; k < 5; k++ {
		s := newSim(t, m)
		if k > 0 {
			if err := s.Reset(rand.New(rand.NewPCG(uint64(k), 31))); err != nil {
				t.Fatal(err)
			}
		}
		lo, hi := math.Inf(1), 0.0
		for i := 0; i < 1000; i++ {
			if _, err := s.Step(zero); err != nil {
				t.Fatal(err)
			}
			q := s.QPos()
			z := 0.7 + q[1]
			lo, hi = min(lo, z), max(hi, math.Abs(q[2]))
			if math.Abs(q[2]) > 0.5 || z < 0.4 {
				t.Fatalf("reset %d, step %d: pitch %v, height %v", k, i, q[2], z)
			}
		}
		t.Logf("reset %d: min height %.3f, max |pitch| %.3f", k, lo, hi)
	}
}

// TestUnstable: instability is an error naming the environment, the step
// and the warning, never a silent reset; a MuJoCo error (mju_error) is an
// ErrSimulation error and the process goes on; nothing writes
// MUJOCO_LOG.TXT.
func TestUnstable(t *testing.T) {
	for _, name := range ownNames() {
		m := open(t, name)
		s := newSim(t, m)
		qvel := make([]float64, m.spec.NV)
		qvel[2] = 1e9 // below mjMAXVAL, so accepted, but the dynamics blow up
		if err := s.SetState(m.QPos0(), qvel); err != nil {
			t.Fatal(err)
		}
		_, err := s.Step(make([]float64, m.ActDim()))
		if !errors.Is(err, ErrUnstable) || !strings.Contains(err.Error(), name+" at step 0") || !strings.Contains(err.Error(), "mjWARN_BADQACC") {
			t.Errorf("%s: huge velocity: err = %v", name, err)
		}
		W := randW(m, 0.1, 3)
		W[1] = math.NaN()
		_, err = m.Rollout(rand.New(rand.NewPCG(1, 1)), W, 10, -1, nil, nil)
		if !errors.Is(err, ErrUnstable) || !strings.Contains(err.Error(), name+" at step 0 (mj_step 1 of") || !strings.Contains(err.Error(), "mjWARN_BADCTRL") {
			t.Errorf("%s: NaN policy: err = %v", name, err)
		}
		if err := s.SetState(m.QPos0(), slices.Repeat([]float64{math.NaN()}, m.spec.NV)); !errors.Is(err, ErrUnstable) || !strings.Contains(err.Error(), "at reset") {
			t.Errorf("%s: NaN state: err = %v", name, err)
		}
		// A huge but finite policy saturates the controls: the episode
		// completes with a return of −Inf (the Episodic contract).
		W[1] = 1e300
		if r, err := m.Rollout(rand.New(rand.NewPCG(1, 1)), W, 10, -1, nil, nil); err != nil || !math.IsInf(r, -1) {
			t.Errorf("%s: huge policy: %v, %v", name, r, err)
		}
		// The model still works after the failures.
		if _, err := m.Rollout(rand.New(rand.NewPCG(1, 1)), randW(m, 0.1, 3), 10, -1, nil, nil); err != nil {
			t.Errorf("%s: after failures: %v", name, err)
		}
	}
	// mju_error: a private copy of the cheetah with an invalid integrator.
	bad, err := compile(specs[1])
	if err != nil {
		t.Fatal(err)
	}
	bad.m.opt.integrator = 99
	_, err = bad.Rollout(rand.New(rand.NewPCG(1, 1)), make([]float64, 102), 5, -1, nil, nil)
	if !errors.Is(err, ErrSimulation) || !strings.Contains(err.Error(), "halfcheetah at step 0 (mj_step 1 of 5): Invalid integrator") {
		t.Errorf("invalid integrator: err = %v", err)
	}
	if _, err := os.Stat("MUJOCO_LOG.TXT"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("MUJOCO_LOG.TXT in the working directory (%v)", err)
	}
}

// TestModelXMLErrors: a model that does not compile is ErrModel with
// MuJoCo's message.
func TestModelXMLErrors(t *testing.T) {
	spec := *specs[0]
	spec.XML = bytes.Replace(spec.XML, []byte(`joint="rot3"`), []byte(`joint="nope"`), 1)
	if _, err := compile(&spec); !errors.Is(err, ErrModel) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("err = %v", err)
	}
	spec = *specs[0]
	spec.NQ = 4
	if _, err := compile(&spec); !errors.Is(err, ErrModel) {
		t.Fatalf("dimension mismatch: err = %v", err)
	}
}

// TestInstance: the generate artifact round-trips, is deterministic and
// independent of the seed, and Load rejects a foreign model or version.
func TestInstance(t *testing.T) {
	gen := func(vals map[string]any, seed uint64) []byte {
		p := task.NewParams("dag.yaml", "generate/mujoco", vals)
		g := Env{}.PlanGenerate(p)
		if err := p.Err(); err != nil {
			t.Fatal(err)
		}
		b, err := g(stream.New(seed, "generate/mujoco", nil))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := gen(map[string]any{"name": HalfCheetah, "horizon": 7}, 1)
	if !bytes.Equal(b, gen(map[string]any{"name": HalfCheetah, "horizon": 7}, 2)) {
		t.Fatal("artifact depends on the seed")
	}
	inst, err := Env{}.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	in := inst
	spec, _ := Lookup(HalfCheetah)
	if in.Name != HalfCheetah || in.H != 7 || in.Horizon() != 7 || in.Episodes != DefaultEpisodes || in.ObsDim() != 17 || in.ActDim() != 6 ||
		in.ModelSHA256 != spec.SHA256() || in.MuJoCo != WantVersion || in.Model() != open(t, HalfCheetah) {
		t.Fatalf("instance %+v", in)
	}
	direct, err := NewInstance(HalfCheetah, 7, DefaultEpisodes)
	if err != nil {
		t.Fatal(err)
	}
	if db, _ := direct.MarshalBinary(); !bytes.Equal(db, b) {
		t.Fatal("NewInstance encodes differently")
	}
	e := gen(map[string]any{"name": Swimmer, "horizon": 1000, "episodes": 3}, 1)
	if inst, err := (Env{}).Load(e); err != nil || inst.Episodes != 3 || inst.H != 1000 {
		t.Fatalf("explicit episodes: %+v, %v", inst, err)
	}

	foreign := *in
	foreign.ModelSHA256[0] ^= 1
	fb, _ := foreign.MarshalBinary()
	if _, err := (Env{}).Load(fb); !errors.Is(err, ErrModel) {
		t.Errorf("foreign model: err = %v", err)
	}
	old := *in
	old.MuJoCo = 150
	ob, _ := old.MarshalBinary()
	if _, err := (Env{}).Load(ob); !errors.Is(err, ErrVersion) {
		t.Errorf("MuJoCo 1.50 instance: err = %v", err)
	}
	if _, err := NewInstance(Swimmer, 0, 100); !errors.Is(err, ErrFormat) {
		t.Errorf("horizon 0: err = %v", err)
	}
}

// TestEvaluate: the mean return of the instance's episodes, each reset from
// its own PCG seeded by two successive draws of rng, summed in index order.
func TestEvaluate(t *testing.T) {
	in, err := NewInstance(Swimmer, 15, 9)
	if err != nil {
		t.Fatal(err)
	}
	W := randW(in.Model(), 0.3, 4)
	got, err := Env{}.Evaluate(in, W, trajectory.Header{}, rand.New(rand.NewPCG(41, 42)))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(41, 42))
	seeds := make([]uint64, 18)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	var sum float64
	for i := 0; i < 9; i++ {
		r, err := in.Rollout(rand.New(rand.NewPCG(seeds[2*i], seeds[2*i+1])), W, -1, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum += r
	}
	if want := sum / 9; len(got) != 1 || got[0] != want {
		t.Fatalf("Evaluate = %v, want [%v]", got, want)
	}
	again, _ := Env{}.Evaluate(in, W, trajectory.Header{}, rand.New(rand.NewPCG(41, 42)))
	if !slices.Equal(again, got) {
		t.Fatal("Evaluate is not repeatable")
	}
	if _, err := (Env{}).Evaluate(in, W[:5], trajectory.Header{}, rng); !errors.Is(err, ErrSnapshot) {
		t.Fatalf("short snapshot: err = %v", err)
	}
}

// TestRolloutAllocs: a rollout allocates nothing on the Go heap (the reset
// noise, the status and the pooled mjData are reused or on the stack).
func TestRolloutAllocs(t *testing.T) {
	m := open(t, HalfCheetah)
	W := randW(m, 0.1, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	delta, obs := make([]float64, 6), make([]float64, 17)
	if n := testing.AllocsPerRun(50, func() {
		if _, err := m.Rollout(rng, W, 3, 1, delta, obs); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per rollout", n)
	}
}

// TestEpisodeSteps: Episode with one perturbed step is Rollout, bit for
// bit; its rewards add up (in step order) to the return; every step
// perturbed is the episode stepped by hand with each step's perturbation,
// each observation before it recorded (ExAct's all-steps variant).
func TestEpisodeSteps(t *testing.T) {
	for _, name := range ownNames() {
		m := open(t, name)
		W := randW(m, 0.1, 1)
		p, n, h := m.ActDim(), m.ObsDim(), 12
		delta := make([]float64, p)
		for i := range delta {
			delta[i] = 0.2 * float64(i+1)
		}
		obs1, obs2, rew := make([]float64, n), make([]float64, n), make([]float64, h)
		r1, err := m.Rollout(rand.New(rand.NewPCG(3, 4)), W, h, 5, delta, obs1)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := m.Episode(rand.New(rand.NewPCG(3, 4)), W, h, []int{5}, delta, obs2, rew)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, r := range rew {
			sum += r
		}
		if r1 != r2 || sum != r1 || !slices.Equal(obs1, obs2) {
			t.Errorf("%s: Rollout %v, Episode %v, rewards sum to %v", name, r1, r2, sum)
		}

		steps, all, allObs := make([]int, h), make([]float64, h*p), make([]float64, h*n)
		for k := range steps {
			steps[k] = k
			for i := 0; i < p; i++ {
				all[k*p+i] = 0.05 * float64((k+i)%5-2)
			}
		}
		got, err := m.Episode(rand.New(rand.NewPCG(3, 4)), W, h, steps, all, allObs, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := newSim(t, m)
		if err := s.Reset(rand.New(rand.NewPCG(3, 4))); err != nil {
			t.Fatal(err)
		}
		var want float64
		for k := 0; k < h; k++ {
			o := s.Obs()
			if !slices.Equal(o, allObs[k*n:(k+1)*n]) {
				t.Fatalf("%s: step %d observation %v, recorded %v", name, k, o, allObs[k*n:(k+1)*n])
			}
			a := make([]float64, p)
			for i := range a {
				var acc float64
				for j := 0; j < n; j++ {
					acc += W[i*n+j] * o[j]
				}
				a[i] = acc + all[k*p+i]
			}
			r, err := s.Step(a)
			if err != nil {
				t.Fatal(err)
			}
			want += r
		}
		if got != want {
			t.Errorf("%s: every step perturbed: Episode %v, stepped %v", name, got, want)
		}
	}
}

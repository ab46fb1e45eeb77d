//go:build mujoco

package mujoco

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The reward and observation terms of gym's other -v2 bodies (Spec's
// fields after GaussVel), on a test model (testdata/terms.xml): what the C
// loop computes is, bit for bit, the documented formula evaluated in Go
// from the simulation's arrays, step by step.

var termSpecs struct {
	once  sync.Once
	specs []*Spec
}

// termsSpecs registers the test Specs once: "terms-humanoid" (Humanoid-v2's
// terms: every observation part, mass-centre progress scaled and divided by
// the timestep, capped contact cost, alive bonus last), "terms-ant"
// (Ant-v2's: a body's x, clipped contact forces in the observation and the
// cost, Gaussian velocity reset), "terms-hopper" (Hopper-v2's: clipped
// velocities, alive bonus first) and "terms-nosensor" (the model without
// its accelerometer: MuJoCo 2.x then leaves cfrc_ext at zero).
func termsSpecs(t testing.TB) []*Spec {
	termSpecs.once.Do(func() {
		xml, err := os.ReadFile("testdata/terms.xml")
		if err != nil {
			t.Fatal(err)
		}
		nosensor := []byte(strings.Replace(string(xml), `<accelerometer site="imu"/>`, "", 1))
		base := Spec{File: "terms.xml", XML: xml, FrameSkip: 3, NQ: 9, NV: 8, NU: 2, NBody: 4}
		h, a, hop, ns := base, base, base, base
		h.Name, h.CtrlCost, h.ObsSkip, h.QVelClip = "terms-humanoid", 0.1, 2, 0.5
		h.ObsExtra = ObsCInert | ObsCVel | ObsQfrcActuator | ObsCfrcExt
		h.Progress, h.ProgressScale, h.ProgressDiv = ProgressMassCenter, 0.25, DivTimestep
		h.ContactCost, h.ContactMax, h.Alive, h.ResetPos, h.ResetVel = 5e-2, 0.7, 5, 0.02, 0.03
		a.Name, a.CtrlCost, a.ObsSkip, a.ObsExtra, a.CfrcExtClip = "terms-ant", 0.5, 2, ObsCfrcExt, 1
		a.Progress, a.ProgressBody, a.ContactCost, a.Alive, a.GaussVel = ProgressBodyX, "torso", 5e-4, 1, true
		hop.Name, hop.CtrlCost, hop.ObsSkip, hop.QVelClip, hop.Alive, hop.AliveFirst = "terms-hopper", 1e-3, 1, 0.5, 1, true
		hop.ResetPos, hop.ResetVel = 0.005, 0.005
		ns.Name, ns.XML, ns.ObsSkip, ns.ObsExtra = "terms-nosensor", nosensor, 2, ObsCfrcExt
		for _, s := range []Spec{h, a, hop, ns} {
			s := s
			Register(&s)
			termSpecs.specs = append(termSpecs.specs, &s)
		}
	})
	return termSpecs.specs
}

// goObs composes the observation of spec from the simulation's arrays.
func goObs(s *Sim, spec *Spec) []float64 {
	clip := func(v, c float64) float64 {
		if c > 0 {
			return math.Max(-c, math.Min(c, v))
		}
		return v
	}
	var o []float64
	o = append(o, s.QPos()[spec.ObsSkip:]...)
	for _, v := range s.QVel() {
		o = append(o, clip(v, spec.QVelClip))
	}
	if spec.ObsExtra&ObsCInert != 0 {
		o = append(o, s.array(arrCInert)...)
	}
	if spec.ObsExtra&ObsCVel != 0 {
		o = append(o, s.array(arrCVel)...)
	}
	if spec.ObsExtra&ObsQfrcActuator != 0 {
		o = append(o, s.array(arrQfrcActuator)...)
	}
	if spec.ObsExtra&ObsCfrcExt != 0 {
		for _, v := range s.array(arrCfrcExt) {
			o = append(o, clip(v, spec.CfrcExtClip))
		}
	}
	return o
}

// goProgress is the reward's x of spec, from the simulation's arrays.
func goProgress(s *Sim, spec *Spec) float64 {
	switch spec.Progress {
	case ProgressBodyX:
		return s.array(arrXPos)[3*1] // the torso is body 1
	case ProgressMassCenter:
		mass, xi := s.array(arrBodyMass), s.array(arrXIPos)
		var mx, m float64
		for b := range mass {
			mx += mass[b] * xi[3*b]
			m += mass[b]
		}
		return mx / m
	}
	return s.QPos()[0]
}

// goReward is the step's reward of spec, in the C loop's order.
func goReward(s *Sim, spec *Spec, xb, xa float64, a []float64) float64 {
	var cc float64
	for _, v := range a {
		cc += v * v
	}
	fwd := (xa - xb) / s.m.Dt()
	if spec.ProgressScale != 0 {
		div := s.m.Dt()
		if spec.ProgressDiv == DivTimestep {
			div = s.m.Timestep()
		}
		fwd = (spec.ProgressScale * (xa - xb)) / div
	}
	if spec.AliveFirst {
		return (fwd + spec.Alive) - spec.CtrlCost*cc
	}
	r := fwd - spec.CtrlCost*cc
	if spec.ContactCost > 0 {
		var c2 float64
		for _, f := range s.array(arrCfrcExt) {
			if spec.CfrcExtClip > 0 {
				f = math.Max(-spec.CfrcExtClip, math.Min(spec.CfrcExtClip, f))
			}
			c2 += f * f
		}
		c := spec.ContactCost * c2
		if spec.ContactMax > 0 && c > spec.ContactMax {
			c = spec.ContactMax
		}
		r -= c
	}
	if spec.Alive != 0 {
		r += spec.Alive
	}
	return r
}

func TestBodyTerms(t *testing.T) {
	for _, spec := range termsSpecs(t) {
		t.Run(spec.Name, func(t *testing.T) {
			m := open(t, spec.Name)
			if m.ObsDim() != len(goObs(newSim(t, m), spec)) {
				t.Fatalf("ObsDim %d", m.ObsDim())
			}
			const h = 40
			W := randW(m, 0.3, 5)
			p, n := m.ActDim(), m.ObsDim()
			steps, delta := []int{3, 17}, make([]float64, 2*p)
			for i := range delta {
				delta[i] = 0.4 * float64(i%3-1)
			}
			obs, rewards := make([]float64, 2*n), make([]float64, h)
			ret, err := m.Episode(rand.New(rand.NewPCG(11, 12)), W, h, steps, delta, obs, rewards)
			if err != nil {
				t.Fatal(err)
			}
			s := newSim(t, m)
			if err := s.Reset(rand.New(rand.NewPCG(11, 12))); err != nil {
				t.Fatal(err)
			}
			var sum float64
			contact := false
			for k := 0; k < h; k++ {
				o := s.Obs()
				if g := goObs(s, spec); !slices.Equal(o, g) {
					t.Fatalf("step %d: observation %v, from the arrays %v", k, o, g)
				}
				a := make([]float64, p)
				for i := range a {
					var acc float64
					for j := 0; j < n; j++ {
						acc += W[i*n+j] * o[j]
					}
					a[i] = acc
				}
				if j := slices.Index(steps, k); j >= 0 {
					for i := range a {
						a[i] = a[i] + delta[j*p+i]
					}
					if !slices.Equal(obs[j*n:(j+1)*n], o) {
						t.Fatalf("step %d: recorded observation differs", k)
					}
				}
				xb := goProgress(s, spec)
				r, err := s.Step(a)
				if err != nil {
					t.Fatal(err)
				}
				if want := goReward(s, spec, xb, goProgress(s, spec), a); r != want || rewards[k] != r {
					t.Fatalf("step %d: reward %v (episode %v), the formula %v", k, r, rewards[k], want)
				}
				sum += r
				for _, f := range s.array(arrCfrcExt) {
					contact = contact || f != 0
				}
			}
			if sum != ret {
				t.Errorf("return %v, stepped %v", ret, sum)
			}
			if want := spec.Name != "terms-nosensor"; contact != want {
				t.Errorf("non-zero contact forces: %v, want %v (MuJoCo 2.x computes cfrc_ext only for an acceleration sensor)", contact, want)
			}
		})
	}
}

//go:build mujoco

package mujoco_test

import (
	"encoding/xml"
	"fmt"
	"math"
	"strings"
	"testing"

	"zorepro/envs/mujoco"
	"zorepro/envs/mujoco/locomotion"
)

// The bodies of package locomotion weigh what MuJoCo 1.50 computed for
// gym's -v2 assets: each capsule as a cylinder of its radius and length
// L + r (L the distance between its fromto ends), each sphere exactly,
// at its density (gym's: 1000, Ant's 5). The expected masses are computed
// here from the capsules' own geometry in the model file, independently
// of the "_mass" cylinders the compiler weighs. Hopper-v2's come to
// 3.53429, 3.92699, 2.71434 and 5.08938 (torso, thigh, leg, foot).
func TestLocomotionMassesAre150s(t *testing.T) {
	for _, c := range []struct {
		spec    *mujoco.Spec
		density float64
	}{{locomotion.HopperSpec, 1000}, {locomotion.Walker2dSpec, 1000}, {locomotion.AntSpec, 5}, {locomotion.HumanoidSpec, 1000}} {
		want := masses150(t, c.spec.XML, c.density)
		m, err := mujoco.Open(c.spec.Name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := m.NewSim()
		if err != nil {
			t.Fatal(err)
		}
		got := s.SimArray(mujoco.ArrBodyMass)
		s.Close()
		if len(got) != len(want) {
			t.Fatalf("%s: %d bodies, the file has %d", c.spec.Name, len(got), len(want))
		}
		for b := range got {
			if math.Abs(got[b]-want[b]) > 1e-9*math.Max(1, want[b]) {
				t.Errorf("%s body %d: mass %.10g, MuJoCo 1.50's %.10g", c.spec.Name, b, got[b], want[b])
			}
		}
	}
	hopper := masses150(t, locomotion.HopperSpec.XML, 1000)
	for i, w := range []float64{3.53429174, 3.92699082, 2.71433605, 5.0893801} {
		if math.Abs(hopper[i+1]-w) > 1e-8 {
			t.Errorf("Hopper body %d: %.9g, want %v", i+1, hopper[i+1], w)
		}
	}
}

// A one-capsule body has the inertia of 1.50's cylinder: Hopper's torso
// (a vertical capsule, r = 0.05, L = 0.4) has m·r²/2 about its axis and
// m·(3r² + (L+r)²)/12 across. cinert holds it about the kinematic tree's
// centre of mass c, in the world frame (Ixx, Iyy, Izz, Ixy, Ixz, Iyz, then
// m·d and m, d the body's centre of mass from c): the parallel-axis terms
// m·(‖d‖²·1 − d·dᵀ) are added to the expected values.
func TestLocomotionInertiaIs150s(t *testing.T) {
	m, err := mujoco.Open("hopper")
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.NewSim()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ci := s.SimArray(mujoco.ArrCInert)[10:20] // body 1, the torso
	r, L := 0.05, 0.4
	mass := 1000 * math.Pi * r * r * (L + r)
	across, along := mass*(3*r*r+(L+r)*(L+r))/12, mass*r*r/2
	dx, dy, dz := ci[6]/ci[9], ci[7]/ci[9], ci[8]/ci[9]
	for i, w := range []float64{
		across + mass*(dy*dy+dz*dz), across + mass*(dx*dx+dz*dz), along + mass*(dx*dx+dy*dy),
		-mass * dx * dy, -mass * dx * dz, -mass * dy * dz,
	} {
		if math.Abs(ci[i]-w) > 1e-9 {
			t.Errorf("torso cinert[%d] = %.12g, want %.12g", i, ci[i], w)
		}
	}
	if math.Abs(ci[9]-mass) > 1e-9 {
		t.Errorf("torso mass in cinert %v, want %v", ci[9], mass)
	}
}

// masses150 parses a model and returns MuJoCo 1.50's mass of every body,
// the world first, in the compiler's (depth-first) order, from its
// capsules and spheres at the given density.
func masses150(t *testing.T, data []byte, density float64) []float64 {
	t.Helper()
	type geom struct {
		Name   string `xml:"name,attr"`
		Type   string `xml:"type,attr"`
		Size   string `xml:"size,attr"`
		FromTo string `xml:"fromto,attr"`
	}
	type body struct {
		Geoms  []geom `xml:"geom"`
		Bodies []body `xml:"body"`
	}
	var doc struct {
		World body `xml:"worldbody"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	nums := func(s string) []float64 {
		var out []float64
		for _, f := range strings.Fields(s) {
			var v float64
			if _, err := fmt.Sscan(f, &v); err != nil {
				t.Fatalf("%q: %v", s, err)
			}
			out = append(out, v)
		}
		return out
	}
	var out []float64
	var walk func(b body, world bool)
	walk = func(b body, world bool) {
		var m float64
		for _, g := range b.Geoms {
			if world {
				continue
			}
			switch g.Type {
			case "capsule":
				r, a := nums(g.Size)[0], nums(g.FromTo)
				L := math.Sqrt((a[3]-a[0])*(a[3]-a[0]) + (a[4]-a[1])*(a[4]-a[1]) + (a[5]-a[2])*(a[5]-a[2]))
				m += density * math.Pi * r * r * (L + r)
			case "sphere", "":
				r := nums(g.Size)[0]
				m += density * 4.0 / 3 * math.Pi * r * r * r
			}
		}
		out = append(out, m)
		for _, c := range b.Bodies {
			walk(c, false)
		}
	}
	walk(doc.World, true)
	return out
}

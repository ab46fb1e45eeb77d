package mujoco

import (
	"crypto/sha256"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Environment names, as dag.yaml spells them.
const (
	Swimmer     = "swimmer"
	HalfCheetah = "halfcheetah"
)

// WantVersion is the MuJoCo version (mj_version()) the project is built
// against: Debian bookworm's libmujoco 2.2.2.
const WantVersion = 222

// ResetScale is the half-width of the uniform reset noise and the standard
// deviation of HalfCheetah's Gaussian velocity noise (gym's 0.1).
const ResetScale = 0.1

//go:embed assets/swimmer.xml
var swimmerXML []byte

//go:embed assets/half_cheetah.xml
var halfCheetahXML []byte

// Spec is one environment's definition on top of its MJCF model (spec
// §4.1). Specs are package-level values; treat them as read-only.
type Spec struct {
	// Name is the environment's name (Swimmer or HalfCheetah).
	Name string
	// File is the model's file name (in assets/ and in MuJoCo's virtual
	// file system).
	File string
	// XML is the embedded MJCF model.
	XML []byte
	// FrameSkip is the number of mj_step calls per environment step.
	FrameSkip int
	// CtrlCost is c in r = (x_after − x_before)/dt − c·‖a‖².
	CtrlCost float64
	// ObsSkip is the first observed qpos index: s = qpos[ObsSkip:] ‖ qvel.
	ObsSkip int
	// NQ, NV and NU are the model's position, velocity and actuator
	// dimensions, checked when the model is compiled.
	NQ, NV, NU int
	// GaussVel selects the velocity reset noise: ResetScale·N(0, 1)
	// (HalfCheetah) instead of U(−ResetScale, ResetScale) (Swimmer).
	GaussVel bool
}

var specs = []*Spec{
	{
		Name: Swimmer, File: "swimmer.xml", XML: swimmerXML,
		FrameSkip: 4, CtrlCost: 1e-4, ObsSkip: 2, NQ: 5, NV: 5, NU: 2,
	},
	{
		Name: HalfCheetah, File: "half_cheetah.xml", XML: halfCheetahXML,
		FrameSkip: 5, CtrlCost: 0.1, ObsSkip: 1, NQ: 9, NV: 9, NU: 6, GaussVel: true,
	},
}

// Names returns the environment names, sorted.
func Names() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	slices.Sort(out)
	return out
}

// Lookup returns the Spec of a named environment, or an ErrUnknownEnv
// error.
func Lookup(name string) (*Spec, error) {
	for _, s := range specs {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w: %q (want one of %v)", ErrUnknownEnv, name, Names())
}

// ObsDim returns n = NQ − ObsSkip + NV (8 for Swimmer, 17 for HalfCheetah).
func (s *Spec) ObsDim() int { return s.NQ - s.ObsSkip + s.NV }

// ActDim returns p = NU (2 for Swimmer, 6 for HalfCheetah).
func (s *Spec) ActDim() int { return s.NU }

// SHA256 returns the SHA-256 of the embedded model XML.
func (s *Spec) SHA256() [32]byte { return sha256.Sum256(s.XML) }

// DrawReset fills the reset noise of one episode from rng (len(dqpos) = NQ,
// len(dqvel) = NV), in this order:
//
//	dqpos[i] = −0.1 + 0.2·u_i,  u_i = rng.Float64(),  i = 0..NQ−1
//	dqvel[i] = −0.1 + 0.2·u_i,  u_i = rng.Float64(),  i = 0..NV−1   (Swimmer)
//	dqvel[i] = 0.1·z_i,         z_i = rng.NormFloat64(), i = 0..NV−1 (HalfCheetah)
//
// which is numpy's uniform(low, high) = low + (high − low)·u and
// randn()·0.1 as gym draws them (all positions first, then all
// velocities). Each product is rounded before the sum (no fused
// multiply-add). The episode then starts from qpos = qpos0 + dqpos,
// qvel = 0 + dqvel. Nothing else in an episode is random. It panics on
// wrong lengths.
func (s *Spec) DrawReset(rng *rand.Rand, dqpos, dqvel []float64) {
	if len(dqpos) != s.NQ || len(dqvel) != s.NV {
		panic(fmt.Sprintf("mujoco: DrawReset(%s): lengths %d, %d, want %d, %d", s.Name, len(dqpos), len(dqvel), s.NQ, s.NV))
	}
	const lo, width = -ResetScale, 2 * ResetScale
	for i := range dqpos {
		dqpos[i] = lo + float64(width*rng.Float64())
	}
	for i := range dqvel {
		if s.GaussVel {
			dqvel[i] = float64(ResetScale * rng.NormFloat64())
		} else {
			dqvel[i] = lo + float64(width*rng.Float64())
		}
	}
}

// checkRollout panics on a malformed Rollout call (programmer errors).
func (s *Spec) checkRollout(W []float64, h, t int, delta, obs []float64) {
	p, n := s.ActDim(), s.ObsDim()
	if len(W) != p*n {
		panic(fmt.Sprintf("mujoco: %s Rollout: len(W) = %d, want %d×%d", s.Name, len(W), p, n))
	}
	if h < 1 {
		panic(fmt.Sprintf("mujoco: %s Rollout: horizon %d", s.Name, h))
	}
	if delta != nil && (len(delta) != p || t < 0 || t >= h || (obs != nil && len(obs) != n)) {
		panic(fmt.Sprintf("mujoco: %s Rollout: perturbation at t = %d (H = %d), len(delta) = %d, len(obs) = %d", s.Name, t, h, len(delta), len(obs)))
	}
}

// Model is one environment's compiled MuJoCo model, shared read-only by
// all goroutines: Open returns the same *Model for a name every time. Each
// concurrent rollout takes its own mjData from the model's free list and
// returns it afterwards.
type Model struct {
	spec *Spec
	native
}

// Spec returns the environment definition.
func (m *Model) Spec() *Spec { return m.spec }

// ObsDim returns n.
func (m *Model) ObsDim() int { return m.spec.ObsDim() }

// ActDim returns p.
func (m *Model) ActDim() int { return m.spec.ActDim() }

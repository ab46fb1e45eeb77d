package mujoco

import (
	"crypto/sha256"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
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

	// The fields below describe bodies beyond the paper's two (gym's other
	// -v2 locomotion bodies, in packages of their own that Register their
	// Spec); their zero values are Swimmer's and HalfCheetah's semantics.

	// ResetPos and ResetVel, when positive, replace ResetScale for the
	// position and the velocity reset noise (Hopper-v2: 0.005).
	ResetPos, ResetVel float64
	// NBody is the model's number of bodies, the world included (checked
	// when the model is compiled); the observation parts of ObsExtra have
	// one block per body.
	NBody int
	// QVelClip > 0 clips the observed velocities to ±QVelClip (Hopper-v2,
	// Walker2d-v2: 10).
	QVelClip float64
	// ObsExtra appends parts to the observation qpos[ObsSkip:] ‖ qvel.
	ObsExtra ObsParts
	// CfrcExtClip > 0 clips the external contact forces (cfrc_ext) to
	// ±CfrcExtClip, in the observation and in the contact cost (Ant-v2: 1).
	CfrcExtClip float64
	// Progress is how the forward progress x of the reward is measured;
	// ProgressBody names the body of ProgressBodyX.
	Progress     Progress
	ProgressBody string
	// ProgressScale ≠ 0 makes the forward reward
	// (ProgressScale·(x_after − x_before))/ProgressDiv instead of
	// (x_after − x_before)/dt (Humanoid-v2: 0.25 and the model's timestep,
	// not dt: gym's own formula).
	ProgressScale float64
	ProgressDiv   ProgressDiv
	// ContactCost > 0 subtracts ContactCost·Σ cfrc_ext² (clipped as above),
	// capped at ContactMax when that is positive (Ant-v2: 5e-4, no cap;
	// Humanoid-v2: 5e-7, capped at 10).
	ContactCost, ContactMax float64
	// Alive is the bonus added every step (Hopper-v2, Walker2d-v2, Ant-v2:
	// 1; Humanoid-v2: 5). AliveFirst adds it to the forward reward before
	// the control cost is subtracted, as Hopper-v2 and Walker2d-v2 do; else
	// r = ((fwd − ctrl) − contact) + Alive.
	Alive      float64
	AliveFirst bool
}

// ObsParts are observation parts after qpos[ObsSkip:] ‖ qvel, appended in
// this order, each over every body (the world body included) as gym's
// Humanoid-v2 concatenates them.
type ObsParts uint8

// The observation parts.
const (
	ObsCInert       ObsParts = 1 << iota // cinert: 10 per body
	ObsCVel                              // cvel: 6 per body
	ObsQfrcActuator                      // qfrc_actuator: nv
	ObsCfrcExt                           // cfrc_ext: 6 per body (clipped by CfrcExtClip)
)

// Progress is how the reward's forward progress x is measured.
type Progress uint8

// The progress measures.
const (
	ProgressQPos0      Progress = iota // qpos[0]: Swimmer, HalfCheetah, Hopper, Walker2d
	ProgressBodyX                      // the x of body ProgressBody (Ant-v2's torso; gym's get_body_com)
	ProgressMassCenter                 // Σ body_mass·xipos_x / Σ body_mass (Humanoid-v2)
)

// ProgressDiv is the divisor of a scaled forward reward.
type ProgressDiv uint8

// The divisors.
const (
	DivDt       ProgressDiv = iota // timestep·FrameSkip
	DivTimestep                    // the model's timestep
)

// Register adds a body's Spec to the environments Lookup and Open know.
// Body packages call it from init; a second Spec of one name panics. The
// Spec must not change afterwards.
func Register(s *Spec) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, old := range specs {
		if old.Name == s.Name {
			panic(fmt.Sprintf("mujoco: Register: a second %q", s.Name))
		}
	}
	for _, old := range registry.extra {
		if old.Name == s.Name {
			panic(fmt.Sprintf("mujoco: Register: a second %q", s.Name))
		}
	}
	registry.extra = append(registry.extra, s)
}

// registry holds the Specs of Register, beside the package's own.
var registry struct {
	mu    sync.Mutex
	extra []*Spec
}

// all returns the package's Specs, then the registered ones.
func all() []*Spec {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return append(slices.Clone(specs), registry.extra...)
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
	var out []string
	for _, s := range all() {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

// Lookup returns the Spec of a named environment, or an ErrUnknownEnv
// error.
func Lookup(name string) (*Spec, error) {
	for _, s := range all() {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w: %q (want one of %v)", ErrUnknownEnv, name, Names())
}

// ObsDim returns n = NQ − ObsSkip + NV plus the ObsExtra parts (8 for
// Swimmer, 17 for HalfCheetah).
func (s *Spec) ObsDim() int {
	n := s.NQ - s.ObsSkip + s.NV
	if s.ObsExtra&ObsCInert != 0 {
		n += 10 * s.NBody
	}
	if s.ObsExtra&ObsCVel != 0 {
		n += 6 * s.NBody
	}
	if s.ObsExtra&ObsQfrcActuator != 0 {
		n += s.NV
	}
	if s.ObsExtra&ObsCfrcExt != 0 {
		n += 6 * s.NBody
	}
	return n
}

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
//
// With ResetPos or ResetVel set, that half-width (or standard deviation)
// replaces ResetScale (0.1), with the same arithmetic.
func (s *Spec) DrawReset(rng *rand.Rand, dqpos, dqvel []float64) {
	if len(dqpos) != s.NQ || len(dqvel) != s.NV {
		panic(fmt.Sprintf("mujoco: DrawReset(%s): lengths %d, %d, want %d, %d", s.Name, len(dqpos), len(dqvel), s.NQ, s.NV))
	}
	pos, vel := float64(ResetScale), float64(ResetScale)
	if s.ResetPos > 0 {
		pos = s.ResetPos
	}
	if s.ResetVel > 0 {
		vel = s.ResetVel
	}
	for i := range dqpos {
		dqpos[i] = -pos + float64(2*pos*rng.Float64())
	}
	for i := range dqvel {
		if s.GaussVel {
			dqvel[i] = float64(vel * rng.NormFloat64())
		} else {
			dqvel[i] = -vel + float64(2*vel*rng.Float64())
		}
	}
}

// episodeSteps is an episode's perturbed steps in the C loop's layout:
// steps strictly increasing, delta len(steps)·p values, obs nil or
// len(steps)·n, rewards nil or H.
type episodeSteps struct {
	steps      []int
	delta, obs []float64
	rewards    []float64
}

// onePerturbation is Rollout's perturbation: the step t with delta and obs,
// or none when delta is nil.
func onePerturbation(t int, delta, obs []float64) *episodeSteps {
	if delta == nil {
		return nil
	}
	return &episodeSteps{steps: []int{t}, delta: delta, obs: obs}
}

// checkEpisode panics on a malformed Episode call (programmer errors).
func (s *Spec) checkEpisode(W []float64, h int, steps []int, delta, obs, rewards []float64) {
	p, n := s.ActDim(), s.ObsDim()
	if len(W) != p*n || h < 1 || len(delta) != len(steps)*p || (obs != nil && len(obs) != len(steps)*n) || (rewards != nil && len(rewards) != h) {
		panic(fmt.Sprintf("mujoco: %s Episode: len(W) = %d, H = %d, %d steps, len(delta) = %d, len(obs) = %d, len(rewards) = %d", s.Name, len(W), h, len(steps), len(delta), len(obs), len(rewards)))
	}
	for j, t := range steps {
		if t < 0 || t >= h || (j > 0 && t <= steps[j-1]) {
			panic(fmt.Sprintf("mujoco: %s Episode: steps %v not strictly increasing in [0, %d)", s.Name, steps, h))
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

package locomotion

import (
	_ "embed"

	"zorepro/envs/mujoco"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

var (
	//go:embed hopper.xml
	hopperXML []byte
	//go:embed walker2d.xml
	walker2dXML []byte
	//go:embed ant.xml
	antXML []byte
	//go:embed humanoid.xml
	humanoidXML []byte
)

// The bodies' Specs (see the package documentation), registered with
// package mujoco at start-up. Treat them as read-only.
var (
	HopperSpec = &mujoco.Spec{
		Name: "hopper", File: "hopper.xml", XML: hopperXML,
		FrameSkip: 4, CtrlCost: 1e-3, ObsSkip: 1, NQ: 6, NV: 6, NU: 3, NBody: 5,
		ResetPos: 0.005, ResetVel: 0.005, QVelClip: 10, Alive: 1, AliveFirst: true,
	}
	Walker2dSpec = &mujoco.Spec{
		Name: "walker2d", File: "walker2d.xml", XML: walker2dXML,
		FrameSkip: 4, CtrlCost: 1e-3, ObsSkip: 1, NQ: 9, NV: 9, NU: 6, NBody: 8,
		ResetPos: 0.005, ResetVel: 0.005, QVelClip: 10, Alive: 1, AliveFirst: true,
	}
	AntSpec = &mujoco.Spec{
		Name: "ant", File: "ant.xml", XML: antXML,
		FrameSkip: 5, CtrlCost: 0.5, ObsSkip: 2, NQ: 15, NV: 14, NU: 8, NBody: 14, GaussVel: true,
		ObsExtra: mujoco.ObsCfrcExt, CfrcExtClip: 1,
		Progress: mujoco.ProgressBodyX, ProgressBody: "torso",
		ContactCost: 0.5 * 1e-3, Alive: 1,
	}
	HumanoidSpec = &mujoco.Spec{
		Name: "humanoid", File: "humanoid.xml", XML: humanoidXML,
		FrameSkip: 5, CtrlCost: 0.1, ObsSkip: 2, NQ: 24, NV: 23, NU: 17, NBody: 14,
		ResetPos: 0.01, ResetVel: 0.01,
		ObsExtra: mujoco.ObsCInert | mujoco.ObsCVel | mujoco.ObsQfrcActuator | mujoco.ObsCfrcExt,
		Progress: mujoco.ProgressMassCenter, ProgressScale: 0.25, ProgressDiv: mujoco.DivTimestep,
		ContactCost: 0.5e-6, ContactMax: 10, Alive: 5,
	}
)

func init() {
	for _, s := range []*mujoco.Spec{HopperSpec, Walker2dSpec, AntSpec, HumanoidSpec} {
		mujoco.Register(s)
	}
}

// body is one body's environment: package mujoco's, generating instances
// of that body only, with its own speed for estimates.
type body struct {
	mujoco.Env
	name string
	rate float64
}

// PlanGenerate implements algos.Generator: mujoco.Env's, accepting the
// body's own name only (dag.yaml gives env and name alike, e.g. env: ant,
// name: ant).
func (b body) PlanGenerate(p *task.Params) func(src stream.Source) ([]byte, error) {
	p.String("name", task.Required(), task.OneOf(b.name))
	return b.Env.PlanGenerate(p)
}

// SamplesPerSecond implements task.RateHint (environment steps per second
// on one core of the development machine, for dry-run estimates).
func (b body) SamplesPerSecond() float64 { return b.rate }

// The bodies' environments, as the stages bind them.
type (
	Hopper   struct{ body }
	Walker2d struct{ body }
	Ant      struct{ body }
	Humanoid struct{ body }
)

// NewHopper, NewWalker2d, NewAnt and NewHumanoid return the environments.
func NewHopper() Hopper     { return Hopper{body{name: HopperSpec.Name, rate: 20000}} }
func NewWalker2d() Walker2d { return Walker2d{body{name: Walker2dSpec.Name, rate: 15000}} }
func NewAnt() Ant           { return Ant{body{name: AntSpec.Name, rate: 6000}} }
func NewHumanoid() Humanoid { return Humanoid{body{name: HumanoidSpec.Name, rate: 2500}} }

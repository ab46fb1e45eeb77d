package mujoco

import "errors"

var (
	// ErrUnavailable is returned by every entry point that needs the
	// simulator (Open, Model.Rollout, Model.NewSim, the Sim methods,
	// NewInstance, Instance.UnmarshalBinary, Env.Load, the generator
	// returned by Env.PlanGenerate and Version) when the binary was built
	// without the mujoco build tag.
	ErrUnavailable = errors.New("MuJoCo unavailable: install libmujoco-dev and build with -tags mujoco")
	// ErrUnknownEnv is returned when an environment name is not one of
	// Names().
	ErrUnknownEnv = errors.New("mujoco: unknown environment")
	// ErrVersion is returned by Open, and so by everything that loads a
	// model, when the linked MuJoCo library is not the expected version
	// (WantVersion), and by Instance.UnmarshalBinary when an instance was
	// generated with another MuJoCo version.
	ErrVersion = errors.New("mujoco: MuJoCo version mismatch")
	// ErrModel is returned by Open when an embedded model fails to compile
	// or its dimensions are not the environment's, and by
	// Instance.UnmarshalBinary when the instance's model hash is not the
	// embedded model's.
	ErrModel = errors.New("mujoco: model mismatch")
	// ErrFormat is returned by Instance.UnmarshalBinary (and Env.Load) when
	// an instance encoding is malformed or holds invalid values, and by
	// NewInstance for an out-of-range horizon or episode count.
	ErrFormat = errors.New("mujoco: malformed instance")
	// ErrSnapshot is returned by Env.Evaluate when a snapshot is not a
	// policy W of ActDim×ObsDim values.
	ErrSnapshot = errors.New("mujoco: snapshot length does not match the environment")
	// ErrUnstable is returned by Rollout and Sim.Step when MuJoCo raises a
	// warning (e.g. mjWARN_BADQACC, after which it would silently reset the
	// state) or the state becomes NaN or huge; the message names the
	// environment, the step and the warning.
	ErrUnstable = errors.New("mujoco: unstable simulation")
	// ErrSimulation is returned when MuJoCo raises an error (mju_error)
	// inside a call; the message is MuJoCo's.
	ErrSimulation = errors.New("mujoco: MuJoCo error")
)

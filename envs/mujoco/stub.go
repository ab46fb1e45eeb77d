//go:build !mujoco

package mujoco

import "math/rand/v2"

// This file is the API of a build without the mujoco tag: every entry point
// that needs the simulator returns ErrUnavailable.

// native is empty without MuJoCo; no Model is ever built.
type native struct{}

// Version returns ErrUnavailable.
func Version() (int, string, error) { return 0, "", ErrUnavailable }

// Open returns ErrUnavailable (or ErrUnknownEnv for an unknown name).
func Open(name string) (*Model, error) {
	if _, err := Lookup(name); err != nil {
		return nil, err
	}
	return nil, ErrUnavailable
}

// Dt returns 0.
func (m *Model) Dt() float64 { return 0 }

// Timestep returns 0.
func (m *Model) Timestep() float64 { return 0 }

// QPos0 returns nil.
func (m *Model) QPos0() []float64 { return nil }

// Rollout returns ErrUnavailable.
func (m *Model) Rollout(rng *rand.Rand, W []float64, h, t int, delta, obs []float64) (float64, error) {
	return 0, ErrUnavailable
}

// Episode returns ErrUnavailable.
func (m *Model) Episode(rng *rand.Rand, W []float64, h int, steps []int, delta, obs, rewards []float64) (float64, error) {
	return 0, ErrUnavailable
}

// Sim is one simulation state; without MuJoCo none can be made.
type Sim struct{}

// NewSim returns ErrUnavailable.
func (m *Model) NewSim() (*Sim, error) { return nil, ErrUnavailable }

// Close does nothing.
func (s *Sim) Close() {}

// Reset returns ErrUnavailable.
func (s *Sim) Reset(rng *rand.Rand) error { return ErrUnavailable }

// SetState returns ErrUnavailable.
func (s *Sim) SetState(qpos, qvel []float64) error { return ErrUnavailable }

// QPos returns nil.
func (s *Sim) QPos() []float64 { return nil }

// QVel returns nil.
func (s *Sim) QVel() []float64 { return nil }

// Obs returns nil.
func (s *Sim) Obs() []float64 { return nil }

// Step returns ErrUnavailable.
func (s *Sim) Step(a []float64) (float64, error) { return 0, ErrUnavailable }

//go:build mujoco

package mujoco

// For the external tests of the bodies other packages register
// (locomotion_test.go): the arrays a Sim reads.

// SimArray returns a copy of one of the arrays Sim.array reads.
func (s *Sim) SimArray(a int) []float64 { return s.array(simArray(a)) }

// The arrays, as SimArray takes them.
const (
	ArrBodyMass = int(arrBodyMass)
	ArrCInert   = int(arrCInert)
)

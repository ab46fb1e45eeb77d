package episodic

import (
	"fmt"

	"zorepro/algos"
	"zorepro/pipeline/blob"
)

// Policy is the trained state of ARS V1 and ExAct: the linear policy W
// (p×n row-major) and the ES-Adam whose steps are added to it.
type Policy struct {
	// W is the policy. Ascend and UnmarshalState update it in place (the
	// slice itself never changes); callers only read it.
	W    []float64
	adam *algos.ESAdam
}

// NewPolicy returns W = 0 over dim coordinates with a fresh ES-Adam of step
// size alpha.
func NewPolicy(dim int, alpha float64) *Policy {
	return &Policy{W: make([]float64, dim), adam: algos.NewESAdam(dim, alpha)}
}

// Ascend takes one ES-Adam step on the ascent direction g and adds it to W,
// coordinate by coordinate: W_j += ESAdam.Step(g)_j. It panics if len(g) is
// not len(W).
func (p *Policy) Ascend(g []float64) {
	for j, s := range p.adam.Step(g) {
		p.W[j] += s
	}
}

// MarshalState encodes W and then the ES-Adam state (as a blob) under the
// method's magic and version.
func (p *Policy) MarshalState(magic string, version uint32) ([]byte, error) {
	adam, err := p.adam.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e := blob.NewEncoder(magic, version)
	e.Floats(p.W)
	e.Blob(adam)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob of the same magic and version
// whose W and ES-Adam have the dimension of p's. On error p is unchanged.
// Errors are not prefixed: the method wraps them with its name.
func (p *Policy) UnmarshalState(b []byte, magic string, version uint32) error {
	d := blob.NewDecoder(b, magic, version)
	w := d.Floats()
	state := d.Blob()
	if err := d.Finish(); err != nil {
		return err
	}
	dim := len(p.W)
	if len(w) != dim {
		return fmt.Errorf("%w: state has %d weights, want %d", blob.ErrFormat, len(w), dim)
	}
	// A well-formed ES-Adam blob may still cover another dimension.
	adam := algos.NewESAdam(dim, p.adam.Alpha)
	if err := adam.UnmarshalBinary(state); err != nil {
		return err
	}
	if adam.Dim() != dim {
		return fmt.Errorf("%w: ES-Adam state of another dimension (want %d)", blob.ErrFormat, dim)
	}
	copy(p.W, w)
	p.adam = adam
	return nil
}

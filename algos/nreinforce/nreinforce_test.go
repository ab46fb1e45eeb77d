package nreinforce

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestNaturalStepGuards: NaturalStep with g = 0 returns ok = false and a
// zero step; a NaN gradient is an ErrNonFinite error.
func TestNaturalStepGuards(t *testing.T) {
	var chol mat.Cholesky
	chol.Factorize(mat.NewSymDense(2, []float64{2, 1, 1, 2}))
	step := []float64{7, 7}
	if eta, ok, err := NaturalStep(step, &chol, []float64{0, 0}, 1); eta != 0 || ok || err != nil || step[0] != 0 || step[1] != 0 {
		t.Errorf("g = 0: η = %v, ok = %v, err = %v, step %v", eta, ok, err, step)
	}
	if _, _, err := NaturalStep(step, &chol, []float64{math.NaN(), 1}, 1); !errors.Is(err, ErrNonFinite) {
		t.Errorf("NaN g: %v", err)
	}
}

// TestDamp: Damping (10⁻³) is added to the diagonal only.
func TestDamp(t *testing.T) {
	F := mat.NewSymDense(2, []float64{1, 0.5, 0.5, 1.75})
	Damp(F)
	if F.At(0, 0) != 1+1e-3 || F.At(1, 1) != 1.75+1e-3 || F.At(0, 1) != 0.5 {
		t.Errorf("F = %v", mat.Formatted(F))
	}
}

func TestValidate(t *testing.T) {
	err := Config{LR: 0, Batch: 0, Beta: math.NaN()}.Validate()
	if !errors.Is(err, ErrConfig) || len(err.(interface{ Unwrap() []error }).Unwrap()) != 3 {
		t.Errorf("three invalid fields: %v", err)
	}
	if got := (Config{LR: 2}).Eps(4); got != 1 {
		t.Errorf("Eps(4) = %v, want 2/√4 = 1", got)
	}
	if got := (Config{LR: 0.01, ConstantEps: true}).Eps(100); got != 0.01 {
		t.Errorf("constant Eps(100) = %v, want 0.01", got)
	}
}

package nreinforce

import "errors"

var (
	// ErrConfig is returned by Config.Validate (and Factory.New) for invalid
	// hyperparameters.
	ErrConfig = errors.New("nreinforce: invalid config")
	// ErrSolve is returned by Step when the damped Fisher matrix cannot be
	// factorized or is too ill-conditioned to solve.
	ErrSolve = errors.New("nreinforce: cannot solve the Fisher system")
	// ErrNonFinite is returned by Step and NaturalStep when vᵀĝ is NaN or
	// infinite (non-finite weights, data or gradient).
	ErrNonFinite = errors.New("nreinforce: non-finite natural gradient")
)

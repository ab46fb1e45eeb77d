package newton

import "errors"

var (
	// ErrConfig is returned by Config.Validate (and Factory.New) for invalid
	// hyperparameters.
	ErrConfig = errors.New("newton: invalid config")
	// ErrSolve is returned by Step when the damped batch Hessian cannot be
	// factorized or is too ill-conditioned to solve (non-finite or
	// astronomically large features).
	ErrSolve = errors.New("newton: cannot solve the Newton system")
)

package arsv1

import "errors"

// ErrConfig is returned by Config.Validate and New for invalid
// hyperparameters.
var ErrConfig = errors.New("arsv1: invalid config")

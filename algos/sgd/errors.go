package sgd

import "errors"

// ErrConfig is returned by Config.Validate and New for invalid
// hyperparameters.
var ErrConfig = errors.New("sgd: invalid config")

package episodic

import "errors"

// ErrConfig is returned by Config.Validate (and so by arsv1.New and
// exact.New) for invalid hyperparameters.
var ErrConfig = errors.New("episodic: invalid config")

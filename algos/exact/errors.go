package exact

import "errors"

// ErrConfig is returned by Config.Validate and New for invalid
// hyperparameters.
var ErrConfig = errors.New("exact: invalid config")

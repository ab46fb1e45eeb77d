package reinforce

import "errors"

// ErrConfig is returned by Config.Validate (and Factory.New) for invalid
// hyperparameters.
var ErrConfig = errors.New("reinforce: invalid config")

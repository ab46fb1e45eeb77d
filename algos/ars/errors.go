package ars

import "errors"

// ErrConfig is returned by Config.Validate and New for invalid
// hyperparameters.
var ErrConfig = errors.New("ars: invalid config")

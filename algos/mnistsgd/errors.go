package mnistsgd

import "errors"

var (
	// ErrConfig is returned by Config.Validate and New for invalid
	// hyperparameters.
	ErrConfig = errors.New("mnistsgd: invalid config")
	// ErrInstance is returned by New for an instance without training
	// images or with inconsistent sizes.
	ErrInstance = errors.New("mnistsgd: unusable instance")
)

package mnistars

import "errors"

var (
	// ErrConfig is returned by Config.Validate and New for invalid
	// hyperparameters.
	ErrConfig = errors.New("mnistars: invalid config")
	// ErrInstance is returned by New for an instance without training
	// images or with inconsistent sizes.
	ErrInstance = errors.New("mnistars: unusable instance")
	// ErrNonFinite is returned by Step when a perturbed network's output is
	// not finite, so no action can be sampled.
	ErrNonFinite = errors.New("mnistars: non-finite logits")
)

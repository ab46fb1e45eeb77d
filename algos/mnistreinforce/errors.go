package mnistreinforce

import "errors"

var (
	// ErrConfig is returned by Config.Validate and New for invalid
	// hyperparameters.
	ErrConfig = errors.New("mnistreinforce: invalid config")
	// ErrInstance is returned by New for an instance without training
	// images or with inconsistent sizes.
	ErrInstance = errors.New("mnistreinforce: unusable instance")
	// ErrNonFinite is returned by Step when the network's output for a
	// training image is not finite, so no action can be sampled.
	ErrNonFinite = errors.New("mnistreinforce: non-finite logits")
)

package linreg

import "errors"

var (
	// ErrFormat is returned by UnmarshalBinary when the encoding is truncated,
	// has trailing bytes, a wrong magic, inconsistent dimensions or invalid
	// values.
	ErrFormat = errors.New("linreg: malformed instance encoding")
	// ErrVersion is returned by UnmarshalBinary when the encoding has a version
	// this package does not read.
	ErrVersion = errors.New("linreg: unsupported instance encoding version")
	// ErrLayout is returned when a snapshot layout is not trajectory.Raw or
	// trajectory.Normalized.
	ErrLayout = errors.New("linreg: unknown snapshot layout")
	// ErrSnapshot is returned when a snapshot's length does not match its
	// layout and the instance's dimension, or its header records no test
	// batch size.
	ErrSnapshot = errors.New("linreg: snapshot does not match its header")
	// ErrPolicy is returned by NewPolicy when the Gaussian policy's
	// standard deviation is missing.
	ErrPolicy = errors.New("linreg: invalid policy")
)

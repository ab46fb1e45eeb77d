package lqr

import "errors"

var (
	// ErrFormat is returned by UnmarshalBinary (and Env.Load) when an
	// instance encoding is malformed or holds invalid values.
	ErrFormat = errors.New("lqr: malformed instance encoding")
	// ErrSnapshot is returned by Env.Evaluate when a snapshot is not a gain
	// K of length n.
	ErrSnapshot = errors.New("lqr: snapshot length does not match the instance")
)

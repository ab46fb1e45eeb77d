package blob

import "errors"

var (
	// ErrFormat is returned when decoding a blob that is truncated, has
	// trailing bytes, a wrong magic or values that violate the format's
	// invariants (Decoder.Failf).
	ErrFormat = errors.New("blob: malformed encoding")
	// ErrVersion is returned when decoding a blob whose version this build
	// does not read.
	ErrVersion = errors.New("blob: unsupported encoding version")
)

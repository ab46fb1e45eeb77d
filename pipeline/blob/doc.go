// Package blob writes and reads the project's binary formats: a 4-byte
// magic, a uint32 version, then little-endian values in call order (floats
// as their IEEE-754 bits, so NaN payloads and signed zeros survive).
// Trajectories, checkpoints, method states and problem instances use it.
//
// It is a leaf (no imports inside the module), so that environments and
// algorithms share one encoding without importing each other.
//
// Invariants: an Encoder is deterministic (the same calls give the same
// bytes); a Decoder never panics and never allocates more than its input
// can hold, and its errors are sticky, wrapping ErrFormat or ErrVersion.
package blob

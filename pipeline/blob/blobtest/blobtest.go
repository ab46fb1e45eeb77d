// Package blobtest checks the binary encodings built on package blob: that
// a value survives a round trip to the same bytes, that a decoder accepts
// only canonical input (what it accepts encodes back to the same bytes),
// and whether two vectors are equal to the bit. The tests of trajectories,
// problem instances and method states share it.
package blobtest

import (
	"bytes"
	"encoding"
	"math"
	"slices"
	"testing"
)

// SameBits reports whether a and b hold the same float64s to the bit, as
// package blob encodes them (NaN payloads and signed zeros count).
func SameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// Codec is a pointer type that encodes and decodes itself.
type Codec[T any] interface {
	*T
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// RoundTrip encodes in, decodes the bytes into a new value and encodes that
// again; it fails t on an error or when the two encodings differ, and
// returns the decoded value and the encoding.
func RoundTrip[T any, P Codec[T]](t testing.TB, in P) (P, []byte) {
	t.Helper()
	b, err := in.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	out := P(new(T))
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	b2, err := out.MarshalBinary()
	if err != nil {
		t.Fatalf("decoded value does not encode: %v", err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatal("round trip changed the encoding")
	}
	return out, b
}

// Canonical is a fuzz body: when data decodes into a T, it must encode
// back to data exactly.
func Canonical[T any, P Codec[T]](t *testing.T, data []byte) {
	out := P(new(T))
	if out.UnmarshalBinary(data) != nil {
		return
	}
	b, err := out.MarshalBinary()
	if err != nil {
		t.Fatalf("accepted input does not encode: %v", err)
	}
	if !bytes.Equal(b, data) {
		t.Fatal("accepted encoding is not canonical")
	}
}

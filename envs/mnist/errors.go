package mnist

import "errors"

var (
	// ErrMissing is returned by ReadDir (and the generator) when an idx file
	// does not exist; fetch the files with `make data` or
	// `envs/mnist/fetch.sh .data/mnist`.
	ErrMissing = errors.New("mnist: file missing")
	// ErrDigest is returned by ReadDir when a file's SHA-256 differs from the
	// recorded one (the file is tampered or corrupt), and by UnmarshalBinary
	// when an instance's data does not hash to the digests it carries.
	ErrDigest = errors.New("mnist: SHA-256 mismatch (tampered or corrupt)")
	// ErrMagic is returned by the idx parsers for a magic number other than
	// 0x00000803 (images) or 0x00000801 (labels).
	ErrMagic = errors.New("mnist: bad idx magic number")
	// ErrTruncated is returned by the idx parsers when a file is shorter than
	// its header or than the data its dimensions announce.
	ErrTruncated = errors.New("mnist: truncated idx file")
	// ErrTrailing is returned by the idx parsers when a file is longer than
	// the data its dimensions announce.
	ErrTrailing = errors.New("mnist: trailing bytes after idx data")
	// ErrMismatch is returned when the dimensions of the files disagree: a
	// different number of images and labels, or images that are not 28×28.
	ErrMismatch = errors.New("mnist: dimension mismatch")
	// ErrLabel is returned when a label is not a digit 0–9.
	ErrLabel = errors.New("mnist: label out of range")
	// ErrFormat is returned by UnmarshalBinary when an instance encoding is
	// truncated, has trailing bytes, a wrong magic or inconsistent sizes.
	ErrFormat = errors.New("mnist: malformed instance encoding")
	// ErrVersion is returned by UnmarshalBinary for an encoding version this
	// package does not read.
	ErrVersion = errors.New("mnist: unsupported instance encoding version")
	// ErrNoTraining is returned when a method asks an instance without
	// training images (or with inconsistent sizes) for training batches.
	ErrNoTraining = errors.New("mnist: no training images")
	// ErrPolicy is returned by NewPolicy for an exploration scale the
	// softmax policy has no use for.
	ErrPolicy = errors.New("mnist: invalid policy")
	// ErrNonFinite is returned when the network's output for a training
	// image is not finite, so no action can be sampled.
	ErrNonFinite = errors.New("mnist: non-finite logits")
	// ErrLayout is returned by Evaluate and Accuracy for a snapshot layout
	// other than trajectory.Raw and trajectory.Normalized.
	ErrLayout = errors.New("mnist: unknown snapshot layout")
	// ErrSnapshot is returned by Evaluate and Accuracy when a snapshot's
	// length does not match its layout, or its normalizer has a non-finite
	// mean or a standard deviation that is not finite and positive.
	ErrSnapshot = errors.New("mnist: invalid snapshot")
)

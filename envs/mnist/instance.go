package mnist

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"zorepro/envs/mnist/lenet"
)

// Image geometry and classes.
const (
	Rows, Cols = lenet.InputH, lenet.InputW // 28×28
	Pixels     = Rows * Cols                // 784 bytes per image
	Classes    = lenet.Classes              // digits 0–9
)

// Instance is the MNIST data set as the pipeline's generate stage stores it:
// the training and test images and labels, and the SHA-256 digests of the
// four idx files they were read from.
//
// The fields are exported for inspection; treat them as read-only. An
// Instance is safe for concurrent use by readers.
type Instance struct {
	// TrainImages holds NTrain()·Pixels raw pixels (0–255), image by image,
	// row-major; TrainLabels the NTrain() labels (0–9).
	TrainImages, TrainLabels []uint8
	// TestImages and TestLabels are the same for the test set.
	TestImages, TestLabels []uint8
	// Digests are the SHA-256 digests of the four idx files. Decode computes
	// them; UnmarshalBinary checks that the data hashes to them.
	Digests Digests
}

// NTrain returns the number of training images.
func (in *Instance) NTrain() int { return len(in.TrainLabels) }

// NTest returns the number of test images.
func (in *Instance) NTest() int { return len(in.TestLabels) }

// Dim returns the number of parameters of the network (lenet.NumParams).
func (in *Instance) Dim() int { return lenet.NumParams }

// InitialWeights draws the network's initial parameters (lenet.NewParams:
// PyTorch v0.3's default initialization) from rng.
func (in *Instance) InitialWeights(rng *rand.Rand) []float64 { return lenet.NewParams(rng) }

// ReadDir reads the four idx files from dir, checks their SHA-256 digests
// against want (RecordedDigests() for the real MNIST) and decodes them. It
// reports every missing file (ErrMissing, with how to fetch it) and every
// digest mismatch (ErrDigest) at once, then any decoding problem (see
// Decode). Errors name the file.
func ReadDir(dir string, want Digests) (*Instance, error) {
	var raw [numFiles][]byte
	var errs []error
	for _, f := range Files() {
		path := filepath.Join(dir, f.Name())
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			errs = append(errs, fmt.Errorf("%w: %s (%s)", ErrMissing, path, FetchHint))
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("mnist: %w", err))
			continue
		}
		if got := Digest(sha256.Sum256(b)); got != want[f] {
			errs = append(errs, fmt.Errorf("%w: %s has SHA-256 %s, want %s; delete it and %s", ErrDigest, path, got, want[f], FetchHint))
			continue
		}
		raw[f] = b
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	in, err := Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return in, nil
}

// Decode builds an Instance from the contents of the four idx files
// (indexed by File), computing their digests. It checks each file's format
// (ErrMagic, ErrTruncated, ErrTrailing), that images are Rows×Cols and as
// many as their labels (ErrMismatch), that both sets are non-empty and that
// every label is 0–9 (ErrLabel). All problems are reported at once, each
// naming its file. The Instance holds copies of the data.
func Decode(raw [numFiles][]byte) (*Instance, error) {
	var errs []error
	fail := func(f File, err error) { errs = append(errs, fmt.Errorf("%s: %w", f.Name(), err)) }
	images := func(f File) []uint8 {
		im, err := ParseImages(raw[f])
		if err != nil {
			fail(f, err)
			return nil
		}
		if im.Rows != Rows || im.Cols != Cols {
			fail(f, fmt.Errorf("%w: images are %d×%d, want %d×%d", ErrMismatch, im.Rows, im.Cols, Rows, Cols))
			return nil
		}
		if im.N == 0 {
			fail(f, fmt.Errorf("%w: no images", ErrMismatch))
			return nil
		}
		return im.Pixels
	}
	labels := func(f File) []uint8 {
		l, err := ParseLabels(raw[f])
		if err != nil {
			fail(f, err)
			return nil
		}
		if err := checkLabels(l); err != nil {
			fail(f, err)
			return nil
		}
		return l
	}
	trI, trL := images(TrainImages), labels(TrainLabels)
	teI, teL := images(TestImages), labels(TestLabels)
	pair := func(fi, fl File, im, l []uint8) {
		if im != nil && l != nil && len(im)/Pixels != len(l) {
			fail(fl, fmt.Errorf("%w: %d labels for the %d images of %s", ErrMismatch, len(l), len(im)/Pixels, fi.Name()))
		}
	}
	pair(TrainImages, TrainLabels, trI, trL)
	pair(TestImages, TestLabels, teI, teL)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	in := &Instance{
		TrainImages: clone(trI), TrainLabels: clone(trL),
		TestImages: clone(teI), TestLabels: clone(teL),
	}
	for f := range raw {
		in.Digests[f] = sha256.Sum256(raw[f])
	}
	return in, nil
}

func clone(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

func checkLabels(l []uint8) error {
	if len(l) == 0 {
		return fmt.Errorf("%w: no labels", ErrMismatch)
	}
	for i, v := range l {
		if v >= Classes {
			return fmt.Errorf("%w: label %d of image %d", ErrLabel, v, i)
		}
	}
	return nil
}

// Verify returns an ErrDigest error naming each file whose digest differs
// from want (e.g. RecordedDigests()).
func (in *Instance) Verify(want Digests) error {
	var errs []error
	for _, f := range Files() {
		if in.Digests[f] != want[f] {
			errs = append(errs, fmt.Errorf("%w: %s has SHA-256 %s, want %s", ErrDigest, f.Name(), in.Digests[f], want[f]))
		}
	}
	return errors.Join(errs...)
}

// idxDigests returns the SHA-256 of the idx files the instance's data
// encodes to: header (magic, big-endian dimensions) then payload. Decode
// accepts only files of exactly that form, so these are the files' digests.
func (in *Instance) idxDigests() Digests {
	var d Digests
	sum := func(dims []int, payload []byte) Digest {
		h := sha256.New()
		h.Write(idxHeader(dims))
		h.Write(payload)
		return Digest(h.Sum(nil))
	}
	d[TrainImages] = sum([]int{in.NTrain(), Rows, Cols}, in.TrainImages)
	d[TrainLabels] = sum([]int{in.NTrain()}, in.TrainLabels)
	d[TestImages] = sum([]int{in.NTest(), Rows, Cols}, in.TestImages)
	d[TestLabels] = sum([]int{in.NTest()}, in.TestLabels)
	return d
}

// Encoding (version 1), integers little-endian:
//
//	"ZMNI" | uint32 version | 4 × [32]byte digests (File order) |
//	uint32 rows | uint32 cols | uint32 nTrain | uint32 nTest |
//	train images | train labels | test images | test labels (one byte each)
//
// 54,950,152 bytes for MNIST (152-byte header): one byte per pixel and label, nothing else.
const (
	instanceMagic   = "ZMNI"
	instanceVersion = 1
	headerLen       = 4 + 4 + int(numFiles)*32 + 4*4
	// maxImages bounds the counts in decoding so sizes cannot overflow.
	maxImages = 1 << 24
)

// MarshalBinary encodes the instance deterministically (see the encoding
// comment above). It returns ErrFormat for inconsistent sizes.
func (in *Instance) MarshalBinary() ([]byte, error) {
	ntr, nte := in.NTrain(), in.NTest()
	if ntr < 1 || nte < 1 || ntr > maxImages || nte > maxImages || len(in.TrainImages) != ntr*Pixels || len(in.TestImages) != nte*Pixels {
		return nil, fmt.Errorf("%w: inconsistent instance sizes", ErrFormat)
	}
	b := make([]byte, 0, headerLen+(ntr+nte)*(Pixels+1))
	b = append(b, instanceMagic...)
	b = binary.LittleEndian.AppendUint32(b, instanceVersion)
	for _, d := range in.Digests {
		b = append(b, d[:]...)
	}
	for _, v := range []int{Rows, Cols, ntr, nte} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	b = append(b, in.TrainImages...)
	b = append(b, in.TrainLabels...)
	b = append(b, in.TestImages...)
	b = append(b, in.TestLabels...)
	return b, nil
}

// UnmarshalBinary decodes an encoding made by MarshalBinary: it checks the
// magic, the version (ErrVersion), 28×28 images, 1 ≤ counts ≤ 2²⁴ and the
// exact length (ErrFormat), that every label is 0–9 (ErrLabel), and that the
// data hashes to the digests it carries (ErrDigest; about 30 ms for MNIST).
// The Instance holds copies of the data. On error the receiver is left
// unchanged. It never panics.
func (in *Instance) UnmarshalBinary(data []byte) error {
	if len(data) < headerLen {
		return fmt.Errorf("%w: %d bytes is shorter than the %d-byte header", ErrFormat, len(data), headerLen)
	}
	if string(data[:4]) != instanceMagic {
		return fmt.Errorf("%w: bad magic %q", ErrFormat, data[:4])
	}
	if v := binary.LittleEndian.Uint32(data[4:]); v != instanceVersion {
		return fmt.Errorf("%w: version %d, this build reads %d", ErrVersion, v, instanceVersion)
	}
	var dg Digests
	for f := range dg {
		copy(dg[f][:], data[8+32*f:])
	}
	off := 8 + 32*int(numFiles)
	u := func(i int) uint32 { return binary.LittleEndian.Uint32(data[off+4*i:]) }
	rows, cols, ntr, nte := u(0), u(1), u(2), u(3)
	if rows != Rows || cols != Cols {
		return fmt.Errorf("%w: images are %d×%d, want %d×%d", ErrFormat, rows, cols, Rows, Cols)
	}
	if ntr < 1 || nte < 1 || ntr > maxImages || nte > maxImages {
		return fmt.Errorf("%w: %d training and %d test images (want 1 to %d each)", ErrFormat, ntr, nte, maxImages)
	}
	want := headerLen + int(ntr+nte)*(Pixels+1)
	if len(data) != want {
		return fmt.Errorf("%w: %d bytes, want %d for %d training and %d test images", ErrFormat, len(data), want, ntr, nte)
	}
	p := data[headerLen:]
	take := func(n int) []uint8 {
		b := clone(p[:n])
		p = p[n:]
		return b
	}
	dec := &Instance{Digests: dg}
	dec.TrainImages = take(int(ntr) * Pixels)
	dec.TrainLabels = take(int(ntr))
	dec.TestImages = take(int(nte) * Pixels)
	dec.TestLabels = take(int(nte))
	if err := checkLabels(dec.TrainLabels); err != nil {
		return fmt.Errorf("training set: %w", err)
	}
	if err := checkLabels(dec.TestLabels); err != nil {
		return fmt.Errorf("test set: %w", err)
	}
	got := dec.idxDigests()
	for _, f := range Files() {
		if got[f] != dg[f] {
			return fmt.Errorf("%w: the instance's %s data hashes to %s, it records %s", ErrDigest, f.Name(), got[f], dg[f])
		}
	}
	*in = *dec
	return nil
}

// TrainBatch fills x (len(idx)·Pixels values) with the raw pixels (0–255 as
// float64) of the training images idx, in order, and y, when not nil, with
// their labels. It panics on an index out of range or wrong lengths.
func (in *Instance) TrainBatch(idx []int, x []float64, y []int) {
	gather(in.TrainImages, in.TrainLabels, idx, x, y)
}

// DrawTrainBatch draws a training batch uniformly WITH replacement (spec
// §2.1) and gathers it: idx[i] = rng.IntN(NTrain()) for i = 0, 1, ... in
// order, then TrainBatch(idx, x, y). It makes no other use of rng and
// panics on wrong lengths.
func (in *Instance) DrawTrainBatch(rng *rand.Rand, idx []int, x []float64, y []int) {
	n := in.NTrain()
	for i := range idx {
		idx[i] = rng.IntN(n)
	}
	in.TrainBatch(idx, x, y)
}

// TestBatch is TrainBatch for the test set.
func (in *Instance) TestBatch(idx []int, x []float64, y []int) {
	gather(in.TestImages, in.TestLabels, idx, x, y)
}

func gather(images, labels []uint8, idx []int, x []float64, y []int) {
	if len(x) != len(idx)*Pixels || (y != nil && len(y) != len(idx)) {
		panic(fmt.Sprintf("mnist: batch of %d images with len(x) = %d, len(y) = %d", len(idx), len(x), len(y)))
	}
	for k, i := range idx {
		img := images[i*Pixels : (i+1)*Pixels]
		row := x[k*Pixels : (k+1)*Pixels]
		for j, v := range img {
			row[j] = float64(v)
		}
		if y != nil {
			y[k] = int(labels[i])
		}
	}
}

// Standardize replaces each pixel x[j] of the images in x (a multiple of
// Pixels values) by (x[j] − mu[p]) / s[p], p = j mod Pixels: ARS's input
// normalization (spec §2.6) with the running mean mu and standard deviation
// s. It panics on wrong lengths.
func Standardize(x, mu, s []float64) {
	if len(x)%Pixels != 0 || len(mu) != Pixels || len(s) != Pixels {
		panic(fmt.Sprintf("mnist: Standardize: len(x) = %d, len(mu) = %d, len(s) = %d", len(x), len(mu), len(s)))
	}
	for i := 0; i < len(x); i += Pixels {
		row := x[i : i+Pixels]
		for j, v := range row {
			row[j] = (v - mu[j]) / s[j]
		}
	}
}

package mnist

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zorepro/pipeline/blob/blobtest"
)

// synthetic returns the contents of four small idx files: nTrain and nTest
// 28×28 images of random pixels (about 80% zero) and random labels.
func synthetic(seed uint64, nTrain, nTest int) [numFiles][]byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	pix := func(n int) []byte {
		b := make([]byte, n*Pixels)
		for i := range b {
			if rng.IntN(5) == 0 {
				b[i] = byte(rng.IntN(256))
			}
		}
		return b
	}
	lab := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(Classes))
		}
		return b
	}
	var raw [numFiles][]byte
	raw[TrainImages] = idxFile(ImagesMagic, []uint32{uint32(nTrain), Rows, Cols}, pix(nTrain))
	raw[TrainLabels] = idxFile(LabelsMagic, []uint32{uint32(nTrain)}, lab(nTrain))
	raw[TestImages] = idxFile(ImagesMagic, []uint32{uint32(nTest), Rows, Cols}, pix(nTest))
	raw[TestLabels] = idxFile(LabelsMagic, []uint32{uint32(nTest)}, lab(nTest))
	return raw
}

func digestsOf(raw [numFiles][]byte) Digests {
	var d Digests
	for f := range raw {
		d[f] = sha256.Sum256(raw[f])
	}
	return d
}

func writeDir(t *testing.T, raw [numFiles][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range Files() {
		if raw[f] == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name()), raw[f], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadDir(t *testing.T) {
	raw := synthetic(1, 7, 5)
	in, err := ReadDir(writeDir(t, raw), digestsOf(raw))
	if err != nil {
		t.Fatal(err)
	}
	if in.NTrain() != 7 || in.NTest() != 5 || in.Digests != digestsOf(raw) {
		t.Fatalf("got %d/%d images, digests %v", in.NTrain(), in.NTest(), in.Digests)
	}
	if !bytes.Equal(in.TrainImages, raw[TrainImages][16:]) || !bytes.Equal(in.TestLabels, raw[TestLabels][8:]) {
		t.Error("data differs from the files")
	}
	if err := in.Verify(digestsOf(raw)); err != nil {
		t.Error(err)
	}
	if err := in.Verify(RecordedDigests()); !errors.Is(err, ErrDigest) || strings.Count(err.Error(), "\n") != 3 {
		t.Errorf("Verify against MNIST's digests: %v", err)
	}
}

// Every missing file and every digest mismatch is reported at once, with
// what to do about it.
func TestReadDirMissingAndTampered(t *testing.T) {
	raw := synthetic(2, 3, 2)
	want := digestsOf(raw)
	empty := t.TempDir()
	_, err := ReadDir(empty, want)
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("empty dir: %v", err)
	}
	msg := err.Error()
	for _, f := range Files() {
		if !strings.Contains(msg, filepath.Join(empty, f.Name())) {
			t.Errorf("message does not name %s:\n%s", f.Name(), msg)
		}
	}
	if !strings.Contains(msg, "make data") || !strings.Contains(msg, "envs/mnist/fetch.sh .data/mnist") {
		t.Errorf("message does not say how to fetch:\n%s", msg)
	}

	tampered := raw
	tampered[TrainImages] = slices.Clone(raw[TrainImages])
	tampered[TrainImages][100] ^= 1
	tampered[TestLabels] = nil
	_, err = ReadDir(writeDir(t, tampered), want)
	if !errors.Is(err, ErrDigest) || !errors.Is(err, ErrMissing) {
		t.Fatalf("tampered + missing: %v", err)
	}
	if !strings.Contains(err.Error(), "tampered or corrupt") || !strings.Contains(err.Error(), TrainImages.Name()) || !strings.Contains(err.Error(), TestLabels.Name()) {
		t.Errorf("message: %v", err)
	}
}

// Format problems of valid-digest files: dimension mismatches, bad labels,
// wrong magic, truncation, each naming its file, all reported at once.
func TestDecodeErrors(t *testing.T) {
	good := synthetic(3, 4, 3)
	for _, tc := range []struct {
		name  string
		edit  func(r *[numFiles][]byte)
		want  []error
		files []File
	}{
		{"count mismatch", func(r *[numFiles][]byte) {
			r[TrainLabels] = idxFile(LabelsMagic, []uint32{5}, make([]byte, 5))
		}, []error{ErrMismatch}, []File{TrainLabels}},
		{"not 28×28", func(r *[numFiles][]byte) {
			r[TestImages] = idxFile(ImagesMagic, []uint32{3, 27, 29}, make([]byte, 3*27*29))
		}, []error{ErrMismatch}, []File{TestImages}},
		{"no images", func(r *[numFiles][]byte) {
			r[TestImages] = idxFile(ImagesMagic, []uint32{0, 28, 28}, nil)
			r[TestLabels] = idxFile(LabelsMagic, []uint32{0}, nil)
		}, []error{ErrMismatch}, []File{TestImages, TestLabels}},
		{"label 10", func(r *[numFiles][]byte) {
			r[TestLabels] = idxFile(LabelsMagic, []uint32{3}, []byte{1, 10, 2})
		}, []error{ErrLabel}, []File{TestLabels}},
		{"swapped files and truncation", func(r *[numFiles][]byte) {
			r[TrainImages], r[TrainLabels] = r[TrainLabels], r[TrainImages]
			r[TestImages] = r[TestImages][:100]
		}, []error{ErrMagic, ErrTruncated}, []File{TrainImages, TrainLabels, TestImages}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := good
			tc.edit(&raw)
			// Through ReadDir, with digests that accept the edited files.
			_, err := ReadDir(writeDir(t, raw), digestsOf(raw))
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %v, want %v", err, w)
				}
			}
			for _, f := range tc.files {
				if err == nil || !strings.Contains(err.Error(), f.Name()+":") {
					t.Errorf("error does not name %s: %v", f.Name(), err)
				}
			}
		})
	}
}

func TestEncodingRoundTrip(t *testing.T) {
	raw := synthetic(4, 6, 4)
	in, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	out, b := blobtest.RoundTrip(t, in)
	if len(b) != headerLen+10*(Pixels+1) {
		t.Errorf("%d bytes", len(b))
	}
	if out.Digests != in.Digests || !bytes.Equal(out.TestImages, in.TestImages) {
		t.Error("round trip changed the instance")
	}
	b2 := slices.Clone(b)
	b[200] ^= 0xff // the data no longer hashes to its digests
	b2[headerLen-1] = 0xff
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrFormat},
		{"header only", b[:headerLen], ErrFormat},
		{"truncated", b2[:len(b2)-1], ErrFormat},
		{"trailing", append(slices.Clone(b2), 0), ErrFormat},
		{"magic", append([]byte("ZLRI"), b2[4:]...), ErrFormat},
		{"version", append(append([]byte("ZMNI"), 2, 0, 0, 0), b2[8:]...), ErrVersion},
		{"counts", b2, ErrFormat},
		{"tampered pixel", b, ErrDigest},
	} {
		keep := out
		if err := out.UnmarshalBinary(tc.data); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if !bytes.Equal(keep.TrainImages, out.TrainImages) || keep.Digests != out.Digests {
			t.Errorf("%s: the receiver changed on error", tc.name)
		}
	}
	// A label out of range, with digests recomputed to match.
	bad := &Instance{TrainImages: in.TrainImages, TrainLabels: slices.Clone(in.TrainLabels), TestImages: in.TestImages, TestLabels: in.TestLabels}
	bad.TrainLabels[0] = 10
	bad.Digests = bad.idxDigests()
	bb, _ := bad.MarshalBinary()
	if err := out.UnmarshalBinary(bb); !errors.Is(err, ErrLabel) {
		t.Errorf("label 10: %v", err)
	}
	if _, err := (&Instance{}).MarshalBinary(); !errors.Is(err, ErrFormat) {
		t.Errorf("empty instance: %v", err)
	}
}

// UnmarshalBinary never panics and accepts only what re-encodes to itself.
func FuzzUnmarshalBinary(f *testing.F) {
	in, err := Decode(synthetic(5, 2, 1))
	if err != nil {
		f.Fatal(err)
	}
	b, _ := in.MarshalBinary()
	f.Add(b)
	f.Add(b[:headerLen])
	f.Fuzz(blobtest.Canonical[Instance])
}

func TestBatchesAndStandardize(t *testing.T) {
	in, err := Decode(synthetic(6, 5, 3))
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 2*Pixels)
	y := make([]int, 2)
	in.TrainBatch([]int{4, 1}, x, y)
	for j := range Pixels {
		if x[j] != float64(in.TrainImages[4*Pixels+j]) || x[Pixels+j] != float64(in.TrainImages[Pixels+j]) {
			t.Fatalf("pixel %d", j)
		}
	}
	if y[0] != int(in.TrainLabels[4]) || y[1] != int(in.TrainLabels[1]) {
		t.Errorf("labels %v", y)
	}
	// DrawTrainBatch: len(idx) draws rng.IntN(NTrain) in order, then
	// TrainBatch.
	idx, want := make([]int, 2), []int{0, 0}
	ref := rand.New(rand.NewPCG(1, 2))
	for i := range want {
		want[i] = ref.IntN(in.NTrain())
	}
	wx, wy := make([]float64, 2*Pixels), make([]int, 2)
	in.TrainBatch(want, wx, wy)
	in.DrawTrainBatch(rand.New(rand.NewPCG(1, 2)), idx, x, y)
	if !slices.Equal(idx, want) || !slices.Equal(x, wx) || !slices.Equal(y, wy) {
		t.Fatalf("DrawTrainBatch drew %v, want %v", idx, want)
	}
	in.TestBatch([]int{2, 2}, x, nil)
	mu, s := make([]float64, Pixels), make([]float64, Pixels)
	for j := range mu {
		mu[j], s[j] = float64(j%3), 0.5+float64(j%2)
	}
	z := slices.Clone(x)
	Standardize(z, mu, s)
	for i, v := range x {
		if want := (v - mu[i%Pixels]) / s[i%Pixels]; z[i] != want {
			t.Fatalf("z[%d] = %v, want %v", i, z[i], want)
		}
	}
}

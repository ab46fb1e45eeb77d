package mnist

import (
	"fmt"
	"math"
	"math/rand/v2"

	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Env is MNIST as a contextual bandit (spec §2) as the stages see it (an
// algos.Env and algos.Generator).
type Env struct{}

// MetricAccuracy is the only metric: the fraction of the test set the
// snapshot's network classifies correctly.
const MetricAccuracy = "accuracy"

// Snapshot layouts understood by Accuracy and Evaluate (the trajectory
// header's Layout):
//   - trajectory.Raw: the snapshot is θ (lenet.NumParams values, lenet's
//     flat layout) and the network sees raw 0–255 pixels (SGD, REINFORCE).
//   - trajectory.Normalized: the snapshot is θ ‖ μ ‖ s, lenet.NumParams +
//     2·784 values: θ, then the running mean μ and standard deviation s of
//     the 784 training pixels, in pixel order. The network sees (x − μ)/s
//     per pixel (ARS, spec §2.6).

// EvalBatch is the number of test images per Forward in Accuracy. It does
// not change any result: an image's logits do not depend on its batch.
const EvalBatch = 100

// PlanGenerate reads "data_dir" (default ".data/mnist", relative to the
// pipeline's working directory, the repository root) and returns the
// generator: it reads the four idx files, verifies them against
// RecordedDigests and encodes the Instance. The data is not random; the
// stream source is not used.
func (Env) PlanGenerate(p *task.Params) func(src stream.Source) ([]byte, error) {
	dir := p.String("data_dir", task.Default(DefaultDataDir))
	if p.Has("data_dir") && dir == "" {
		p.Errorf("data_dir", "must not be empty")
	}
	// test_limit keeps only the first N test images (0: all 10,000), for
	// profiles that must evaluate quickly; the carried digests are then
	// those of the truncated files.
	limit := int(p.Int("test_limit", task.Default(int64(0)), task.Min(0)))
	return func(stream.Source) ([]byte, error) {
		in, err := ReadDir(dir, RecordedDigests())
		if err != nil {
			return nil, err
		}
		if limit > 0 && limit < in.NTest() {
			in.TestImages = in.TestImages[:limit*Pixels]
			in.TestLabels = in.TestLabels[:limit]
			in.Digests = in.idxDigests()
		}
		return in.MarshalBinary()
	}
}

// Load decodes an instance (see UnmarshalBinary).
func (Env) Load(data []byte) (*Instance, error) { return blob.Unmarshal[Instance](data) }

// NativeVersions implements task.Native: "blas <library>" of the matrix
// products the network computes with (lenet.BLAS): OpenBLAS with its
// version and CPU core in a build with the openblas tag, gonum's pure Go
// otherwise. Their bits differ, so the two never share cached outputs.
func (Env) NativeVersions() []string { return []string{"blas " + lenet.BLAS()} }

// Metrics names Evaluate's value.
func (Env) Metrics() []string { return []string{MetricAccuracy} }

// Evaluate returns the test accuracy of a snapshot in layout h.Layout (see
// Accuracy). The whole test set is used, each image once (project
// decision, spec §6 item 12 and §7), so the result is exact and rng is not
// used.
func (Env) Evaluate(in *Instance, snap []float64, h trajectory.Header, rng *rand.Rand) ([]float64, error) {
	acc, err := in.Accuracy(h.Layout, snap)
	if err != nil {
		return nil, err
	}
	return []float64{acc}, nil
}

// RecordHeader is the header MNIST trajectories record for a method's: the
// method's label prefixed with "mnist" (the labels recorded since Fig. 1's
// first runs, when each method had an MNIST copy of its own) and the
// layout; the test set is fixed, so no test batch size.
func (Env) RecordHeader(h trajectory.Header) trajectory.Header {
	return trajectory.Header{Method: "mnist" + h.Method, Layout: h.Layout}
}

// SnapshotLen returns the length of a snapshot in the given layout, or an
// ErrLayout error.
func SnapshotLen(layout trajectory.Layout) (int, error) {
	switch layout {
	case trajectory.Raw:
		return lenet.NumParams, nil
	case trajectory.Normalized:
		return lenet.NumParams + 2*Pixels, nil
	}
	return 0, fmt.Errorf("%w: %q (want %q or %q)", ErrLayout, layout, trajectory.Raw, trajectory.Normalized)
}

// SplitSnapshot checks a snapshot against its layout and returns θ and, for
// trajectory.Normalized, μ and s (sub-slices of snap; nil for trajectory.Raw). It
// returns ErrLayout or ErrSnapshot errors: a wrong length, a non-finite μ,
// or an s that is not finite and positive.
func SplitSnapshot(layout trajectory.Layout, snap []float64) (theta, mu, s []float64, err error) {
	n, err := SnapshotLen(layout)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(snap) != n {
		return nil, nil, nil, fmt.Errorf("%w: layout %q needs %d values, got %d", ErrSnapshot, layout, n, len(snap))
	}
	theta = snap[:lenet.NumParams]
	if layout == trajectory.Raw {
		return theta, nil, nil, nil
	}
	mu, s = snap[lenet.NumParams:lenet.NumParams+Pixels], snap[lenet.NumParams+Pixels:]
	for j := range mu {
		if math.IsNaN(mu[j]) || math.IsInf(mu[j], 0) {
			return nil, nil, nil, fmt.Errorf("%w: mean of pixel %d is %v", ErrSnapshot, j, mu[j])
		}
		if !(s[j] > 0) || math.IsInf(s[j], 1) {
			return nil, nil, nil, fmt.Errorf("%w: standard deviation of pixel %d is %v", ErrSnapshot, j, s[j])
		}
	}
	return theta, mu, s, nil
}

// Accuracy returns the fraction of the test set that the network of a
// snapshot classifies correctly: every test image once, in order, through
// lenet in Eval mode (no dropout), prediction = lenet.Argmax of the logits
// (the first maximum), accuracy = correct / NTest(). With trajectory.Raw the
// inputs are the raw pixels; with trajectory.Normalized they are standardized
// with the snapshot's μ and s (Standardize). Errors: see SplitSnapshot.
func (in *Instance) Accuracy(layout trajectory.Layout, snap []float64) (float64, error) {
	theta, mu, s, err := SplitSnapshot(layout, snap)
	if err != nil {
		return 0, err
	}
	n := in.NTest()
	net := lenet.New(min(EvalBatch, n))
	x := make([]float64, net.Cap()*Pixels)
	idx := make([]int, net.Cap())
	var correct int
	for start := 0; start < n; start += net.Cap() {
		b := min(net.Cap(), n-start)
		for k := range b {
			idx[k] = start + k
		}
		xb := x[:b*Pixels]
		in.TestBatch(idx[:b], xb, nil)
		if mu != nil {
			Standardize(xb, mu, s)
		}
		logits := net.Forward(theta, xb, lenet.Eval, nil)
		for k := range b {
			if lenet.Argmax(logits[k*Classes:(k+1)*Classes]) == int(in.TestLabels[start+k]) {
				correct++
			}
		}
	}
	return float64(correct) / float64(n), nil
}

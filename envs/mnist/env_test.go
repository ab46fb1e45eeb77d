package mnist

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

func TestPlanGenerateParams(t *testing.T) {
	p := task.NewParams("dag.yaml", "generate", map[string]any{})
	Env{}.PlanGenerate(p)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if got := p.Resolved(); !slices.Equal(got, []string{`data_dir ".data/mnist"`, "test_limit 0"}) {
		t.Errorf("resolved %q", got)
	}
	p = task.NewParams("dag.yaml", "generate", map[string]any{"data_dir": "", "seed": 1})
	Env{}.PlanGenerate(p)
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), "data_dir: must not be empty") || !strings.Contains(err.Error(), "seed: unknown") {
		t.Errorf("errors: %v", err)
	}
}

// The generator refuses files that are not the recorded MNIST: missing
// (with how to fetch them) or different (tampered or corrupt).
func TestGenerateRefusesOtherData(t *testing.T) {
	src := stream.New(1, "generate", nil)
	gen := Env{}.PlanGenerate(task.NewParams("dag.yaml", "generate", map[string]any{"data_dir": t.TempDir()}))
	if _, err := gen(src); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "make data") {
		t.Errorf("empty dir: %v", err)
	}
	dir := writeDir(t, synthetic(7, 3, 2))
	gen = Env{}.PlanGenerate(task.NewParams("dag.yaml", "generate", map[string]any{"data_dir": dir}))
	if _, err := gen(src); !errors.Is(err, ErrDigest) || strings.Count(err.Error(), "tampered or corrupt") != 4 {
		t.Errorf("synthetic files: %v", err)
	}
}

func syntheticInstance(t *testing.T, seed uint64, nTrain, nTest int) *Instance {
	t.Helper()
	in, err := Decode(synthetic(seed, nTrain, nTest))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// Known answer: with every weight 0 the logits are fc2's bias, so the
// network predicts the bias's argmax for every image and the accuracy is
// that class's share of the test labels — in both layouts.
func TestAccuracyKnownAnswer(t *testing.T) {
	in := syntheticInstance(t, 8, 2, 101) // two batches, the last partial
	for class := range Classes {
		theta := make([]float64, lenet.NumParams)
		theta[lenet.OffFC2B+class] = 1
		var n int
		for _, l := range in.TestLabels {
			if int(l) == class {
				n++
			}
		}
		want := float64(n) / 101
		got, err := in.Accuracy(trajectory.Raw, theta)
		if err != nil || got != want {
			t.Errorf("class %d, raw: %v (%v), want %v", class, got, err, want)
		}
		norm := append(slices.Clone(theta), make([]float64, 2*Pixels)...)
		for j := range Pixels {
			norm[lenet.NumParams+j] = 100
			norm[lenet.NumParams+Pixels+j] = 3
		}
		if got, err := in.Accuracy(trajectory.Normalized, norm); err != nil || got != want {
			t.Errorf("class %d, normalized: %v (%v), want %v", class, got, err, want)
		}
	}
}

// Accuracy equals a plain loop over the test images, one at a time, with
// the inputs standardized by hand; with μ = 0 and s = 1 the normalized
// layout gives exactly the raw result.
func TestAccuracyMatchesPerImageLoop(t *testing.T) {
	in := syntheticInstance(t, 9, 2, 150)
	rng := rand.New(rand.NewPCG(1, 2))
	theta := lenet.NewParams(rng)
	mu, s := make([]float64, Pixels), make([]float64, Pixels)
	for j := range mu {
		mu[j], s[j] = 30*rng.Float64(), 1+60*rng.Float64()
	}
	net := lenet.New(1)
	loop := func(normalize bool) float64 {
		var correct int
		x := make([]float64, Pixels)
		for i := range in.NTest() {
			for j := range x {
				x[j] = float64(in.TestImages[i*Pixels+j])
				if normalize {
					x[j] = (x[j] - mu[j]) / s[j]
				}
			}
			if lenet.Argmax(net.Forward(theta, x, lenet.Eval, nil)) == int(in.TestLabels[i]) {
				correct++
			}
		}
		return float64(correct) / float64(in.NTest())
	}
	raw, err := in.Accuracy(trajectory.Raw, theta)
	if err != nil || raw != loop(false) {
		t.Errorf("raw %v (%v), loop %v", raw, err, loop(false))
	}
	snap := slices.Concat(theta, mu, s)
	norm, err := Env{}.Evaluate(in, snap, trajectory.Header{Layout: trajectory.Normalized}, nil)
	if err != nil || norm[0] != loop(true) {
		t.Errorf("normalized %v (%v), loop %v", norm, err, loop(true))
	}
	ident := slices.Concat(theta, make([]float64, Pixels), slices.Repeat([]float64{1}, Pixels))
	if got, _ := in.Accuracy(trajectory.Normalized, ident); got != raw {
		t.Errorf("μ = 0, s = 1: %v, raw %v", got, raw)
	}
}

func TestEvaluateErrors(t *testing.T) {
	in := syntheticInstance(t, 10, 1, 1)
	theta := make([]float64, lenet.NumParams)
	norm := func(edit func(mu, s []float64)) []float64 {
		mu, s := make([]float64, Pixels), slices.Repeat([]float64{1}, Pixels)
		edit(mu, s)
		return slices.Concat(theta, mu, s)
	}
	for _, tc := range []struct {
		name   string
		layout trajectory.Layout
		snap   []float64
		want   error
	}{
		{"no layout", "", theta, ErrLayout},
		{"unknown layout", "standardized", theta, ErrLayout},
		{"raw too long", trajectory.Raw, append(slices.Clone(theta), 0), ErrSnapshot},
		{"normalized without stats", trajectory.Normalized, theta, ErrSnapshot},
		{"zero std", trajectory.Normalized, norm(func(mu, s []float64) { s[5] = 0 }), ErrSnapshot},
		{"negative std", trajectory.Normalized, norm(func(mu, s []float64) { s[0] = -1 }), ErrSnapshot},
		{"NaN std", trajectory.Normalized, norm(func(mu, s []float64) { s[783] = math.NaN() }), ErrSnapshot},
		{"Inf mean", trajectory.Normalized, norm(func(mu, s []float64) { mu[1] = math.Inf(-1) }), ErrSnapshot},
	} {
		if _, err := (Env{}).Evaluate(in, tc.snap, trajectory.Header{Layout: tc.layout}, nil); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if m := (Env{}).Metrics(); !slices.Equal(m, []string{"accuracy"}) {
		t.Errorf("metrics %v", m)
	}
}

// The real MNIST end to end (skipped until `make data` has run): the
// generator's artifact loads, has 60,000/10,000 images, the recorded
// digests and the well-known first labels; a default-init network is at
// chance level.
func TestRealMNIST(t *testing.T) {
	dir := realDataDir(t)
	gen := Env{}.PlanGenerate(task.NewParams("dag.yaml", "generate", map[string]any{"data_dir": dir}))
	data, err := gen(stream.New(1, "generate", nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 54950152 {
		t.Errorf("artifact of %d bytes", len(data))
	}
	again, err := gen(stream.New(2, "generate", nil))
	if err != nil || !slices.Equal(data, again) {
		t.Error("the artifact depends on the seed or the run")
	}
	v, err := Env{}.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	in := v
	if in.NTrain() != 60000 || in.NTest() != 10000 || in.Digests != RecordedDigests() {
		t.Fatalf("%d/%d images, digests %v", in.NTrain(), in.NTest(), in.Digests)
	}
	first := func(l []uint8) []uint8 { return l[:10] }
	if got := first(in.TrainLabels); !slices.Equal(got, []uint8{5, 0, 4, 1, 9, 2, 1, 3, 1, 4}) {
		t.Errorf("first training labels %v", got)
	}
	if got := first(in.TestLabels); !slices.Equal(got, []uint8{7, 2, 1, 0, 4, 1, 4, 9, 5, 9}) {
		t.Errorf("first test labels %v", got)
	}
	if testing.Short() {
		return
	}
	theta := lenet.NewParams(rand.New(rand.NewPCG(5488, 0)))
	acc, err := Env{}.Evaluate(in, theta, trajectory.Header{Layout: trajectory.Raw}, nil)
	if err != nil || acc[0] < 0.02 || acc[0] > 0.3 {
		t.Errorf("default-init accuracy %v (%v), want chance level", acc, err)
	}
	t.Logf("default-init raw-pixel accuracy %v", acc[0])
}

// TestTestLimit: a truncated test set carries its own digests, so Load's
// self-check still holds, and it is a prefix of the full one.
func TestTestLimit(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", DefaultDataDir)); err != nil {
		t.Skip("real MNIST not fetched (make data)")
	}
	p := task.NewParams("dag.yaml", "generate", map[string]any{"data_dir": filepath.Join("..", "..", DefaultDataDir), "test_limit": 1000})
	gen := Env{}.PlanGenerate(p)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	data, err := gen(stream.New(0, "generate/mnist", nil))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := Env{}.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	in := inst
	if in.NTest() != 1000 || in.NTrain() != 60000 || in.TestLabels[0] != 7 {
		t.Fatalf("truncated instance: %d test, %d train, first label %d", in.NTest(), in.NTrain(), in.TestLabels[0])
	}
}

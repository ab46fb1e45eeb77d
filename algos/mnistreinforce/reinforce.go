package mnistreinforce

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"zorepro/algos"
	"zorepro/envs/mnist"
	"zorepro/envs/mnist/lenet"
	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// DefaultBatch is B when Decode's parameters omit it: the code's 256
// (spec §6 item 10; the paper says 512).
const DefaultBatch = 256

// Config holds the hyperparameters. Every field must be set;
// Factory.Decode fills Batch with DefaultBatch when the parameters omit
// it. The paper's LR is 1e-3.
type Config struct {
	// LR is Adam's learning rate > 0.
	LR float64 `json:"lr"`
	// Batch is B ≥ 1; each iteration consumes B samples.
	Batch int `json:"batch"`
}

// Validate reports every invalid field at once.
func (c Config) Validate() error {
	var errs []error
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		errs = append(errs, fmt.Errorf("%w: LR = %v, want finite > 0", ErrConfig, c.LR))
	}
	if c.Batch < 1 {
		errs = append(errs, fmt.Errorf("%w: Batch = %d, want ≥ 1", ErrConfig, c.Batch))
	}
	return errors.Join(errs...)
}

func checkInstance(in *mnist.Instance) error {
	if in == nil || in.NTrain() < 1 || len(in.TrainImages) != in.NTrain()*mnist.Pixels {
		return fmt.Errorf("%w: no training images or inconsistent sizes", ErrInstance)
	}
	return nil
}

// REINFORCE is the optimizer state on one instance. It implements
// algos.Method.
type REINFORCE struct {
	cfg   Config
	in    *mnist.Instance
	src   stream.Source
	theta []float64
	m, v  []float64 // Adam moments
	t     int64     // Adam steps taken

	// scratch
	net     *lenet.Net
	idx     []int
	x       []float64
	y       []int
	p       []float64
	actions []int
	rewards []float64
	dl      []float64
	grad    []float64
}

var _ algos.Method = (*REINFORCE)(nil)

// New returns REINFORCE starting at a copy of theta0 (lenet's flat layout)
// with fresh Adam moments. It returns an ErrConfig error for invalid
// hyperparameters and an ErrInstance error for an unusable instance; it
// panics if len(theta0) != lenet.NumParams.
func New(cfg Config, in *mnist.Instance, theta0 []float64, src stream.Source) (*REINFORCE, error) {
	if err := errors.Join(cfg.Validate(), checkInstance(in)); err != nil {
		return nil, err
	}
	if len(theta0) != lenet.NumParams {
		panic(fmt.Sprintf("mnistreinforce: len(theta0) = %d, want %d", len(theta0), lenet.NumParams))
	}
	B, d := cfg.Batch, lenet.NumParams
	return &REINFORCE{
		cfg: cfg, in: in, src: src,
		theta: slices.Clone(theta0), m: make([]float64, d), v: make([]float64, d),
		net: lenet.New(B), idx: make([]int, B), x: make([]float64, B*mnist.Pixels), y: make([]int, B),
		p: make([]float64, B*lenet.Classes), actions: make([]int, B), rewards: make([]float64, B),
		dl: make([]float64, B*lenet.Classes), grad: make([]float64, d),
	}, nil
}

// Step runs iteration it (see the package documentation): batch from
// "batch"[it], Forward in lenet.Train with "dropout"[it], p = Softmax,
// a_i = SampleAction(p_i, "actions"[it]) for i in batch order, rewards,
// ReinforceLoss, Backward, AdamStep. It consumes B samples and reports
// "train_reward". A non-finite logit ends the iteration with an
// ErrNonFinite error before any state changes.
func (r *REINFORCE) Step(it int64) (algos.Stat, error) {
	B := r.cfg.Batch
	r.in.DrawTrainBatch(r.src.Rand("batch", uint64(it)), r.idx, r.x, r.y)
	logits := r.net.Forward(r.theta, r.x, lenet.Train, r.src.Rand("dropout", uint64(it)))
	for i, z := range logits {
		if math.IsNaN(z) || math.IsInf(z, 0) {
			return algos.Stat{}, fmt.Errorf("%w: image %d of the batch (training image %d)", ErrNonFinite, i/lenet.Classes, r.idx[i/lenet.Classes])
		}
	}
	lenet.Softmax(r.p, logits)
	reward := Sample(r.actions, r.rewards, r.p, r.y, r.src.Rand("actions", uint64(it)))
	lenet.ReinforceLoss(logits, r.actions, r.rewards, r.dl)
	r.net.Backward(r.dl, r.grad)
	r.t++
	AdamStep(r.theta, r.m, r.v, r.grad, r.t, r.cfg.LR)
	return algos.Stat{Samples: int64(B), Metrics: []task.Metric{{Name: "train_reward", Value: reward}}}, nil
}

// Sample draws actions[i] = lenet.SampleAction(p_i, rng) for the rows p_i
// of p (n×Classes, rows in order), sets rewards[i] = 2·1[actions[i] =
// labels[i]] − 1, and returns the mean reward (summed in order, divided by
// n). It panics on mismatched lengths or a row without a positive
// probability.
func Sample(actions []int, rewards, p []float64, labels []int, rng *rand.Rand) float64 {
	n := len(actions)
	if len(rewards) != n || len(labels) != n || len(p) != n*lenet.Classes {
		panic(fmt.Sprintf("mnistreinforce: Sample: %d actions, %d rewards, %d labels, %d probabilities", n, len(rewards), len(labels), len(p)))
	}
	var sum float64
	for i := range actions {
		a := lenet.SampleAction(p[i*lenet.Classes:(i+1)*lenet.Classes], rng)
		actions[i] = a
		rewards[i] = -1
		if a == labels[i] {
			rewards[i] = 1
		}
		sum += rewards[i]
	}
	return sum / float64(n)
}

// Params returns θ (read-only view).
func (r *REINFORCE) Params() []float64 { return r.theta }

// Snapshot returns θ (read-only view; layout mnist.LayoutRaw).
func (r *REINFORCE) Snapshot() []float64 { return r.theta }

const (
	stateMagic   = "ZMRF"
	stateVersion = 1
)

// MarshalState encodes θ, Adam's m and v and its step count t ("ZMRF",
// version 1).
func (r *REINFORCE) MarshalState() ([]byte, error) {
	e := blob.NewEncoder(stateMagic, stateVersion)
	e.Floats(r.theta)
	e.Floats(r.m)
	e.Floats(r.v)
	e.Int64(r.t)
	return e.Data(), nil
}

// UnmarshalState restores a MarshalState blob. On error the receiver is
// unchanged.
func (r *REINFORCE) UnmarshalState(b []byte) error {
	d := blob.NewDecoder(b, stateMagic, stateVersion)
	theta := d.Floats()
	m := d.Floats()
	v := d.Floats()
	t := d.Int64()
	if d.Err() == nil && (len(theta) != lenet.NumParams || len(m) != lenet.NumParams || len(v) != lenet.NumParams) {
		d.Failf("state has %d parameters and %d, %d moments, want %d", len(theta), len(m), len(v), lenet.NumParams)
	}
	if t < 0 {
		d.Failf("Adam step count %d", t)
	}
	if err := d.Finish(); err != nil {
		return fmt.Errorf("mnistreinforce: %w", err)
	}
	copy(r.theta, theta)
	copy(r.m, m)
	copy(r.v, v)
	r.t = t
	return nil
}

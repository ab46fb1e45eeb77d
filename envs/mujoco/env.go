package mujoco

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"

	"zorepro/pipeline/blob"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Bounds and defaults of an instance.
const (
	// MaxHorizon is the largest horizon H (gym's TimeLimit; the paper's
	// sweep uses 1..15).
	MaxHorizon = 1000
	// DefaultEpisodes is the number of evaluation episodes of Evaluate
	// (spec §4.2/§4.3: "mean return of 100 evaluation episodes").
	DefaultEpisodes = 100
	// MaxEpisodes bounds the evaluation episodes.
	MaxEpisodes = 100000
)

// MetricReturn is the one metric of Evaluate: the mean undiscounted return
// of Instance.Episodes evaluation episodes of H steps.
const MetricReturn = "return"

// Instance is one environment at one horizon: the artifact of the generate
// stage. It satisfies algos/episodic.Episodic, the environment of ARS V1
// and ExAct. Fields are exported for inspection; treat them as read-only.
// An Instance is safe for concurrent use.
type Instance struct {
	// Name is the environment (Swimmer or HalfCheetah).
	Name string
	// H is the horizon: steps per episode.
	H int
	// Episodes is the number of evaluation episodes (DefaultEpisodes).
	Episodes int
	// ModelSHA256 is the SHA-256 of the model XML the instance was
	// generated with; it must equal the embedded model's.
	ModelSHA256 [32]byte
	// MuJoCo is mj_version() of the library the instance was generated
	// with; it must equal the linked library's.
	MuJoCo int

	model *Model
}

// NewInstance opens the named environment's model (Open) and returns an
// instance at horizon h (1..MaxHorizon) with the given number of
// evaluation episodes (1..MaxEpisodes).
func NewInstance(name string, h, episodes int) (*Instance, error) {
	spec, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	in := &Instance{Name: name, H: h, Episodes: episodes, ModelSHA256: spec.SHA256()}
	if err := in.checkFields(); err != nil {
		return nil, err
	}
	v, _, err := Version()
	if err != nil {
		return nil, err
	}
	in.MuJoCo = v
	if in.model, err = Open(name); err != nil {
		return nil, err
	}
	return in, nil
}

func (in *Instance) checkFields() error {
	switch {
	case in.H < 1 || in.H > MaxHorizon:
		return fmt.Errorf("%w: horizon = %d, want 1 ≤ H ≤ %d", ErrFormat, in.H, MaxHorizon)
	case in.Episodes < 1 || in.Episodes > MaxEpisodes:
		return fmt.Errorf("%w: episodes = %d, want 1 ≤ episodes ≤ %d", ErrFormat, in.Episodes, MaxEpisodes)
	}
	return nil
}

// Model returns the shared compiled model.
func (in *Instance) Model() *Model { return in.model }

// ObsDim returns n (8 or 17).
func (in *Instance) ObsDim() int { return in.model.ObsDim() }

// ActDim returns p (2 or 6).
func (in *Instance) ActDim() int { return in.model.ActDim() }

// Horizon returns H.
func (in *Instance) Horizon() int { return in.H }

// Rollout runs one episode of H steps (Model.Rollout), as
// algos/episodic.Episodic specifies.
func (in *Instance) Rollout(rng *rand.Rand, W []float64, t int, delta, obs []float64) (float64, error) {
	return in.model.Rollout(rng, W, in.H, t, delta, obs)
}

// Episode runs one episode of H steps with perturbed actions
// (Model.Episode), as algos/episodic.Perturber specifies.
func (in *Instance) Episode(rng *rand.Rand, W []float64, steps []int, delta, obs, rewards []float64) (float64, error) {
	return in.model.Episode(rng, W, in.H, steps, delta, obs, rewards)
}

// EvalReturn returns the mean return of in.Episodes episodes of the
// unperturbed policy W (p×n row-major). Episode i's reset is drawn from its
// own stream rand.New(rand.NewPCG(hi_i, lo_i)), where hi_0, lo_0, hi_1,
// lo_1, ... are successive rng.Uint64() values, all drawn before the first
// episode; the returns are summed in index order and divided by the count.
func (in *Instance) EvalReturn(W []float64, rng *rand.Rand) (float64, error) {
	seeds := make([]uint64, 2*in.Episodes)
	for i := range seeds {
		seeds[i] = rng.Uint64()
	}
	var sum float64
	for i := 0; i < in.Episodes; i++ {
		r, err := in.Rollout(rand.New(rand.NewPCG(seeds[2*i], seeds[2*i+1])), W, -1, nil, nil)
		if err != nil {
			return 0, fmt.Errorf("evaluation episode %d: %w", i, err)
		}
		sum += r
	}
	return sum / float64(in.Episodes), nil
}

const (
	instanceMagic   = "ZMJC"
	instanceVersion = 1
)

// MarshalBinary encodes the instance deterministically ("ZMJC", version 1):
// name, H, episodes, the model's SHA-256, the MuJoCo version.
func (in *Instance) MarshalBinary() ([]byte, error) {
	if _, err := Lookup(in.Name); err != nil {
		return nil, err
	}
	if err := in.checkFields(); err != nil {
		return nil, err
	}
	e := blob.NewEncoder(instanceMagic, instanceVersion)
	e.String(in.Name)
	e.Uint64(uint64(in.H))
	e.Uint64(uint64(in.Episodes))
	e.Blob(in.ModelSHA256[:])
	e.Uint64(uint64(in.MuJoCo))
	return e.Data(), nil
}

// decode parses a MarshalBinary blob without opening the model.
func decode(data []byte) (*Instance, *Spec, error) {
	d := blob.NewDecoder(data, instanceMagic, instanceVersion)
	name := d.String()
	h, eps := d.Uint64(), d.Uint64()
	sum := d.Blob()
	ver := d.Uint64()
	if err := d.Finish(); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	spec, err := Lookup(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if h > MaxHorizon || eps > MaxEpisodes || ver > 1<<31 || len(sum) != 32 {
		return nil, nil, fmt.Errorf("%w: horizon %d, episodes %d, version %d, %d-byte model hash", ErrFormat, h, eps, ver, len(sum))
	}
	in := &Instance{Name: name, H: int(h), Episodes: int(eps), MuJoCo: int(ver)}
	copy(in.ModelSHA256[:], sum)
	if err := in.checkFields(); err != nil {
		return nil, nil, err
	}
	return in, spec, nil
}

// UnmarshalBinary decodes a MarshalBinary blob, checks it against the
// embedded model (ErrModel) and the linked library (ErrVersion), and opens
// the model. It never panics; on error the receiver is unchanged.
func (in *Instance) UnmarshalBinary(data []byte) error {
	out, spec, err := decode(data)
	if err != nil {
		return err
	}
	if want := spec.SHA256(); out.ModelSHA256 != want {
		return fmt.Errorf("%w: %s instance was generated from model sha256 %s, the embedded %s is %s",
			ErrModel, out.Name, hex.EncodeToString(out.ModelSHA256[:]), spec.File, hex.EncodeToString(want[:]))
	}
	v, _, err := Version()
	if err != nil {
		return err
	}
	if out.MuJoCo != v {
		return fmt.Errorf("%w: %s instance was generated with MuJoCo %d, linked is %d", ErrVersion, out.Name, out.MuJoCo, v)
	}
	if out.model, err = Open(out.Name); err != nil {
		return err
	}
	*in = *out
	return nil
}

// Env is the MuJoCo problem family as the stages see it: it generates,
// loads and evaluates instances (the algos.Env and algos.Generator
// interfaces, checked where the stages bind it), and names the native
// library it links (task.Native).
type Env struct{}

var _ task.Native = Env{}

// PlanGenerate reads the generation parameters and returns the generator:
//   - name: swimmer | halfcheetah (required);
//   - horizon: H, 1..MaxHorizon (required);
//   - episodes: the evaluation episodes, default DefaultEpisodes.
//
// The instance does not depend on the seed or any stream: it names the
// environment and pins the model (SHA-256) and the MuJoCo version.
func (Env) PlanGenerate(p *task.Params) func(src stream.Source) ([]byte, error) {
	name := p.String("name", task.Required(), task.OneOf(Names()...))
	h := p.Int("horizon", task.Required(), task.Min(1), task.Max(MaxHorizon))
	eps := p.Int("episodes", task.Default(DefaultEpisodes), task.Min(1), task.Max(MaxEpisodes))
	return func(stream.Source) ([]byte, error) {
		in, err := NewInstance(name, int(h), int(eps))
		if err != nil {
			return nil, err
		}
		return in.MarshalBinary()
	}
}

// Load decodes an instance (Instance.UnmarshalBinary).
func (Env) Load(data []byte) (*Instance, error) { return blob.Unmarshal[Instance](data) }

// Metrics names Evaluate's value: MetricReturn.
func (Env) Metrics() []string { return []string{MetricReturn} }

// Evaluate returns the mean return of the instance's evaluation episodes
// of the snapshot W (p×n row-major; the header is not used), with every
// episode's reset drawn from its own sub-stream of rng (EvalReturn).
func (Env) Evaluate(in *Instance, snap []float64, _ trajectory.Header, rng *rand.Rand) ([]float64, error) {
	if p, n := in.ActDim(), in.ObsDim(); len(snap) != p*n {
		return nil, fmt.Errorf("%w: %s: %d values, want W of %d×%d", ErrSnapshot, in.Name, len(snap), p, n)
	}
	r, err := in.EvalReturn(snap, rng)
	if err != nil {
		return nil, err
	}
	return []float64{r}, nil
}

// SamplesPerSecond implements task.RateHint: environment steps per second
// on one core of the 2-core development machine (BenchmarkEnvSteps, about
// 26k for HalfCheetah and 33k for Swimmer), for dry-run estimates.
func (Env) SamplesPerSecond() float64 { return 28000 }

// NativeVersions implements task.Native: "mujoco <version>" of the linked
// library (e.g. "mujoco 2.2.2"), or "mujoco unavailable" in a build
// without the mujoco tag.
func (Env) NativeVersions() []string {
	_, s, err := Version()
	if err != nil {
		return []string{"mujoco unavailable"}
	}
	return []string{"mujoco " + s}
}

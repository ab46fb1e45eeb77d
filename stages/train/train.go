package train

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"zorepro/algos"
	"zorepro/pipeline/task"
)

// Kind is the train stage kind.
type Kind struct {
	Envs    map[string]algos.Env
	Methods map[string]algos.Factory
}

// Name implements task.Kind.
func (k *Kind) Name() string { return "train" }

// Version implements task.Kind.
func (k *Kind) Version() int { return 1 }

// Slots implements task.Kind.
func (k *Kind) Slots() []task.Slot {
	return []task.Slot{{Name: "data", Required: true}, {Name: "hyper"}}
}

// own are the parameters the kind itself reads; the rest belong to the
// method.
var own = []string{"env", "method", "algo", "budget", "strict_budget", "snapshot_every", "snapshot_per_decade", "snapshot_every_samples", "budget_per", "use_tuned"}

// Plan implements task.Kind.
func (k *Kind) Plan(p *task.Params) task.Runner {
	r := &runner{}
	envName := p.String("env", task.Required(), task.OneOf(slices.Sorted(maps.Keys(k.Envs))...))
	// The method coordinate names a curve; "algo" names the algorithm when
	// they differ (e.g. method sgd_b64 with algo sgd and batch 64).
	curve := p.String("method", task.Required())
	methName := p.String("algo", task.Default(curve), task.OneOf(slices.Sorted(maps.Keys(k.Methods))...))
	r.budget = algos.Budget{Samples: p.Int("budget", task.Default(int64(0)), task.Min(0)), Strict: p.Bool("strict_budget", task.Default(false))}
	// budget_per names a coordinate the budget is multiplied by (MuJoCo:
	// 1e4 environment steps per unit of horizon, spec §4.3).
	if per := p.String("budget_per", task.Default("")); per != "" {
		if v, ok := p.Peek(per); !ok {
			p.Errorf("budget_per", "%q is not a parameter or coordinate of this task", per)
		} else if n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64); err != nil || n < 1 {
			p.Errorf("budget_per", "coordinate %s = %v is not a positive integer", per, v)
		} else {
			r.budget.Samples *= n
		}
	}
	r.schedule = algos.Schedule{
		Every:        p.Int("snapshot_every", task.Default(1), task.Min(0)),
		PerDecade:    int(p.Int("snapshot_per_decade", task.Default(0), task.Min(0))),
		EverySamples: p.Int("snapshot_every_samples", task.Default(0), task.Min(0)),
	}
	if r.schedule.Every == 0 && r.schedule.PerDecade == 0 && r.schedule.EverySamples == 0 {
		p.Errorf("snapshot_every", "one of snapshot_every, snapshot_per_decade and snapshot_every_samples must be positive")
	}
	env, ok1 := k.Envs[envName]
	meth, ok2 := k.Methods[methName]
	if !ok1 || !ok2 {
		return nil
	}
	// use_tuned: false keeps the stage's own hyperparameters even when a
	// tune stage is connected (e.g. a quick profile training with the
	// paper's chosen values while a small grid is still tuned beside them).
	r.useTuned = p.Bool("use_tuned", task.Default(true))
	r.env, r.meth = env, meth
	r.base = methodParams(p)
	r.cfg = meth.Configure(p)
	if bc, ok := r.cfg.(algos.Budgeted); ok && !p.Has("budget") {
		r.budget = bc.Budget()
	} else if r.budget.Samples == 0 {
		p.Errorf("budget", "missing (required: a positive number of samples)")
	}
	r.file, r.stage = "", p.Stage()
	return r
}

// methodParams returns the raw parameters that are not the kind's own.
func methodParams(p *task.Params) map[string]any {
	out := map[string]any{}
	for _, k := range p.Keys() {
		if !slices.Contains(own, k) {
			if v, ok := p.Peek(k); ok {
				out[k] = v
			}
		}
	}
	return out
}

type runner struct {
	useTuned    bool
	env         algos.Env
	meth        algos.Factory
	cfg         algos.Config
	base        map[string]any
	budget      algos.Budget
	schedule    algos.Schedule
	file, stage string
}

func (r *runner) Components() []any { return []any{r.env, r.meth} }

// Cost implements task.Costed: at most the budget.
func (r *runner) Cost() int64 { return r.budget.Samples }

func (r *runner) Run(ctx context.Context, env task.Env) error {
	data, err := env.Inputs("data")[0].Read("data")
	if err != nil {
		return err
	}
	inst, err := r.env.Load(data)
	if err != nil {
		return err
	}
	cfg := r.cfg
	if hy := env.Inputs("hyper"); len(hy) == 1 && r.useTuned {
		cfg, err = r.tuned(hy[0])
		if err != nil {
			return err
		}
	}
	m, err := r.meth.New(cfg, inst, env.Streams())
	if err != nil {
		return err
	}
	if pm, ok := m.(algos.Parallelizer); ok {
		pm.SetParallel(func(n int, fn func(i int) error) error { return env.Parallel(ctx, n, fn) })
	}
	rec := &Recorder{Env: env, Budget: r.budget.Samples}
	traj, err := algos.Run(ctx, m, r.budget, r.schedule, rec)
	if err != nil {
		return err
	}
	traj.Meta = cfg.Meta()
	out, err := traj.MarshalBinary()
	if err != nil {
		return err
	}
	return env.Output("trajectory", out)
}

// tuned decodes the method's configuration with a tune stage's choice
// laid over the stage's own parameters.
func (r *runner) tuned(in task.Input) (algos.Config, error) {
	data, err := in.Read("chosen.json")
	if err != nil {
		return nil, err
	}
	var chosen struct {
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal(data, &chosen); err != nil {
		return nil, fmt.Errorf("%s chosen.json: %w", in.Task(), err)
	}
	vals := maps.Clone(r.base)
	keys := slices.Sorted(maps.Keys(chosen.Params))
	for _, k := range keys {
		vals[k] = chosen.Params[k]
	}
	p := task.NewParams("chosen.json of "+in.Task(), r.stage, vals)
	cfg := r.meth.Configure(p)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Recorder adapts a task.Env to the algos driver.
type Recorder struct {
	Env    task.Env
	Budget int64
	last   int64
}

// Iteration implements algos.Recorder.
func (r *Recorder) Iteration(it task.Iter) {
	r.last = it.Iteration
	r.Env.Iteration(it)
	r.Env.Progress(it.Samples, r.Budget)
}

// CheckpointDue implements algos.Recorder.
func (r *Recorder) CheckpointDue(int64) bool { return r.Env.CheckpointDue() }

// Checkpoint implements algos.Recorder.
func (r *Recorder) Checkpoint(state []byte) error { return r.Env.Checkpoint(state, r.last) }

// Resume implements algos.Recorder.
func (r *Recorder) Resume() ([]byte, bool, error) {
	state, it, ok, err := r.Env.Resume()
	if ok {
		r.last = it
	}
	return state, ok, err
}

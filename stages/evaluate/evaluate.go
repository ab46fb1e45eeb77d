package evaluate

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"zorepro/algos"
	"zorepro/pipeline/task"
	"zorepro/pipeline/trajectory"
)

// Kind is the evaluate stage kind.
type Kind struct {
	// Envs are the environments by the name dag.yaml's "env" parameter
	// uses.
	Envs map[string]algos.Evaluator
}

// Name implements task.Kind.
func (k *Kind) Name() string { return "evaluate" }

// Version implements task.Kind.
func (k *Kind) Version() int { return 1 }

// Slots implements task.Kind.
func (k *Kind) Slots() []task.Slot {
	return []task.Slot{{Name: "trained", Required: true}, {Name: "data", Required: true}}
}

// Plan implements task.Kind.
func (k *Kind) Plan(p *task.Params) task.Runner {
	name := p.String("env", task.Required(), task.OneOf(slices.Sorted(maps.Keys(k.Envs))...))
	env, ok := k.Envs[name]
	if !ok {
		return nil
	}
	return &runner{env: env}
}

type runner struct{ env algos.Evaluator }

func (r *runner) Components() []any { return []any{r.env.Component()} }

func (r *runner) Run(ctx context.Context, env task.Env) error {
	inst, err := r.env.LoadInput(env.Inputs("data")[0])
	if err != nil {
		return err
	}
	raw, err := env.Inputs("trained")[0].Read("trajectory")
	if err != nil {
		return err
	}
	var traj trajectory.Trajectory
	if err := traj.UnmarshalBinary(raw); err != nil {
		return fmt.Errorf("trajectory of %s: %w", env.Inputs("trained")[0].Task(), err)
	}
	names := r.env.Metrics()
	vals := make([][]float64, len(traj.Points))
	src := env.Streams()
	err = env.Parallel(ctx, len(traj.Points), func(i int) error {
		pt := traj.Points[i]
		v, err := inst.Evaluate(pt.Params, traj.Header, src.Rand("eval", uint64(pt.Iteration)))
		if err != nil {
			return fmt.Errorf("iteration %d: %w", pt.Iteration, err)
		}
		if len(v) != len(names) {
			return fmt.Errorf("iteration %d: %d metrics, want %d", pt.Iteration, len(v), len(names))
		}
		vals[i] = v
		return nil
	})
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("iteration,samples," + strings.Join(names, ",") + "\n")
	for i, pt := range traj.Points {
		it := task.Iter{Iteration: pt.Iteration, Samples: pt.Samples, Digest: trajectory.Digest(pt.Params)}
		fields := []string{strconv.FormatInt(pt.Iteration, 10), strconv.FormatInt(pt.Samples, 10)}
		for j, n := range names {
			it.Metrics = append(it.Metrics, task.Metric{Name: n, Value: vals[i][j]})
			fields = append(fields, task.FormatFloat(vals[i][j]))
		}
		env.Iteration(it)
		b.WriteString(strings.Join(fields, ",") + "\n")
	}
	return env.Output("curve.csv", b.Bytes())
}

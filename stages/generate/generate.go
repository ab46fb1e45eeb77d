package generate

import (
	"context"
	"maps"
	"slices"

	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Kind is the generate stage kind.
type Kind struct {
	// Generators are the environments whose instances are generated, by
	// the name dag.yaml's "env" parameter uses.
	Generators map[string]algos.Generator
}

// Name implements task.Kind.
func (k *Kind) Name() string { return "generate" }

// Version implements task.Kind.
func (k *Kind) Version() int { return 1 }

// Slots implements task.Kind: generate takes no inputs.
func (k *Kind) Slots() []task.Slot { return nil }

// Plan implements task.Kind.
func (k *Kind) Plan(p *task.Params) task.Runner {
	name := p.String("env", task.Required(), task.OneOf(slices.Sorted(maps.Keys(k.Generators))...))
	env, ok := k.Generators[name]
	if !ok {
		return nil
	}
	return &runner{env: env, gen: env.PlanGenerate(p)}
}

type runner struct {
	env algos.Generator
	gen func(src stream.Source) ([]byte, error)
}

func (r *runner) Components() []any { return []any{r.env} }

func (r *runner) Run(ctx context.Context, env task.Env) error {
	// Without a seed coordinate (data that is not random, e.g. MNIST) the
	// streams have root 0.
	data, err := r.gen(env.Streams())
	if err != nil {
		return err
	}
	return env.Output("data", data)
}

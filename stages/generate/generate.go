package generate

import (
	"context"
	"slices"
	"sort"

	"zorepro/algos"
	"zorepro/pipeline/stream"
	"zorepro/pipeline/task"
)

// Kind is the generate stage kind.
type Kind struct {
	Envs map[string]algos.Env
}

// Name implements task.Kind.
func (k *Kind) Name() string { return "generate" }

// Version implements task.Kind.
func (k *Kind) Version() int { return 1 }

// Slots implements task.Kind: generate takes no inputs.
func (k *Kind) Slots() []task.Slot { return nil }

// Plan implements task.Kind.
func (k *Kind) Plan(p *task.Params) task.Runner {
	var names []string
	for n, e := range k.Envs {
		if _, ok := e.(algos.Generator); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	name := p.String("env", task.Required(), task.OneOf(names...))
	if !slices.Contains(names, name) {
		return nil
	}
	env := k.Envs[name]
	gen := env.(algos.Generator).PlanGenerate(p)
	return &runner{env: env, gen: gen}
}

type runner struct {
	env algos.Env
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

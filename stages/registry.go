package stages

import (
	"zorepro/algos"
	"zorepro/algos/ars"
	"zorepro/algos/arsv1"
	"zorepro/algos/exact"
	"zorepro/algos/mnistars"
	"zorepro/algos/mnistreinforce"
	"zorepro/algos/mnistsgd"
	"zorepro/algos/newton"
	"zorepro/algos/nreinforce"
	"zorepro/algos/olrs/actionrs"
	"zorepro/algos/olrs/paramrs"
	"zorepro/algos/reinforce"
	"zorepro/algos/sgd"
	"zorepro/envs/linreg"
	"zorepro/envs/lqr"
	"zorepro/envs/mnist"
	"zorepro/envs/mujoco"
	"zorepro/envs/olr"
	"zorepro/pipeline/task"
	"zorepro/stages/evaluate"
	"zorepro/stages/generate"
	"zorepro/stages/plot"
	"zorepro/stages/train"
	"zorepro/stages/tune"
)

// Envs are the problem families, by the name dag.yaml uses.
func Envs() map[string]algos.Env {
	return map[string]algos.Env{
		"linreg": linreg.Env{},
		"lqr":    lqr.Env{},
		"mnist":  mnist.Env{},
		"mujoco": mujoco.Env{},
		"olr":    olr.Env{},
	}
}

// Methods are the algorithms, by the name dag.yaml uses.
func Methods() map[string]algos.Factory {
	return map[string]algos.Factory{
		"actionrs":       actionrs.Factory{},
		"ars":            ars.Factory{},
		"arsv1":          arsv1.Factory{},
		"exact":          exact.Factory{},
		"mnistars":       mnistars.Factory{},
		"mnistreinforce": mnistreinforce.Factory{},
		"mnistsgd":       mnistsgd.Factory{},
		"newton":         newton.Factory{},
		"nreinforce":     nreinforce.Factory{},
		"paramrs":        paramrs.Factory{},
		"reinforce":      reinforce.Factory{},
		"sgd":            sgd.Factory{},
	}
}

// Kinds are the stage kinds, by name.
func Kinds() map[string]task.Kind {
	envs, methods := Envs(), Methods()
	kinds := []task.Kind{
		&generate.Kind{Envs: envs},
		&tune.Kind{Envs: envs, Methods: methods},
		&train.Kind{Envs: envs, Methods: methods},
		&evaluate.Kind{Envs: envs},
		&plot.Kind{},
	}
	out := map[string]task.Kind{}
	for _, k := range kinds {
		out[k.Name()] = k
	}
	return out
}

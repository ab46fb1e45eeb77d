package stages

import (
	"zorepro/algos"
	"zorepro/algos/ars"
	"zorepro/algos/episodic"
	"zorepro/algos/exact"
	"zorepro/algos/newton"
	"zorepro/algos/nreinforce"
	"zorepro/algos/olrs"
	"zorepro/algos/olrs/actionrs"
	"zorepro/algos/olrs/paramrs"
	"zorepro/algos/reinforce"
	"zorepro/algos/sgd"
	"zorepro/envs/linreg"
	"zorepro/envs/lqr"
	"zorepro/envs/mnist"
	"zorepro/envs/mujoco"
	"zorepro/envs/mujoco/locomotion"
	"zorepro/envs/olr"
	"zorepro/pipeline/task"
	"zorepro/stages/baseline"
	"zorepro/stages/evaluate"
	"zorepro/stages/generate"
	"zorepro/stages/plot"
	"zorepro/stages/report"
	"zorepro/stages/train"
	"zorepro/stages/tune"
)

// The LQR's stationarity stop (spec §5.2) reaches ARS V1 and ExAct through
// episodic.Converger, an interface they look for at run time: check here
// that the instance has it.
var _ episodic.Converger = (*lqr.Instance)(nil)

// MNIST's instance (55 MB) is loaded once per process and shared by its
// tasks.
var _ algos.SharedLoader[*mnist.Instance] = mnist.Env{}

// Trainers are the algorithms each environment can train, by the names
// dag.yaml uses ("env", then "algo"). Each entry binds an algorithm to an
// environment's instance type; a problem interface the instances do not
// satisfy is a compile error here.
func Trainers() algos.Trainers {
	type (
		lin = *linreg.Instance
		ctl = *lqr.Instance
		img = *mnist.Instance
		sim = *mujoco.Instance
		reg = *olr.Instance
	)
	return algos.Trainers{
		"linreg": {
			"ars":        algos.Bind[lin, ars.Config](linreg.Env{}, ars.Factory[lin, *linreg.Queries]{}),
			"newton":     algos.Bind[lin, newton.Config](linreg.Env{}, newton.Factory[lin]{}),
			"nreinforce": algos.Bind[lin, nreinforce.Config](linreg.Env{}, nreinforce.Factory[lin, *linreg.GaussianPolicy]{}),
			"reinforce":  algos.Bind[lin, reinforce.Config](linreg.Env{}, reinforce.Factory[lin, *linreg.GaussianPolicy]{}),
			"sgd":        algos.Bind[lin, sgd.Config](linreg.Env{}, sgd.Factory[lin, *linreg.SquaredLoss]{}),
		},
		"lqr": {
			"arsv1": algos.Bind[ctl, ars.V1Config](lqr.Env{}, ars.V1Factory[ctl]{}),
			"exact": algos.Bind[ctl, exact.Config](lqr.Env{}, exact.Factory[ctl]{}),
		},
		"mnist": {
			"ars":       algos.Bind[img, ars.Config](mnist.Env{}, ars.Factory[img, *mnist.Queries]{}),
			"reinforce": algos.Bind[img, reinforce.Config](mnist.Env{}, reinforce.Factory[img, *mnist.SoftmaxPolicy]{}),
			"sgd":       algos.Bind[img, sgd.Config](mnist.Env{}, sgd.Factory[img, *mnist.CrossEntropyLoss]{}),
		},
		"mujoco": {
			"arsv1": algos.Bind[sim, ars.V1Config](mujoco.Env{}, ars.V1Factory[sim]{}),
			"exact": algos.Bind[sim, exact.Config](mujoco.Env{}, exact.Factory[sim]{}),
		},
		"olr": {
			"actionrs": algos.Bind[reg, olrs.Config](olr.Env{}, actionrs.Factory[reg, *olr.Moments]{}),
			"paramrs":  algos.Bind[reg, olrs.Config](olr.Env{}, paramrs.Factory[reg, *olr.Moments]{}),
		},
		// gym's other -v2 bodies (the crossover experiment), each its own
		// environment so that its tasks' code is its package's.
		"hopper": {
			"arsv1": algos.Bind[sim, ars.V1Config](locomotion.NewHopper(), ars.V1Factory[sim]{}),
			"exact": algos.Bind[sim, exact.Config](locomotion.NewHopper(), exact.Factory[sim]{}),
		},
		"walker2d": {
			"arsv1": algos.Bind[sim, ars.V1Config](locomotion.NewWalker2d(), ars.V1Factory[sim]{}),
			"exact": algos.Bind[sim, exact.Config](locomotion.NewWalker2d(), exact.Factory[sim]{}),
		},
		"ant": {
			"arsv1": algos.Bind[sim, ars.V1Config](locomotion.NewAnt(), ars.V1Factory[sim]{}),
			"exact": algos.Bind[sim, exact.Config](locomotion.NewAnt(), exact.Factory[sim]{}),
		},
		"humanoid": {
			"arsv1": algos.Bind[sim, ars.V1Config](locomotion.NewHumanoid(), ars.V1Factory[sim]{}),
			"exact": algos.Bind[sim, exact.Config](locomotion.NewHumanoid(), exact.Factory[sim]{}),
		},
	}
}

// Evaluators are the environments by the name dag.yaml's "env" uses.
func Evaluators() map[string]algos.Evaluator {
	return map[string]algos.Evaluator{
		"linreg": algos.Evaluate[*linreg.Instance](linreg.Env{}),
		"lqr":    algos.Evaluate[*lqr.Instance](lqr.Env{}),
		"mnist":  algos.Evaluate[*mnist.Instance](mnist.Env{}),
		"mujoco": algos.Evaluate[*mujoco.Instance](mujoco.Env{}),
		"olr":    algos.Evaluate[*olr.Instance](olr.Env{}),

		"hopper":   algos.Evaluate[*mujoco.Instance](locomotion.NewHopper()),
		"walker2d": algos.Evaluate[*mujoco.Instance](locomotion.NewWalker2d()),
		"ant":      algos.Evaluate[*mujoco.Instance](locomotion.NewAnt()),
		"humanoid": algos.Evaluate[*mujoco.Instance](locomotion.NewHumanoid()),
	}
}

// Generators are the environments whose instances the generate stage
// makes, by the name dag.yaml's "env" uses.
func Generators() map[string]algos.Generator {
	return map[string]algos.Generator{
		"linreg": linreg.Env{},
		"lqr":    lqr.Env{},
		"mnist":  mnist.Env{},
		"mujoco": mujoco.Env{},
		"olr":    olr.Env{},

		"hopper":   locomotion.NewHopper(),
		"walker2d": locomotion.NewWalker2d(),
		"ant":      locomotion.NewAnt(),
		"humanoid": locomotion.NewHumanoid(),
	}
}

// Kinds are the stage kinds, by name.
func Kinds() map[string]task.Kind {
	trainers := Trainers()
	kinds := []task.Kind{
		&generate.Kind{Generators: Generators()},
		&tune.Kind{Trainers: trainers},
		&train.Kind{Trainers: trainers},
		&evaluate.Kind{Envs: Evaluators()},
		&baseline.Kind{Trainers: trainers},
		&plot.Kind{},
		report.Kind{},
	}
	out := map[string]task.Kind{}
	for _, k := range kinds {
		out[k.Name()] = k
	}
	return out
}

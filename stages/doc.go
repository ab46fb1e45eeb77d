// Package stages wires the stage kinds (generate, tune, train, evaluate,
// plot) to the environments and algorithms they can run. Each kind is its
// own package, and so is each environment and algorithm, so that a task's
// code identity covers exactly the packages it runs: editing the plotting
// code reruns plots only, editing ARS reruns what uses ARS.
//
// Adding a method or an environment is one line here plus its package;
// adding a dimension, a seed or a method to an experiment is a line of
// dag.yaml.
package stages

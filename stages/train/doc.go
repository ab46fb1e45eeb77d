// Package train is the train stage kind: it runs one algorithm on one
// problem instance to a sample budget through the algos driver, records
// every iteration, checkpoints so that an interrupted task resumes with
// identical results, and publishes the parameter trajectory (output
// "trajectory") for the evaluate stage. Hyperparameters come from the
// stage's params, overridden by a connected tune stage's choice. The
// "method" parameter (usually a matrix coordinate) names the curve and,
// unless "algo" is given, the algorithm.
package train

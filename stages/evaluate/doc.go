// Package evaluate is the evaluate stage kind: it computes the
// environment's metrics (e.g. test loss on a fresh batch and the exact
// population loss) for every snapshot of a trained trajectory, each from
// its own evaluation stream, records one event per snapshot and publishes
// the learning curve as "curve.csv" (iteration,samples,<metric>...).
package evaluate

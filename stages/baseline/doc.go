// Package baseline is the baseline stage kind: it evaluates the policy a
// method starts from, before any update, as the evaluate kind evaluates a
// trained snapshot (the environment's metrics, from the task's own
// evaluation stream), records it as one event at iteration 0 and publishes
// it as a one-row "curve.csv" (iteration,samples,<metric>...: 0, 0, ...).
//
// A trained curve starts after the first update, so a figure cannot show
// from it what learning added. On the locomotion bodies that matters: they
// run H steps with no early termination, so the alive bonus pays a body
// that stands still, or lies where it fell, nearly H (Humanoid nearly 5H),
// and ARS and ExAct both start at W = 0. The crossover figure draws this
// kind's curve beside theirs: the return a method must beat to have
// learned anything (issue 44).
//
// Its parameters are a train task's ("env", "algo" or the "method"
// coordinate, the algorithm's hyperparameters): the method is built on the
// instance exactly as training builds it, and never stepped. A method
// whose starting policy is random (linear regression's w0) draws it from
// the baseline task's own streams: the same distribution as a training
// task's, not its draw.
package baseline

// Package audit checks a figure against the runs behind it: for every
// plotted point it finds the evaluate events of the point's seeds (through
// the plot task's recorded inputs, package provenance), recomputes the
// mean and band with the plot stage's own arithmetic (plot.PointOf) in the
// figure's seed order, and compares the result bit for bit with the
// figure's CSVs. For one point it also follows each seed's chain: the
// evaluate event, the train task with its event at that iteration and the
// snapshot in its trajectory, the tune task whose choice it used, and the
// data.
//
// It reads only: the event log and the store are never written. It is not
// a stage kind and in no task's code identity, so editing it reruns
// nothing; cmd/pipeline's audit command prints its Report.
package audit

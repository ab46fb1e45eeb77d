// Package interim computes the reproduction report's claims from what a
// store records now, for a run still under way: `pipeline report
// --interim` prints it and the browser view (stages/web) shows it as
// figures and verdicts fill in.
//
// A figure whose plot task is recorded for this binary and dag.yaml is read
// as recorded; one whose inputs all are is plotted into a temporary
// scratch store; the claims of the others are pending, with how many of
// their figure's inputs are recorded. Nothing is written to the store, its
// log or a figures directory. Like stages/audit it is forensics, not a
// stage kind, and in no task's identity.
package interim

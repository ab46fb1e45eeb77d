// Package report checks the paper's claims against the recorded runs.
//
// A claim is data (Claim): a sentence from the paper with its section,
// the figure it is about, the statistic that tests it and the threshold.
// Statistics are computed from a figure's per-seed numbers (the plot
// stage's "<figure>-seeds.csv", which pipeline audit traces back to the
// evaluate events), so every number is deterministic, bit for bit.
//
// # Points
//
// A claim looks at each curve's value at one x of a panel: "last" (the
// curve's own last x), "common" (the largest x that every curve of the
// claim reaches in the panel, a curve one batch past it counting),
// "matched" (one x for every panel, for comparisons across panels) or a
// number (the last x at or below it); "over: x" claims look at the keys of
// one panel instead. Seeds missing a point are left out of that point.
//
// # Intervals
//
// Every statistic comes with a 95% interval whose coverage holds at the n
// it is used with (intervals_test.go checks it by seeded simulation at 2,
// 3, 5 and 10 seeds): Student t for means, paired t over shared seeds (a
// seed fixes the problem instance) and Welch t otherwise for differences,
// Fieller for ratios, Clopper–Pearson for fractions of seeds and sign
// counts, order statistics for medians, t over per-seed least-squares
// slopes for slopes and trends. Nothing is resampled: the same numbers
// give the same interval, bit for bit.
//
// # Verdicts
//
// A claim holds when the whole interval is on the claimed side of its
// threshold, is contradicted when the whole interval is on the other side,
// and is inconclusive otherwise: the seeds there are cannot decide it (or
// a statistic cannot be computed, e.g. no seeds). A difference or order
// claim may make the exact paired sign test its primary statistic
// (Claim.Test); paired differences carry their sign count either way. A
// claim with a premise (Claim.Premise: two curves must differ for a trend
// of their ratio to mean anything) that the data do not meet is
// uninformative; a scaling claim applies its premise body by body (a body
// that fails it takes no part, and fewer than two left make the claim
// uninformative). A claim about points the profile does not compute (x
// values outside its matrix) is not run in this profile. Statistics
// without a claimed side (a value, a reported slope) are reported, without
// a verdict; a mean over runs stopped at a cap is a lower bound, without
// an interval. Every claim that does not hold carries an explanation with
// the measured evidence (Explain), and a bound that holds by orders of
// magnitude says so.
package report

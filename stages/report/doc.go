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
// claim reaches in the panel, e.g. "the largest common sample count") or
// a number (the last x at or below it). Seeds missing a point are left out
// of that point.
//
// # Intervals
//
// Every statistic comes with a 95% percentile-bootstrap interval over
// seeds: Reps replicates. When the curves and keys of a claim share their
// seeds (as the methods and sizes of one experiment do: a seed fixes the
// problem instance), a replicate resamples seeds with replacement and keeps
// each seed's values together across curves and keys (a paired
// bootstrap); otherwise each key is resampled on its own, and each curve
// on its own where the curves do not share seeds. The interval's ends are the replicates'
// empirical quantiles at 2.5% and 97.5% (type 7: linear interpolation
// between order statistics). Replicates draw from one named stream, so an
// interval is the same on every run.
//
// # Verdicts
//
// A claim holds when the whole interval is on the claimed side of its
// threshold, fails when the whole interval is on the other side, and is
// inconclusive at this profile's scale otherwise (or when a statistic
// cannot be computed, e.g. no seeds). Statistics that are only reported
// (a value) carry no verdict.
package report

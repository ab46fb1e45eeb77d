// Package crossing finds where one method overtakes its rivals along a
// grid of horizons, and the power laws that pass through those places
// across bodies: issue 44's crossover experiment, where the theory puts
// the horizon at which parameter-space search (ARS) overtakes action-space
// search (ExAct) at H* ∝ (d/p)^½.
//
// A body's crossover horizon H* is bracketed, not estimated from a model:
// at each horizon of its grid the paired t interval of the leader's
// per-seed value minus each rival's, at level 1 − α, says whether the
// leader is clearly ahead of every rival, clearly behind one, or neither.
// If the leader's true advantage changes sign once along the grid (behind
// below H*, ahead above), then H* lies above every horizon where the
// leader is clearly behind and at or below every horizon where it is
// clearly ahead: the bracket (Lo, Hi]. With α = 0.05 divided by the number
// of intervals taken over all bodies (Bonferroni), every body's bracket
// holds its H* with joint probability at least 95%.
//
// The power laws log H* = c + s·log X (X the body's d/p) through every
// bracket form an interval of slopes s (Slopes): it holds the true
// exponent whenever every bracket holds its H*, so with at least the same
// 95%, if H* follows such a law. An empty set says no power law passes
// through the brackets. The tests check the coverage by seeded
// simulation at the experiment's size (10 seeds, 8 horizons, 6 bodies).
//
// A Premise keeps out a body whose methods do not differ at all: the
// mean of the leader over the first rival must leave a range (e.g.
// [0.999, 1.001]) at one horizon at least. Paired intervals can separate
// methods that stand still by a consistent 10⁻⁵ of the return, and such a
// bracket would say nothing about learning; the body's bracket then bounds
// nothing (Bracket.Unused says why). The premise looks at means, not at
// the intervals, so the Bonferroni division still counts its horizons.
//
// Both the plot (the summary figure) and the report (its claims) compute
// the brackets here, so the figure draws what the verdicts judge.
package crossing

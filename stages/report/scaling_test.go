package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// scalingTable has three bodies at x = 1, 4 and 16 whose true crossover
// horizons are 1.5·√x (1.5, 3, 6): ARS's advantage over ExAct is
// 40·log(H/H*) at H = 1, 2, 4, 8, 16, with paired noise −1, 0, +1.
func scalingTable(t *testing.T, hstar func(x float64) float64) Table {
	var lines []string
	for _, x := range []float64{1, 4, 16} {
		for _, h := range []float64{1, 2, 4, 8, 16} {
			adv := 40 * math.Log(h/hstar(x))
			for s, noise := range []float64{-1, 0, 1} {
				lines = append(lines, fmt.Sprintf("b%v arsv1 %d %v %v", x, s+1, h, 100+adv+noise/2), fmt.Sprintf("b%v exact %d %v %v", x, s+1, h, 100-noise/2))
			}
		}
	}
	return table(t, lines...)
}

// Known answers: the brackets are (1, 2], (2, 4] and (4, 8], so the lines
// through all three have slopes from 0.25 to 0.75 (by hand: the
// steepest runs from (1, 1) to (16, 8), the shallowest from (1, 2) to
// (16, 4)), and the points (1.5, 3, 6) lie on slope ½ exactly.
func TestScaling(t *testing.T) {
	tb := scalingTable(t, func(x float64) float64 { return 1.5 * math.Sqrt(x) })
	claim := func(expect string, thr float64) Claim {
		return Claim{Stat: StatScaling, Curves: []string{"arsv1", "exact"}, Expect: expect, Threshold: thr, XLabel: "d/p",
			PanelX: map[string]float64{"b1": 1, "b4": 4, "b16": 16}}
	}
	r := Evaluate(claim("~", 0.5), tb)
	s := r.Summary
	if r.Verdict != Holds || s == nil || math.Abs(s.Lo-0.25) > 1e-12 || math.Abs(s.Hi-0.75) > 1e-12 || math.Abs(s.Value-0.5) > 1e-9 {
		t.Fatalf("consistent with ½: %s %+v %s", r.Verdict, s, r.Problem)
	}
	want := map[string][3]float64{"b1": {1, 2, 1.5}, "b4": {2, 4, 3}, "b16": {4, 8, 6}}
	for _, f := range r.Findings {
		w := want[f.Key]
		if f.Lo != w[0] || f.Hi != w[1] || math.Abs(f.Value-w[2]) > 1e-9 || f.Verdict != Reported || f.Seeds != 3 || !strings.HasPrefix(f.X, "d/p = ") {
			t.Errorf("bracket %s: %+v, want (%v, %v] at %v", f.Key, f, w[0], w[1], w[2])
		}
	}
	if r := Evaluate(claim(">", 0), tb); r.Verdict != Holds {
		t.Errorf("grows: %s", r.Verdict)
	}
	r = Evaluate(claim("~", 1), tb)
	if r.Verdict != Contradicted || !strings.Contains(Explain(r), "[0.25, 0.75]") || !strings.Contains(Explain(r), "which excludes 1") {
		t.Errorf("consistent with 1: %s, %q", r.Verdict, Explain(r))
	}
	// H* the same on every body: slopes from −0.25 to 0.25, so "grows"
	// is inconclusive and ½ is excluded.
	flat := scalingTable(t, func(float64) float64 { return 3 })
	if r := Evaluate(claim(">", 0), flat); r.Verdict != Inconclusive || !strings.Contains(Explain(r), "cannot decide") {
		t.Errorf("flat, grows: %s %+v %q", r.Verdict, r.Summary, Explain(r))
	}
	if r := Evaluate(claim("~", 0.5), flat); r.Verdict != Contradicted {
		t.Errorf("flat, consistent with ½: %s %+v", r.Verdict, r.Summary)
	}
	// A panel without a value on the x axis, and too few panels.
	c := claim(">", 0)
	delete(c.PanelX, "b16")
	if r := Evaluate(c, tb); r.Verdict != Inconclusive || !strings.Contains(r.Problem, `panel "b16" has no value in panel_x`) {
		t.Errorf("missing panel_x: %s %q", r.Verdict, r.Problem)
	}
	c.Keys = []string{"b1"}
	if r := Evaluate(c, tb); !strings.Contains(r.Problem, "at least two panels") {
		t.Errorf("one panel: %q", r.Problem)
	}
}

// An advantage that changes sign twice on one body has no single
// crossover: the claim cannot be computed, and says where.
func TestScalingTwoCrossings(t *testing.T) {
	var lines []string
	for _, b := range []string{"a", "b"} {
		for i, h := range []float64{1, 2, 4, 8} {
			d := []float64{-20, 20, -20, 20}[i]
			if b == "b" {
				d = []float64{-20, -20, 20, 20}[i]
			}
			for s, noise := range []float64{-1, 0, 1} {
				lines = append(lines, fmt.Sprintf("%s arsv1 %d %v %v", b, s+1, h, 100+d+noise/2), fmt.Sprintf("%s exact %d %v %v", b, s+1, h, 100-noise/2))
			}
		}
	}
	r := Evaluate(Claim{Stat: StatScaling, Curves: []string{"arsv1", "exact"}, Expect: ">", PanelX: map[string]float64{"a": 1, "b": 2}}, table(t, lines...))
	if r.Verdict != Inconclusive || !strings.Contains(r.Problem, "on a arsv1 is clearly behind at 4 and clearly ahead at 2") || !strings.Contains(r.Problem, "changes sign more than once") {
		t.Errorf("%s %q", r.Verdict, r.Problem)
	}
}

// A body whose methods never differ by more than a hair (a consistent
// 10⁻⁵ of the return, as Humanoid's do where every method's best is to
// stand still) can still be clearly decided by paired intervals; its
// bracket would say nothing about learning. With a premise (the mean
// ratio must leave [0.999, 1.001] at some H) it takes no part: the claim
// comes out as if that body had decided nothing (its intervals still
// count in the Bonferroni division), and its finding says why; with one
// body left the claim is uninformative and says which failed.
func TestScalingPremise(t *testing.T) {
	base := scalingTable(t, func(x float64) float64 { return 1.5 * math.Sqrt(x) })
	still := func(scale float64) Table {
		var lines []string
		for _, h := range []float64{1, 2, 4, 8, 16} {
			adv := scale * math.Log(h/1.2) // crosses at 1.2 on a body at x = 64: against every slope above 0
			for s, noise := range []float64{-1, 0, 1} {
				lines = append(lines, fmt.Sprintf("still arsv1 %d %v %v", s+1, h, 170+adv+noise*1e-5), fmt.Sprintf("still exact %d %v %v", s+1, h, 170-noise*1e-5))
			}
		}
		return append(slices.Clone(base), table(t, lines...)...)
	}
	tb, flat := still(0.002), still(0)
	px := map[string]float64{"b1": 1, "b4": 4, "b16": 16, "still": 64}
	c := Claim{Stat: StatScaling, Curves: []string{"arsv1", "exact"}, Expect: "~", Threshold: 0.5, XLabel: "d/p", PanelX: px}
	if r := Evaluate(c, tb); r.Verdict != Contradicted {
		t.Fatalf("without a premise the still body's bracket (1, 2] at x = 64 leaves no line of slope ½ through every bracket: %s %+v", r.Verdict, r.Summary)
	}
	want := Evaluate(c, flat) // the still body decided nothing: slopes [0, 1]
	if want.Verdict != Inconclusive || want.Summary == nil || want.Summary.Lo != 0 || want.Summary.Hi != 1 {
		t.Fatalf("the still body without an advantage: %s %+v", want.Verdict, want.Summary)
	}
	c.Premise = Premise{Text: "the two methods' mean returns differ by more than 0.1% at some H", RatioWithin: [2]float64{0.999, 1.001}}
	r := Evaluate(c, tb)
	if r.Verdict != want.Verdict || r.Summary == nil || r.Summary.Lo != want.Summary.Lo || r.Summary.Hi != want.Summary.Hi || r.Summary.Value != want.Summary.Value {
		t.Fatalf("with the premise: %s %+v, want %+v (%q)", r.Verdict, r.Summary, want.Summary, r.Problem)
	}
	for _, f := range r.Findings {
		if (f.Key == "still") != (f.Verdict == Uninformative) {
			t.Errorf("finding %s: %s", f.Key, f.Verdict)
		}
		if f.Key == "still" && (!strings.Contains(f.Method, "not used: its premise, that the two methods' mean returns differ") || !strings.Contains(f.Method, "which never leaves [0.999, 1.001]")) {
			t.Errorf("the still body's finding does not say why it is not used: %q", f.Method)
		}
	}
	// Only b1 and still: one body takes part.
	c.Keys = []string{"b1", "still"}
	r = Evaluate(c, tb)
	if r.Verdict != Uninformative || r.Summary != nil || !strings.Contains(Explain(r), "1 of 2 panels take part, fewer than the two a slope needs: on still the mean arsv1 / exact is 0.99999") {
		t.Errorf("one body left: %s %+v %q", r.Verdict, r.Summary, Explain(r))
	}
}

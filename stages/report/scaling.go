package report

import (
	"fmt"
	"math"
	"strings"

	"zorepro/stages/plot/crossing"
)

// MethodBracket is how a scaling claim's intervals are made.
const MethodBracket = "brackets of paired t intervals (Bonferroni over every horizon of every panel and every rival), and the lines through all of them"

// scaling computes a scaling claim: per panel (a body), the bracket of
// the horizon from which curves[0] is ahead of every other curve
// (crossing.Find, each interval at 1 − 0.05/(keys·rivals) so that all
// brackets hold together with at least 95%), then the slopes s of the
// lines log H* = c + s·log PanelX[panel] through every bracket
// (crossing.Slopes) with the least-squares slope through the brackets'
// points as its value. It returns the panels' findings (reported), the
// summary and its verdict: for ">" the slopes all above Threshold hold
// and all at or below it contradict; for "~" Threshold outside the
// slopes contradicts, inside them with 0 outside holds (consistent with
// the exponent and not with none), inside with 0 too is inconclusive.
// With a premise (ratio_within), a panel whose mean ratio of curves[0]
// over curves[1] never leaves it takes no part (its finding is
// uninformative and says why), and fewer than two panels that do leave
// the claim uninformative.
func scaling(c Claim, t Table) ([]Finding, *Finding, Verdict, error) {
	panels := c.keep(t.Panels())
	if len(panels) < 2 {
		return nil, nil, Inconclusive, fmt.Errorf("a scaling claim needs at least two panels, got %d", len(panels))
	}
	xs := make([]float64, len(panels))
	for i, panel := range panels {
		x, ok := c.PanelX[panel]
		if !ok {
			return nil, nil, Inconclusive, fmt.Errorf("panel %q has no value in panel_x", panel)
		}
		xs[i] = x
	}
	var premise crossing.Premise
	if c.Premise.set() {
		premise = crossing.Premise{Lo: c.Premise.RatioWithin[0], Hi: c.Premise.RatioWithin[1]}
	}
	an, err := crossing.Analyze(t, panels, xs, c.Curves, premise)
	if err != nil {
		return nil, nil, Inconclusive, fmt.Errorf("%w: %v", ErrTable, err)
	}
	label := "crossover horizon of " + c.Curves[0] + " over " + strings.Join(c.Curves[1:], ", ")
	method := fmt.Sprintf("bracket of paired t intervals at %s each (Bonferroni: %d horizons × %d rival(s))", num(1-an.Alpha), an.Horizons, an.Rivals)
	var out []Finding
	n := math.MaxInt
	var broken []string
	for i, b := range an.Brackets {
		n = min(n, b.Seeds)
		f := Finding{Key: panels[i], Label: label, Value: b.Point, Lo: b.Lo, Hi: b.Hi, Seeds: b.Seeds, Method: method, X: c.xLabel() + " = " + num(xs[i]), Verdict: Reported}
		if b.Unused != "" {
			f.Verdict, f.Method = Uninformative, "not used: its premise, that "+c.Premise.Text+", does not hold: "+b.Unused
			out = append(out, f)
			continue
		}
		if !b.Consistent() {
			f.Verdict = Inconclusive
			broken = append(broken, fmt.Sprintf("on %s %s is clearly behind at %s and clearly ahead at %s", panels[i], c.Curves[0], num(b.Lo), num(b.Hi)))
		}
		out = append(out, f)
	}
	if len(broken) > 0 {
		return out, nil, Inconclusive, fmt.Errorf("%s: its advantage changes sign more than once, so there is no single crossover horizon", strings.Join(broken, "; "))
	}
	if used := an.Used(); used < 2 {
		return out, nil, Uninformative, nil
	}
	lo, hi := an.Lo, an.Hi
	slope, _ := crossing.Fit(xs, an.Brackets, c.Threshold)
	s := &Finding{Key: strings.Join(panels, ", "), Label: "log-log slope of the crossover horizon against " + c.xLabel(), Value: slope, Lo: lo, Hi: hi, Seeds: n,
		Method: "the slopes of the lines through every panel's bracket (at least 95% joint coverage if each panel's advantage changes sign once); the value is the least-squares slope through the brackets' points"}
	if !an.OK {
		s.Lo, s.Hi = math.NaN(), math.NaN()
		s.Verdict = Inconclusive
		if c.Expect == "~" {
			s.Verdict = Contradicted // no power law at all, so none with this exponent
		}
		return out, s, s.Verdict, nil
	}
	switch c.Expect {
	case "~":
		switch {
		case !(lo <= c.Threshold && c.Threshold <= hi):
			s.Verdict = Contradicted
		case lo > 0 || hi < 0:
			s.Verdict = Holds
		default:
			s.Verdict = Inconclusive
		}
	default:
		s.Verdict = judge(Interval{Value: slope, Lo: lo, Hi: hi}, c.Expect, c.Threshold, 0)
	}
	return out, s, s.Verdict, nil
}

// xLabel names a scaling claim's panel values ("d/p").
func (c Claim) xLabel() string { return cmpOr(c.XLabel, "x") }

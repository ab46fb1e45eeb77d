package report

import (
	"fmt"
	"math"
	"strings"
)

// Explain says, with the measured numbers, why a claim does not hold
// (contradicted, inconclusive, uninformative, not run or not computed),
// and how far inside a bound one that holds is; "" for a claim that holds
// plainly or is only reported. The claim's Note, this project's reading,
// follows the evidence (not the reason a claim was not run).
func Explain(r Result) string {
	c := r.Claim
	var why string
	switch {
	case r.Verdict == NotRun:
		why = r.Problem + "." // a sentence, as the others are
	case r.Problem != "":
		why = "It could not be computed: " + r.Problem + "."
	case r.Verdict == Uninformative:
		why = "Its premise, that " + c.Premise.Text + ", does not hold in the data, so the test has nothing to measure: " + r.Premise + "."
	case c.Stat == StatScaling && r.Summary != nil && r.Verdict != Holds:
		why = scalingEvidence(r)
	case r.Verdict == Contradicted || r.Verdict == Inconclusive:
		why = evidence(r)
	case r.Verdict == Holds && c.Stat == StatBound:
		why = boundMargin(r)
	}
	if why == "" {
		return ""
	}
	// The reading is of an outcome: a claim not run has none.
	if c.Note != "" && r.Verdict != Holds && r.Verdict != NotRun {
		why += " This project's reading: " + c.Note
	}
	return why
}

// evidence lists the findings that decide a contradicted or inconclusive
// claim, each with its interval and n (and the sign count of paired
// differences), against the claimed side.
func evidence(r Result) string {
	c := r.Claim
	thr := c.Threshold
	side := c.Expect + " " + num(thr)
	switch c.Stat {
	case StatCrossover:
		thr, side = 0, "> 0"
	case StatIncrease:
		thr = 0.5
		side = c.Expect + " 0.5"
	case StatBest:
		thr, side = 0, c.Expect+" 0"
	}
	band := c.Expect == "~" && c.Stat != StatCrossover && c.Stat != StatIncrease && c.Stat != StatBest
	if band {
		side = fmt.Sprintf("within %s of %s", num(c.Tolerance), num(thr))
	}
	fs := r.Findings
	if r.Summary != nil && c.Stat != StatCrossover {
		fs = []Finding{*r.Summary}
	}
	// The findings that decide the verdict come first; a contradicted
	// claim's inconclusive findings follow them.
	var decisive, rest []Finding
	for _, f := range fs {
		switch {
		case f.Verdict == r.Verdict:
			decisive = append(decisive, f)
		case r.Verdict == Contradicted && f.Verdict == Inconclusive && c.Stat != StatCrossover:
			rest = append(rest, f)
		}
	}
	var parts []string
	shown := 0
	for _, f := range append(decisive, rest...) {
		if shown++; shown > 4 {
			continue
		}
		at := strings.TrimSpace(strings.Join(nonEmpty(keyWords(c, f.Key), f.X), ", "))
		how := "its interval contains " + num(thr)
		if f.Verdict == Contradicted {
			how = "wholly on the other side of " + num(thr)
		}
		if band {
			how = fmt.Sprintf("its interval reaches outside [%s, %s]", num(thr-c.Tolerance), num(thr+c.Tolerance))
			if f.Verdict == Contradicted {
				how = fmt.Sprintf("wholly outside [%s, %s]", num(thr-c.Tolerance), num(thr+c.Tolerance))
			}
		}
		if c.Test == TestSign && f.Sign != nil {
			how = "the seeds do not lean to the claimed side at the 5% level"
			if f.Verdict == Contradicted {
				how = "the seeds lean to the other side at the 5% level"
			}
		}
		s := fmt.Sprintf("%s: %s = %s, n = %d, %s", at, f.Label, f.interval(), f.Seeds, how)
		if f.Sign != nil {
			s += " (" + f.Sign.String() + ")"
		}
		parts = append(parts, s)
	}
	if shown > 4 {
		parts = append(parts, fmt.Sprintf("and %d more", shown-4))
	}
	if len(parts) == 0 {
		return ""
	}
	verb := "These seeds cannot decide it, claimed " + side
	if r.Verdict == Contradicted {
		verb = "The data say otherwise, claimed " + side
	}
	return verb + ": " + strings.Join(parts, "; ") + "."
}

// keyWords names a finding's key: "panel 10", "x = 4", or nothing for a
// figure without panels.
func keyWords(c Claim, key string) string {
	switch {
	case key == "":
		return ""
	case c.Over == "x" || c.Stat == StatIncrease || c.Stat == StatTrend || c.Stat == StatGrowth:
		return "at " + key
	}
	return "panel " + key
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// boundMargin says how far below its bound a holding bound claim is: a
// bound that holds by orders of magnitude is true and far from tight.
func boundMargin(r Result) string {
	worst := 0.0
	for _, f := range r.Findings {
		worst = math.Max(worst, f.Hi)
	}
	if !(worst > 0) || worst > 0.1 {
		return ""
	}
	orders := math.Floor(-math.Log10(worst))
	return fmt.Sprintf("It holds with a margin: the largest upper 95%% limit over every x and panel is %s of the bound, %s order%s of magnitude below it, so the bound is true here and far from tight: it does not describe how the regret behaves.", num(worst), num(orders), map[bool]string{true: "s"}[orders != 1])
}

// scalingEvidence gives a scaling claim's brackets and the slopes through
// them against what it claims.
func scalingEvidence(r Result) string {
	c, s := r.Claim, r.Summary
	var bs, unused []string
	for _, f := range r.Findings {
		if f.Verdict == Uninformative {
			unused = append(unused, f.Key)
			continue
		}
		end := "]"
		if math.IsInf(f.Hi, 1) {
			end = ")"
		}
		bs = append(bs, fmt.Sprintf("%s (%s) in (%s, %s%s", f.Key, f.X, num(f.Lo), num(f.Hi), end))
	}
	out := "The crossover horizons lie at " + strings.Join(bs, ", ") + "; "
	if len(unused) > 0 {
		out = fmt.Sprintf("The crossover horizons lie at %s (%s not used: its premise, that %s, does not hold there); ", strings.Join(bs, ", "), strings.Join(unused, ", "), c.Premise.Text)
	}
	switch {
	case math.IsNaN(s.Lo):
		out += "no power law passes through all of these brackets"
	case math.IsInf(s.Lo, -1) && math.IsInf(s.Hi, 1):
		out += "lines of any slope pass through all of them"
	default:
		out += fmt.Sprintf("the lines through all of them have slopes in [%s, %s] (least squares through the points: %s)", num(s.Lo), num(s.Hi), num(s.Value))
	}
	switch {
	case c.Expect == "~" && r.Verdict == Contradicted:
		out += fmt.Sprintf(", which excludes %s", num(c.Threshold))
	case c.Expect == "~":
		out += fmt.Sprintf(", which holds %s and 0 alike: these seeds cannot tell the predicted exponent from none", num(c.Threshold))
	case r.Verdict == Contradicted:
		out += fmt.Sprintf(", all at or below %s", num(c.Threshold))
	default:
		out += fmt.Sprintf(", claimed above %s: these seeds cannot decide it", num(c.Threshold))
	}
	return out + "."
}

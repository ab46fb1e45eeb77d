package report

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Stat is a claim's statistic.
type Stat string

// Statistics. Keys are the panels (Over "panel") or the x values of one
// panel (Over "x", e.g. a final-value figure's horizons).
const (
	StatValue      Stat = "value"      // each curve's mean at each key: reported, no verdict
	StatDifference Stat = "difference" // mean(curves[0]) − mean(curves[1]) at each key
	StatRatio      Stat = "ratio"      // mean(curves[0]) / mean(curves[1]) at each key
	StatOrder      Stat = "order"      // mean(curves[i]) − mean(curves[i+1]), each consecutive pair, at each key
	StatCrossover  Stat = "crossover"  // curves[0] − curves[i] > 0 for every i ≥ 1 at every key from Between[1] on; the crossover key reported
	StatTrend      Stat = "trend"      // per-seed slope of log(ratio) (or of log y, one curve) against log key
	StatSlope      Stat = "slope"      // per panel: per-seed slope of log y against log x
	StatFraction   Stat = "fraction"   // each curve's fraction of seeds with y below Below, at each key
	StatMedian     Stat = "median"     // each curve's median at each key (runs at Cap censored)
	StatBest       Stat = "best"       // Winner against every other curve: lowest (Expect "<") or highest (">") at each key
	StatIncrease   Stat = "increase"   // per curve: the fraction of seeds whose y is larger at the last key than at the first (runs at Cap censored)
	StatGrowth     Stat = "growth"     // per-seed least-squares slope of curves[0] − curves[1] against the key (linear): does a gap grow?
	StatBound      Stat = "bound"      // per panel and x: mean(curves[0]) / Bound(x, panel), an upper bound's value there
	StatScaling    Stat = "scaling"    // per panel, the bracketed horizon from which curves[0] is ahead of every other curve; the log-log slope of it against PanelX (scaling.go)
)

// Measures: what a claim compares at a point.
const (
	MeasureValue  = ""        // the curve's y at the point
	MeasureLogAUC = "log-auc" // the mean of log₁₀ y over log₁₀ x up to the point (sample efficiency: lower learns faster)
)

// Verdict is what a statistic says of its claim.
type Verdict string

// Verdicts: a reader must be able to tell apart a claim the data show, one
// they contradict, one these seeds cannot decide and one the data cannot
// test at all.
const (
	Holds         Verdict = "holds"         // the whole interval is on the claimed side
	Contradicted  Verdict = "contradicted"  // the whole interval is on the other side
	Inconclusive  Verdict = "inconclusive"  // the interval straddles the claimed threshold: these seeds cannot decide
	Uninformative Verdict = "uninformative" // the claim's premise does not hold in the data: the test has nothing to measure
	NotRun        Verdict = "not-run"       // the profile does not compute the points the claim is about
	Reported      Verdict = "reported"      // a value without a claimed side
)

// Tests: a claim's primary statistic, fixed in dag.yaml before any data.
const (
	TestInterval = ""     // the 95% interval of the statistic against the threshold
	TestSign     = "sign" // the exact paired sign test of the per-seed differences (two-sided, 5%)
)

// Claim is one claim about a figure.
type Claim struct {
	ID      string
	Figure  string // the plot's figure name, e.g. fig3a-swimmer
	Section string // where the paper says it, e.g. "§4.6"
	Text    string // the claim, quoted or paraphrased
	Stat    Stat
	Curves  []string
	// Over is "panel" (default) or "x"; Panel is the panel of an "x"
	// claim ("" for a figure without panels).
	Over  string
	Panel string
	// Keys restricts the claim to these panels or x values (empty: all).
	Keys []string
	At   At // where on a curve, for "panel" claims
	// Measure is what is compared at the point (MeasureValue or
	// MeasureLogAUC).
	Measure string
	// Expect is the claimed side of Threshold: ">" or "<", or "~" for
	// within Tolerance of it.
	Expect               string
	Threshold, Tolerance float64
	// Between is a crossover's claimed range of keys: curves[0] is claimed
	// ahead at every key from Between[1] on.
	Between [2]float64
	// Below is a fraction's bound: a seed counts when its value is below.
	Below float64
	// Winner is a best claim's claimed winner.
	Winner string
	// Cap, when positive, is a budget runs stop at: a value at or above
	// it is only known to be at least Cap (medians, increases).
	Cap float64
	// CapNote, set where a profile's figure_caps moved the cap or bound
	// the claim's text was written for, says so beside the text.
	CapNote string
	// Source is "paper" when the sentence and its threshold are the
	// paper's, "project" when this project chose the threshold or the
	// claim (the report marks them).
	Source string
	// Bound is a bound claim's upper bound.
	Bound Bound
	// Test is the primary statistic of a difference or order claim
	// (TestInterval or TestSign); the other is shown beside it.
	Test string
	// Premise, when set, is what the data must show for the claim to be
	// tested at all (else Uninformative).
	Premise Premise
	// Note is this project's reading of the claim's outcome, shown with
	// the measured evidence where the claim does not hold.
	Note string
	// PanelX is each panel's value on a scaling claim's x axis (e.g. a
	// body's d/p), named XLabel.
	PanelX map[string]float64
	XLabel string
}

// Premise is a condition on the data without which a claim's test has
// nothing to measure: the mean of Curves[0] over that of Curves[1] must
// leave [RatioWithin[0], RatioWithin[1]] at one key at least (e.g. two
// learners whose regrets never differ by more than 10% give a trend of
// their ratio nothing to follow).
type Premise struct {
	Text        string
	RatioWithin [2]float64
}

// set reports whether a premise is declared.
func (p Premise) set() bool { return p.Text != "" }

// Bound is an upper bound on a curve's value at x in a panel whose key is
// numeric: Coef·(panel + PanelAdd)^PanelPow·x^XPow (e.g. Theorem 1's
// average regret, K·√b·T^(−1/4) with b = d + 1).
type Bound struct {
	Coef, PanelAdd, PanelPow, XPow float64
}

// At is the bound's value at x in the panel with numeric key k.
func (b Bound) At(x, k float64) float64 {
	return b.Coef * math.Pow(k+b.PanelAdd, b.PanelPow) * math.Pow(x, b.XPow)
}

// String writes the bound as a formula in x and the panel's key p.
func (b Bound) String() string {
	f := num(b.Coef)
	if b.PanelPow != 0 {
		p := "p"
		if b.PanelAdd != 0 {
			p = "(p + " + num(b.PanelAdd) + ")"
		}
		f += "·" + p + "^" + num(b.PanelPow)
	}
	if b.XPow != 0 {
		f += "·x^" + num(b.XPow)
	}
	return f
}

// Finding is a statistic at one key (or, for order and best, one pair at
// a key), with its interval and the seeds behind it.
type Finding struct {
	Key     string
	Label   string
	Value   float64
	Lo, Hi  float64
	Seeds   int     // n: the seeds behind it
	Method  string  // how the interval is made (Method*)
	X       string  // where on the curves it was taken, e.g. "x = 300000"
	Verdict Verdict // on the claimed side, the other, neither, or reported
	// Sign counts the seeds on each side of the threshold, for paired
	// differences (nil otherwise).
	Sign *Sign
	// AtLeast marks a value that is only a lower bound (a mean over runs
	// stopped at a cap): it has no interval.
	AtLeast bool
}

// Sign is an exact paired sign test: the seeds whose difference is above
// and below the threshold (ties left out) and the two-sided binomial p.
type Sign struct {
	Above     int     `json:"above"`
	Below     int     `json:"below"`
	Ties      int     `json:"ties"`
	P         float64 `json:"p"`
	Threshold float64 `json:"threshold"`
}

// Result is a claim's findings and its verdict: it holds when every
// finding holds, is contradicted when one is, and is inconclusive otherwise.
type Result struct {
	Claim    Claim
	Findings []Finding
	// Summary is the across-key value of a crossover or trend claim.
	Summary *Finding
	Verdict Verdict
	// Problem says why a claim could not be computed (then Inconclusive,
	// or NotRun where the profile does not compute its points).
	Problem string
	// Premise is what the data show of the claim's premise, when it
	// declares one.
	Premise string
}

// Evaluate computes a claim on a figure's per-seed table. Every interval
// is deterministic: the same table gives the same bits.
func Evaluate(c Claim, t Table) Result {
	res := Result{Claim: c}
	if err := c.check(); err != nil {
		res.Verdict, res.Problem = Inconclusive, err.Error()
		return res
	}
	var err error
	switch c.Stat {
	case StatSlope:
		res.Findings, err = slopes(c, t)
	case StatTrend, StatGrowth:
		res.Summary, err = trend(c, t)
	case StatIncrease:
		res.Findings, err = increases(c, t)
	case StatBound:
		res.Findings, err = bounds(c, t)
	case StatScaling:
		res.Findings, res.Summary, res.Verdict, err = scaling(c, t)
	default:
		var keys []string
		var points []*Point
		if keys, points, err = c.points(t); err == nil {
			res.Findings = evaluatePoints(c, keys, points)
		}
	}
	switch {
	case errors.Is(err, ErrNotRun):
		res.Verdict, res.Problem = NotRun, err.Error()
	case err != nil:
		res.Verdict, res.Problem = Inconclusive, err.Error()
	case c.Stat == StatValue || c.reportedOnly():
		res.Verdict = Reported
	case c.Stat == StatCrossover:
		res.Summary, res.Verdict, res.Problem = crossover(c, res.Findings)
	case c.Stat == StatScaling && res.Summary == nil: // too few panels take part (its premise, panel by panel)
		res.Premise = unusedPanels(res.Findings)
	case c.Stat == StatTrend || c.Stat == StatGrowth || c.Stat == StatScaling:
		res.Verdict = res.Summary.Verdict
	default:
		res.Verdict = overall(res.Findings)
	}
	if c.Premise.set() && err == nil && c.Stat != StatScaling { // a scaling claim's premise is per panel (scaling)
		var holds bool
		if res.Premise, holds = premise(c, t); !holds {
			res.Verdict = Uninformative
		}
	}
	return res
}

// evaluatePoints computes the statistics that look at each key's point.
func evaluatePoints(c Claim, keys []string, points []*Point) []Finding {
	var out []Finding
	for i, p := range points {
		switch c.Stat {
		case StatValue, StatFraction, StatMedian:
			for _, cv := range c.Curves {
				out = append(out, oneCurve(c, keys[i], p, cv))
			}
		case StatBest:
			for _, other := range c.Curves {
				if other != c.Winner {
					iv := difference(p, c.Winner, other)
					out = append(out, finding(c, keys[i], fmt.Sprintf("%s − %s (claimed %s: %s)", c.Winner, other, bestWord(c), c.Winner), iv, p, judge(iv, c.Expect, 0, 0)))
				}
			}
		default: // difference, ratio, order, crossover
			expect, thr := c.Expect, c.Threshold
			if c.Stat == StatCrossover {
				expect, thr = ">", 0
			}
			for _, pr := range c.pairs() {
				iv, label := difference(p, pr[0], pr[1]), pr[0]+" − "+pr[1]
				if c.Stat == StatRatio {
					iv, label = fieller(p.Values[pr[0]], p.Values[pr[1]], p.shared(pr[0], pr[1])), pr[0]+" / "+pr[1]
				}
				f := finding(c, keys[i], label, iv, p, judge(iv, expect, thr, c.Tolerance))
				if c.Stat != StatRatio && p.shared(pr[0], pr[1]) {
					f.Sign = signTest(p.Values[pr[0]], p.Values[pr[1]], thr)
					if c.Test == TestSign {
						f.Verdict = f.Sign.judge(expect)
					}
				}
				out = append(out, f)
			}
		}
	}
	return out
}

// oneCurve is a value, fraction or median of one curve at a point.
func oneCurve(c Claim, key string, p *Point, cv string) Finding {
	v := Reported
	var iv Interval
	label := cv
	switch c.Stat {
	case StatValue:
		iv = tMean(p.Values[cv], MethodT)
		if k := atCap(p.Values[cv], c.Cap); k > 0 {
			// A mean over runs stopped at the cap is only a lower bound;
			// no interval is drawn around it.
			iv.Lo, iv.Hi = math.NaN(), math.NaN()
			iv.Method = fmt.Sprintf("a lower bound: %d of %d runs at the cap %s, so no interval", k, iv.N, num(c.Cap))
			f := finding(c, key, label, iv, p, v)
			f.AtLeast = true
			return f
		}
	case StatFraction:
		k := 0
		for _, y := range p.Values[cv] {
			if y < c.Below {
				k++
			}
		}
		iv, label = clopperPearson(k, len(p.Values[cv]), MethodExact), cv+" below "+num(c.Below)
	case StatMedian:
		iv, label = medianOS(p.Values[cv], c.Cap), "median "+cv
	}
	if c.Stat != StatValue && c.Expect != "" {
		v = judge(iv, c.Expect, c.Threshold, c.Tolerance)
	}
	return finding(c, key, label, iv, p, v)
}

func bestWord(c Claim) string {
	if c.Expect == ">" {
		return "highest"
	}
	return "lowest"
}

// pairs are the curve pairs a difference, ratio, order or crossover
// compares.
func (c Claim) pairs() [][2]string {
	switch c.Stat {
	case StatCrossover:
		var out [][2]string
		for _, rival := range c.Curves[1:] {
			out = append(out, [2]string{c.Curves[0], rival})
		}
		return out
	case StatOrder:
	default:
		return [][2]string{{c.Curves[0], c.Curves[1]}}
	}
	var out [][2]string
	for i := 0; i+1 < len(c.Curves); i++ {
		out = append(out, [2]string{c.Curves[i], c.Curves[i+1]})
	}
	return out
}

// difference is mean(a) − mean(b) at p: the paired t interval when the two
// curves have the same seeds there, Welch's otherwise.
func difference(p *Point, a, b string) Interval {
	if p.shared(a, b) {
		return pairedDiff(p.Values[a], p.Values[b])
	}
	return welchDiff(p.Values[a], p.Values[b])
}

// slopes computes a slope claim: per panel, the per-seed slope of log y
// against log x over the curve's points (up to At when it is a number).
func slopes(c Claim, t Table) ([]Finding, error) {
	var out []Finding
	a := c.Curves[0]
	for _, panel := range c.keep(t.Panels()) {
		bySeed := map[uint64]*[2][]float64{}
		var seeds []uint64
		for _, r := range t {
			if r.Panel != panel || r.Curve != a || c.At.Set && r.X > c.At.X {
				continue
			}
			s, ok := bySeed[r.Seed]
			if !ok {
				s = &[2][]float64{}
				bySeed[r.Seed] = s
				seeds = append(seeds, r.Seed)
			}
			s[0], s[1] = append(s[0], r.X), append(s[1], r.Y)
		}
		if len(seeds) == 0 {
			return nil, noCurve(a, panel)
		}
		slices.Sort(seeds)
		series := make([][2][]float64, len(seeds))
		for i, s := range seeds {
			series[i] = *bySeed[s]
		}
		iv := seedSlopes(series)
		v := Reported
		if c.Expect != "" {
			v = judge(iv, c.Expect, c.Threshold, c.Tolerance)
		}
		f := finding(c, panel, "slope of log "+a+" against log x", iv, nil, v)
		f.X = "every x" + map[bool]string{true: " ≤ " + c.At.String()}[c.At.Set]
		out = append(out, f)
	}
	return out, nil
}

// trend computes a trend claim: per seed (one present at every key), the
// least-squares slope of log(curves[0] / curves[1]) (or of log curves[0])
// against log key, then the t interval across seeds; a growth claim is the
// slope of curves[0] − curves[1] against the key itself.
func trend(c Claim, t Table) (*Finding, error) {
	keys, points, err := c.points(t)
	if err != nil {
		return nil, err
	}
	if len(keys) < 2 {
		return nil, notComputed("a trend needs at least two keys; this profile computes %d (%s)", len(keys), strings.Join(keys, ", "))
	}
	xs := make([]float64, len(keys))
	for i, k := range keys {
		x, err := strconv.ParseFloat(k, 64)
		if err != nil || x <= 0 {
			return nil, fmt.Errorf("a trend needs positive numeric keys, got %q", k)
		}
		xs[i] = x
	}
	var series [][2][]float64
	var linear []float64
	for _, seed := range commonSeeds(points, c.Curves) {
		ys := make([]float64, len(points))
		for i, p := range points {
			ys[i] = p.value(c.Curves[0], seed)
			switch {
			case c.Stat == StatGrowth:
				ys[i] -= p.value(c.Curves[1], seed)
			case len(c.Curves) > 1:
				ys[i] /= p.value(c.Curves[1], seed)
			}
		}
		series = append(series, [2][]float64{xs, ys})
		linear = append(linear, olsSlope(xs, ys))
	}
	iv := seedSlopes(series)
	label := "slope of log " + strings.Join(c.Curves, " / ") + " against log " + c.over()
	if c.Stat == StatGrowth {
		iv = tMean(linear, MethodSeedSlopes)
		label = "slope of " + c.Curves[0] + " − " + c.Curves[1] + " against " + c.over()
	}
	f := finding(c, strings.Join(keys, ", "), label, iv, points[0], judge(iv, c.Expect, c.Threshold, c.Tolerance))
	return &f, nil
}

// increases computes an increase claim: for each curve, each seed's values
// at the first and the last key are compared (a value at or above Cap is
// only known to be at least Cap, so two such values are a tie, and ties
// are left out); the statistic is the fraction of the other seeds whose
// value increased, with the exact interval of a sign count. It is claimed
// above 0.5 (Expect ">": most seeds increase) or below.
func increases(c Claim, t Table) ([]Finding, error) {
	keys, points, err := c.points(t)
	if err != nil {
		return nil, err
	}
	if len(keys) < 2 {
		return nil, fmt.Errorf("an increase needs at least two keys, this figure has %d", len(keys))
	}
	first, last := points[0], points[len(points)-1]
	var out []Finding
	for _, cv := range c.Curves {
		up, n := 0, 0
		for _, seed := range commonSeeds([]*Point{first, last}, []string{cv}) {
			a, b := first.value(cv, seed), last.value(cv, seed)
			if c.Cap > 0 {
				a, b = min(a, c.Cap), min(b, c.Cap)
			}
			if a == b {
				continue
			}
			n++
			if b > a {
				up++
			}
		}
		iv := clopperPearson(up, n, MethodSign)
		f := finding(c, keys[0]+" → "+keys[len(keys)-1], fmt.Sprintf("%s: seeds higher at %s than at %s", cv, keys[len(keys)-1], keys[0]), iv, nil, judge(iv, c.Expect, 0.5, 0))
		out = append(out, f)
	}
	return out, nil
}

// commonSeeds returns the seeds every curve has at every point, in order.
func commonSeeds(points []*Point, curves []string) []uint64 {
	var out []uint64
	for _, s := range points[0].Seeds[curves[0]] {
		all := true
		for _, p := range points {
			for _, cv := range curves {
				all = all && slices.Contains(p.Seeds[cv], s)
			}
		}
		if all {
			out = append(out, s)
		}
	}
	return out
}

func (c Claim) over() string {
	if c.Over == "x" {
		return "x"
	}
	return "panel"
}

// check reports a claim that cannot be computed as declared.
func (c Claim) check() error {
	need := map[Stat]int{StatValue: 1, StatDifference: 2, StatRatio: 2, StatOrder: 2, StatCrossover: 2, StatTrend: 1, StatSlope: 1,
		StatFraction: 1, StatMedian: 1, StatBest: 2, StatIncrease: 1, StatGrowth: 2, StatBound: 1, StatScaling: 2}
	optional := c.Stat == StatValue || c.Stat == StatCrossover || c.reportedOnly()
	n, ok := need[c.Stat]
	switch {
	case !ok:
		return fmt.Errorf("unknown statistic %q", c.Stat)
	case len(c.Curves) < n:
		return fmt.Errorf("statistic %s needs %d curve(s), got %d", c.Stat, n, len(c.Curves))
	case !optional && !slices.Contains([]string{">", "<", "~"}, c.Expect):
		return fmt.Errorf("expect must be >, < or ~, got %q", c.Expect)
	case (c.Stat == StatBest || c.Stat == StatIncrease) && c.Expect == "~":
		return fmt.Errorf("a %s claim expects < or >", c.Stat)
	case c.Stat == StatBest && !slices.Contains(c.Curves, c.Winner):
		return fmt.Errorf("a best claim names its claimed winner among its curves (winner), got %q", c.Winner)
	case c.Over != "" && c.Over != "panel" && c.Over != "x":
		return fmt.Errorf("over must be panel or x, got %q", c.Over)
	case c.Measure != MeasureValue && c.Measure != MeasureLogAUC:
		return fmt.Errorf("measure must be %q or empty, got %q", MeasureLogAUC, c.Measure)
	case c.Stat == StatBound && (c.Expect != "<" || !(c.Bound.Coef > 0) || math.IsInf(c.Bound.Coef, 0)):
		return fmt.Errorf("a bound claim expects < and a positive finite bound coefficient (bound.coef)")
	case c.Stat == StatScaling && (c.Expect == "<" || len(c.PanelX) == 0):
		return fmt.Errorf("a scaling claim expects > or ~ of its slope and gives each panel's value (panel_x)")
	}
	return nil
}

// reportedOnly is a statistic that may be reported without a claimed
// side, and has none.
func (c Claim) reportedOnly() bool {
	return (c.Stat == StatFraction || c.Stat == StatMedian || c.Stat == StatSlope) && c.Expect == ""
}

// bounds computes a bound claim: per panel (a numeric key, where the bound
// depends on it) and x of
// curves[0], the t interval of the mean over seeds of y / Bound(x, panel),
// claimed below Threshold (1: under the bound).
func bounds(c Claim, t Table) ([]Finding, error) {
	a := c.Curves[0]
	var out []Finding
	for _, panel := range c.keep(t.Panels()) {
		var k float64 // the panel's key, where the bound depends on it
		if c.Bound.PanelPow != 0 {
			var err error
			if k, err = strconv.ParseFloat(panel, 64); err != nil {
				return nil, fmt.Errorf("a bound in the panel's key needs numeric panels, got %q", panel)
			}
		}
		var xs []float64
		vals := map[float64][]float64{}
		for _, r := range t {
			if r.Panel != panel || r.Curve != a {
				continue
			}
			if _, ok := vals[r.X]; !ok {
				xs = append(xs, r.X)
			}
			vals[r.X] = append(vals[r.X], r.Y/c.Bound.At(r.X, k))
		}
		if len(xs) == 0 {
			return nil, noCurve(a, panel)
		}
		slices.Sort(xs)
		for _, x := range xs {
			iv := tMean(vals[x], MethodT)
			f := finding(c, panel, a+" / bound "+c.Bound.String(), iv, nil, judge(iv, c.Expect, c.Threshold, c.Tolerance))
			f.X = "x = " + num(x)
			out = append(out, f)
		}
	}
	return out, nil
}

func finding(c Claim, key, label string, iv Interval, p *Point, v Verdict) Finding {
	f := Finding{Key: key, Label: label, Value: iv.Value, Lo: iv.Lo, Hi: iv.Hi, Seeds: iv.N, Method: iv.Method, Verdict: v}
	if p != nil {
		f.X = p.where(c)
	}
	return f
}

// judge places an interval against the claimed side of thr.
func judge(iv Interval, expect string, thr, tol float64) Verdict {
	if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
		return Inconclusive
	}
	switch expect {
	case ">":
		if iv.Lo > thr {
			return Holds
		}
		if iv.Hi <= thr {
			return Contradicted
		}
	case "<":
		if iv.Hi < thr {
			return Holds
		}
		if iv.Lo >= thr {
			return Contradicted
		}
	case "~":
		if iv.Lo >= thr-tol && iv.Hi <= thr+tol {
			return Holds
		}
		if iv.Hi < thr-tol || iv.Lo > thr+tol {
			return Contradicted
		}
	}
	return Inconclusive
}

// overall is every finding holding, one contradicted, or inconclusive.
func overall(fs []Finding) Verdict {
	if len(fs) == 0 {
		return Inconclusive
	}
	v := Holds
	for _, f := range fs {
		switch f.Verdict {
		case Contradicted:
			return Contradicted
		case Inconclusive:
			v = Inconclusive
		}
	}
	return v
}

// crossover judges a crossover claim: curves[0] ahead of every other
// curve (the rivals: one, or several estimators of one kind) at every key
// from Between[1] on holds; behind one of them at one of those keys (the
// whole interval on the other side) is contradicted; otherwise it is
// inconclusive. Keys below that are not judged (the claimed crossover
// lies in Between); with no key from Between[1] on, the claim is not run,
// and the problem says which keys were computed. The summary reports the
// crossover: the smallest key from which curves[0] is ahead of every
// rival at every larger key, if any.
func crossover(c Claim, fs []Finding) (*Finding, Verdict, string) {
	s := &Finding{Label: "crossover of " + c.Curves[0] + " over " + strings.Join(c.Curves[1:], ", "), Lo: math.NaN(), Hi: math.NaN(), Value: math.NaN()}
	// The keys in order, and whether curves[0] is ahead of every rival
	// at each.
	var keys []string
	ahead := map[string]bool{}
	for _, f := range fs {
		if _, seen := ahead[f.Key]; !seen {
			keys = append(keys, f.Key)
			ahead[f.Key] = true
		}
		ahead[f.Key] = ahead[f.Key] && f.Verdict == Holds
	}
	k := len(keys)
	for k > 0 && ahead[keys[k-1]] {
		k--
	}
	if k < len(keys) {
		s.Key = keys[k]
		s.Value, _ = strconv.ParseFloat(s.Key, 64)
	}
	var judged []Finding
	for _, f := range fs {
		if x, err := strconv.ParseFloat(f.Key, 64); err == nil && x >= c.Between[1] {
			judged = append(judged, f)
		}
	}
	if len(fs) > 0 {
		s.Seeds, s.Method, s.X = fs[0].Seeds, fs[0].Method, fs[0].X
	}
	// Keys before the claimed crossover are shown, not judged: ExAct
	// ahead at H = 1 is no evidence against ARS ahead from H = 4 on.
	for i := range fs {
		if x, err := strconv.ParseFloat(fs[i].Key, 64); err != nil || x < c.Between[1] {
			fs[i].Verdict = Reported
		}
	}
	if len(judged) == 0 {
		where := ""
		if c.Panel != "" {
			where = " of panel " + c.Panel
		}
		return s, NotRun, fmt.Sprintf("no point at x ≥ %s%s, where the claimed crossover has happened: this profile computes x = %s", num(c.Between[1]), where, strings.Join(keys, ", "))
	}
	return s, overall(judged), ""
}

// median is the middle value of xs (the mean of the two middle ones for
// an even count; NaN for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// atCap counts the values at or above cap (0 when there is no cap).
func atCap(xs []float64, cap float64) int {
	if !(cap > 0) {
		return 0
	}
	k := 0
	for _, x := range xs {
		if x >= cap {
			k++
		}
	}
	return k
}

// signTest counts the seeds whose a − b is above and below thr (a and b
// in seed order, the same seeds) and computes the exact two-sided
// binomial p of the split (ties left out).
func signTest(a, b []float64, thr float64) *Sign {
	s := &Sign{Threshold: thr}
	for i := range a {
		switch d := a[i] - b[i]; {
		case d > thr:
			s.Above++
		case d < thr:
			s.Below++
		default:
			s.Ties++
		}
	}
	s.P = binomTwoSided(min(s.Above, s.Below), s.Above+s.Below)
	return s
}

// binomTwoSided is the exact two-sided p of k or fewer successes (k at
// most n/2) in n fair trials: twice the lower tail, at most 1.
func binomTwoSided(k, n int) float64 {
	if n == 0 {
		return 1
	}
	return math.Min(1, 2*binomCDF(k, n))
}

// judge is the sign test's verdict on a claimed side: holds when the
// seeds lean to that side at the 5% level (two-sided), contradicted when
// they lean to the other, inconclusive otherwise.
func (s *Sign) judge(expect string) Verdict {
	claimed, other := s.Above, s.Below
	if expect == "<" {
		claimed, other = other, claimed
	}
	switch {
	case s.P < 0.05 && claimed > other:
		return Holds
	case s.P < 0.05 && other > claimed:
		return Contradicted
	}
	return Inconclusive
}

// String is the sign count as the report writes it.
func (s *Sign) String() string {
	t := fmt.Sprintf("sign test: %d of %d seeds above %s", s.Above, s.Above+s.Below+s.Ties, num(s.Threshold))
	if s.Ties > 0 {
		t += fmt.Sprintf(" (%d tied)", s.Ties)
	}
	return t + ", p = " + num(s.P)
}

// unusedPanels says which panels of a scaling claim failed its premise
// and what was measured there.
func unusedPanels(fs []Finding) string {
	var parts []string
	for _, f := range fs {
		if f.Verdict == Uninformative {
			_, why, _ := strings.Cut(f.Method, "does not hold: ")
			parts = append(parts, "on "+f.Key+" "+why)
		}
	}
	return fmt.Sprintf("%d of %d panels take part, fewer than the two a slope needs: %s", len(fs)-len(parts), len(fs), strings.Join(parts, "; "))
}

// premise checks a claim's premise: the mean ratio of its first two
// curves at each key, and whether one leaves RatioWithin. It returns what
// was measured, in words (the premise's own text not included).
func premise(c Claim, t Table) (string, bool) {
	keys, points, err := c.points(t)
	if err != nil || len(c.Curves) < 2 {
		return "not measured: " + fmt.Sprint(err), true
	}
	lo, hi := c.Premise.RatioWithin[0], c.Premise.RatioWithin[1]
	var parts []string
	outside := false
	for i, p := range points {
		r := mean(p.Values[c.Curves[0]]) / mean(p.Values[c.Curves[1]])
		outside = outside || !(r >= lo && r <= hi)
		parts = append(parts, fmt.Sprintf("%s at %s", num(r), keys[i]))
	}
	word := "never leaves"
	if outside {
		word = "leaves"
	}
	return fmt.Sprintf("the mean %s / %s is %s, which %s [%s, %s]", c.Curves[0], c.Curves[1], strings.Join(parts, ", "), word, num(lo), num(hi)), outside
}

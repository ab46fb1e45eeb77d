package report

import (
	"fmt"
	"math"
	"math/rand/v2"
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
	StatCrossover  Stat = "crossover"  // the smallest key from which the difference holds at every larger key
	StatTrend      Stat = "trend"      // slope of log(ratio) (or of log mean, one curve) against log key
	StatSlope      Stat = "slope"      // per panel: slope of log mean y against log x
	StatFraction   Stat = "fraction"   // each curve's fraction of seeds with y below Below, at each key
	StatMedian     Stat = "median"     // each curve's median at each key
	StatBest       Stat = "best"       // the curve with the lowest (Expect "<") or highest (">") mean at each key, and its margin over the runner-up
)

// Verdict is what a statistic says of its claim.
type Verdict string

// Verdicts.
const (
	Holds        Verdict = "holds"
	Fails        Verdict = "fails"
	Inconclusive Verdict = "inconclusive"
	Reported     Verdict = "reported" // a value without a claimed side
)

// Claim is one claim of the paper about a figure.
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
	// Expect is the claimed side of Threshold: ">" or "<", or "~" for
	// within Tolerance of it.
	Expect               string
	Threshold, Tolerance float64
	// Between is a crossover's claimed range of keys (its differences are
	// claimed "> 0").
	Between [2]float64
	// Below is a fraction's bound: a seed counts when its value is below.
	Below float64
}

// Finding is a statistic at one key (or, for order, one pair at a key).
type Finding struct {
	Key     string  `json:"key"`
	Label   string  `json:"label"`
	Value   float64 `json:"value"`
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	Seeds   int     `json:"seeds"` // fewest seeds of a curve behind it
	Verdict Verdict `json:"verdict"`
}

// Result is a claim's findings and its verdict: it holds when every
// finding holds, fails when one fails, and is inconclusive otherwise.
type Result struct {
	Claim    Claim
	Findings []Finding
	// Summary is the across-key value of a crossover or trend claim.
	Summary *Finding
	Verdict Verdict
	// Problem says why a claim could not be computed (then Inconclusive).
	Problem string
}

// Evaluate computes a claim on a figure's per-seed table, drawing its
// bootstrap replicates from rng.
func Evaluate(c Claim, t Table, rng *rand.Rand) Result {
	res := Result{Claim: c}
	if err := c.check(); err != nil {
		res.Verdict, res.Problem = Inconclusive, err.Error()
		return res
	}
	keys, points, err := c.points(t)
	if err != nil {
		res.Verdict, res.Problem = Inconclusive, err.Error()
		return res
	}
	switch c.Stat {
	case StatValue:
		for i, p := range points {
			for _, cv := range c.Curves {
				iv := bootstrap([]*Point{p}, []string{cv}, func(s sample) float64 { return mean(s[0][cv]) }, rng)
				res.Findings = append(res.Findings, finding(keys[i], cv, iv, p, []string{cv}, Reported))
			}
		}
		res.Verdict = Reported
		return res
	case StatFraction, StatMedian:
		for i, p := range points {
			for _, cv := range c.Curves {
				stat, label := func(s sample) float64 { return fractionBelow(s[0][cv], c.Below) }, cv+" below "+num(c.Below)
				if c.Stat == StatMedian {
					stat, label = func(s sample) float64 { return median(s[0][cv]) }, "median "+cv
				}
				iv := bootstrap([]*Point{p}, []string{cv}, stat, rng)
				v := Reported
				if c.Expect != "" {
					v = judge(iv, c.Expect, c.Threshold, c.Tolerance)
				}
				res.Findings = append(res.Findings, finding(keys[i], label, iv, p, []string{cv}, v))
			}
		}
		if c.Expect == "" {
			res.Verdict = Reported
			return res
		}
	case StatBest:
		for i, p := range points {
			win, run := ranked(p, c.Curves, c.Expect == "<")
			stat := func(s sample) float64 { return mean(s[0][win]) - mean(s[0][run]) }
			iv := bootstrap([]*Point{p}, c.Curves, stat, rng)
			word := "lowest"
			if c.Expect == ">" {
				word = "highest"
			}
			label := fmt.Sprintf("%s: %s (margin over %s)", word, win, run)
			res.Findings = append(res.Findings, finding(keys[i], label, iv, p, []string{win, run}, judge(iv, c.Expect, 0, 0)))
		}
	case StatDifference, StatRatio, StatOrder, StatCrossover:
		pairs := [][2]string{{c.Curves[0], c.Curves[1]}}
		if c.Stat == StatOrder {
			pairs = pairs[:0]
			for i := 0; i+1 < len(c.Curves); i++ {
				pairs = append(pairs, [2]string{c.Curves[i], c.Curves[i+1]})
			}
		}
		expect, thr := c.Expect, c.Threshold
		if c.Stat == StatCrossover {
			expect, thr = ">", 0
		}
		for i, p := range points {
			for _, pr := range pairs {
				a, b := pr[0], pr[1]
				stat, label := func(s sample) float64 { return mean(s[0][a]) - mean(s[0][b]) }, a+" − "+b
				if c.Stat == StatRatio {
					stat, label = func(s sample) float64 { return mean(s[0][a]) / mean(s[0][b]) }, a+" / "+b
				}
				iv := bootstrap([]*Point{p}, []string{a, b}, stat, rng)
				res.Findings = append(res.Findings, finding(keys[i], label, iv, p, []string{a, b}, judge(iv, expect, thr, c.Tolerance)))
			}
		}
		if c.Stat == StatCrossover {
			res.Summary, res.Verdict = crossover(c, res.Findings)
			return res
		}
	case StatTrend:
		if len(keys) < 2 {
			res.Verdict, res.Problem = Inconclusive, fmt.Sprintf("a trend needs at least two keys, this figure has %d", len(keys))
			return res
		}
		xs := make([]float64, len(keys))
		for i, k := range keys {
			x, err := strconv.ParseFloat(k, 64)
			if err != nil || x <= 0 {
				res.Verdict, res.Problem = Inconclusive, fmt.Sprintf("a trend needs positive numeric keys, got %q", k)
				return res
			}
			xs[i] = math.Log(x)
		}
		a := c.Curves[0]
		stat := func(s sample) float64 {
			ys := make([]float64, len(s))
			for i := range s {
				q := mean(s[i][a])
				if len(c.Curves) > 1 {
					q /= mean(s[i][c.Curves[1]])
				}
				ys[i] = math.Log(q)
			}
			return olsSlope(xs, ys)
		}
		iv := bootstrap(points, c.Curves, stat, rng)
		label := "slope of log " + strings.Join(c.Curves, " / ") + " against log " + c.over()
		f := finding(strings.Join(keys, ", "), label, iv, nil, nil, judge(iv, c.Expect, c.Threshold, c.Tolerance))
		f.Seeds = fewestSeeds(points, c.Curves)
		res.Summary = &f
		res.Verdict = f.Verdict
		return res
	case StatSlope:
		for _, panel := range keys {
			xp, pts, err := c.withPanel(panel).xPoints(t)
			if err != nil {
				res.Verdict, res.Problem = Inconclusive, err.Error()
				return res
			}
			lx := make([]float64, len(xp))
			for i, x := range xp {
				lx[i] = math.Log(x)
			}
			a := c.Curves[0]
			stat := func(s sample) float64 {
				ys := make([]float64, len(s))
				for i := range s {
					ys[i] = math.Log(mean(s[i][a]))
				}
				return olsSlope(lx, ys)
			}
			iv := bootstrap(pts, c.Curves[:1], stat, rng)
			f := finding(panel, "slope of log "+a+" against log x", iv, nil, nil, judge(iv, c.Expect, c.Threshold, c.Tolerance))
			f.Seeds = fewestSeeds(pts, c.Curves[:1])
			res.Findings = append(res.Findings, f)
		}
	}
	res.Verdict = overall(res.Findings)
	return res
}

func (c Claim) over() string {
	if c.Over == "x" {
		return "x"
	}
	return "panel"
}

func (c Claim) withPanel(p string) Claim { c.Panel = p; return c }

// check reports a claim that cannot be computed as declared.
func (c Claim) check() error {
	need := map[Stat]int{StatValue: 1, StatDifference: 2, StatRatio: 2, StatOrder: 2, StatCrossover: 2, StatTrend: 1, StatSlope: 1,
		StatFraction: 1, StatMedian: 1, StatBest: 2}
	optional := c.Stat == StatValue || c.Stat == StatCrossover || (c.Stat == StatFraction || c.Stat == StatMedian) && c.Expect == ""
	n, ok := need[c.Stat]
	switch {
	case !ok:
		return fmt.Errorf("unknown statistic %q", c.Stat)
	case len(c.Curves) < n:
		return fmt.Errorf("statistic %s needs %d curve(s), got %d", c.Stat, n, len(c.Curves))
	case !optional && !slices.Contains([]string{">", "<", "~"}, c.Expect):
		return fmt.Errorf("expect must be >, < or ~, got %q", c.Expect)
	case c.Stat == StatBest && c.Expect == "~":
		return fmt.Errorf("a best claim expects < (lowest) or > (highest)")
	case c.Over != "" && c.Over != "panel" && c.Over != "x":
		return fmt.Errorf("over must be panel or x, got %q", c.Over)
	}
	return nil
}

// points returns the claim's keys and the curves' values at each: the
// panels (over "panel"; a slope's panels carry no point) or the x values
// of one panel (over "x").
func (c Claim) points(t Table) ([]string, []*Point, error) {
	if c.Stat == StatSlope {
		return c.keep(t.Panels()), nil, nil
	}
	if c.over() == "x" {
		xs, pts, err := c.xPoints(t)
		keys := make([]string, len(xs))
		for i, x := range xs {
			keys[i] = strconv.FormatFloat(x, 'g', -1, 64)
		}
		return keys, pts, err
	}
	keys := c.keep(t.Panels())
	pts := make([]*Point, len(keys))
	for i, k := range keys {
		p, err := t.Point(k, c.Curves, c.At)
		if err != nil {
			return nil, nil, err
		}
		pts[i] = p
	}
	return keys, pts, nil
}

// xPoints returns the x values curves[0] has in c.Panel, increasing
// (restricted to Keys for an "x" claim), and the curves' values at each.
func (c Claim) xPoints(t Table) ([]float64, []*Point, error) {
	var xs []float64
	for _, r := range t {
		if r.Panel == c.Panel && r.Curve == c.Curves[0] && !slices.Contains(xs, r.X) {
			xs = append(xs, r.X)
		}
	}
	slices.Sort(xs)
	if len(xs) == 0 {
		return nil, nil, fmt.Errorf("%w: curve %q has no points in panel %q", ErrTable, c.Curves[0], c.Panel)
	}
	if c.over() == "x" && len(c.Keys) > 0 {
		xs = slices.DeleteFunc(xs, func(x float64) bool { return !slices.Contains(c.Keys, strconv.FormatFloat(x, 'g', -1, 64)) })
	}
	if len(xs) == 0 {
		return nil, nil, fmt.Errorf("%w: curve %q has no point at x in %v in panel %q", ErrTable, c.Curves[0], c.Keys, c.Panel)
	}
	pts := make([]*Point, len(xs))
	for i, x := range xs {
		p, err := t.Point(c.Panel, c.Curves, At{X: x, Set: true})
		if err != nil {
			return nil, nil, err
		}
		pts[i] = p
	}
	return xs, pts, nil
}

// keep restricts panels to Keys (a "panel" claim's), in table order.
func (c Claim) keep(panels []string) []string {
	if len(c.Keys) == 0 || c.over() == "x" {
		return panels
	}
	return slices.DeleteFunc(slices.Clone(panels), func(p string) bool { return !slices.Contains(c.Keys, p) })
}

func finding(key, label string, iv Interval, p *Point, curves []string, v Verdict) Finding {
	f := Finding{Key: key, Label: label, Value: iv.Value, Lo: iv.Lo, Hi: iv.Hi, Verdict: v}
	if p != nil {
		f.Seeds = fewestSeeds([]*Point{p}, curves)
	}
	return f
}

func fewestSeeds(points []*Point, curves []string) int {
	n := math.MaxInt
	for _, p := range points {
		for _, c := range curves {
			n = min(n, len(p.Values[c]))
		}
	}
	return n
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
			return Fails
		}
	case "<":
		if iv.Hi < thr {
			return Holds
		}
		if iv.Lo >= thr {
			return Fails
		}
	case "~":
		if iv.Lo >= thr-tol && iv.Hi <= thr+tol {
			return Holds
		}
		if iv.Hi < thr-tol || iv.Lo > thr+tol {
			return Fails
		}
	}
	return Inconclusive
}

// overall is every finding holding, one failing, or inconclusive.
func overall(fs []Finding) Verdict {
	if len(fs) == 0 {
		return Inconclusive
	}
	v := Holds
	for _, f := range fs {
		switch f.Verdict {
		case Fails:
			return Fails
		case Inconclusive:
			v = Inconclusive
		}
	}
	return v
}

// crossover finds the smallest key from which the difference holds at
// every larger key (keys in increasing order) and judges it against
// Between: inside holds, outside fails; no such key (the
// difference does not hold at the largest key) is inconclusive, or fails
// when the difference fails there.
func crossover(c Claim, fs []Finding) (*Finding, Verdict) {
	k := len(fs)
	for k > 0 && fs[k-1].Verdict == Holds {
		k--
	}
	s := &Finding{Label: "crossover of " + c.Curves[0] + " over " + c.Curves[1], Lo: math.NaN(), Hi: math.NaN(), Value: math.NaN()}
	if k == len(fs) {
		if len(fs) > 0 && fs[len(fs)-1].Verdict == Fails {
			return s, Fails
		}
		return s, Inconclusive
	}
	s.Key = fs[k].Key
	x, err := strconv.ParseFloat(s.Key, 64)
	if err != nil {
		return s, Inconclusive
	}
	s.Value = x
	if x >= c.Between[0] && x <= c.Between[1] {
		return s, Holds
	}
	return s, Fails
}

// fractionBelow is the fraction of xs below b (NaN for none).
func fractionBelow(xs []float64, b float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	n := 0
	for _, x := range xs {
		if x < b {
			n++
		}
	}
	return float64(n) / float64(len(xs))
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

// ranked returns the curve with the lowest (or highest) mean at p and the
// runner-up; ties go to the earlier curve.
func ranked(p *Point, curves []string, lowest bool) (win, run string) {
	order := slices.Clone(curves)
	slices.SortStableFunc(order, func(a, b string) int {
		ma, mb := mean(p.Values[a]), mean(p.Values[b])
		if !lowest {
			ma, mb = -ma, -mb
		}
		switch {
		case ma < mb:
			return -1
		case ma > mb:
			return 1
		}
		return 0
	})
	return order[0], order[1]
}

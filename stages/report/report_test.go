package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// table builds a per-seed table from "panel curve seed x y" lines.
func table(t *testing.T, lines ...string) Table {
	t.Helper()
	var b strings.Builder
	b.WriteString("panel,curve,seed,x,y\n")
	for _, l := range lines {
		b.WriteString(strings.Join(strings.Fields(l), ",") + "\n")
	}
	tb, err := ParseSeedsCSV([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// unpanelled builds a per-seed table of a figure without panels from
// "\"\" curve seed x y" lines (the empty panel written as "").
func unpanelled(t *testing.T, lines ...string) Table {
	t.Helper()
	var b strings.Builder
	b.WriteString("panel,curve,seed,x,y\n")
	for _, l := range lines {
		b.WriteString(strings.ReplaceAll(strings.Join(strings.Fields(l), ","), `""`, "") + "\n")
	}
	tb, err := ParseSeedsCSV([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestPointAtLastCommonAndX(t *testing.T) {
	tb := table(t,
		"p a 1 10 1", "p a 1 20 2", "p a 1 30 3",
		"p a 2 10 4", "p a 2 20 5", "p a 2 30 6",
		"p b 1 10 7", "p b 1 20 8",
		"p b 2 10 9", "p b 2 20 10",
	)
	for _, c := range []struct {
		at   string
		want string
	}{
		{"last", "a@30 [3 6]; b@20 [8 10]"},
		{"common", "a@20 [2 5]; b@20 [8 10]"},
		{"15", "a@10 [1 4]; b@10 [7 9]"},
	} {
		at, err := ParseAt(c.at)
		if err != nil {
			t.Fatal(err)
		}
		p, err := tb.Point("p", []string{"a", "b"}, at)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("a@%v %v; b@%v %v", p.X["a"], p.Values["a"], p.X["b"], p.Values["b"])
		if got != c.want {
			t.Errorf("at %s: %s, want %s", c.at, got, c.want)
		}
	}
	if _, err := tb.Point("p", []string{"a", "c"}, At{}); err == nil {
		t.Error("a curve without points is not an error")
	}
	if _, err := ParseAt("soon"); err == nil {
		t.Error(`ParseAt("soon") is not an error`)
	}
}

// With the same seeds, b = a + 1 seed by seed: the paired t interval of
// a − b is exactly [−1, −1] (the per-seed differences do not vary); the
// same numbers on other seeds (unpaired) give Welch's wide interval around
// −1, with which the claim is inconclusive.
func TestPairedAndUnpairedDifferences(t *testing.T) {
	paired := table(t, "p a 1 1 0", "p a 2 1 10", "p a 3 1 20", "p b 1 1 1", "p b 2 1 11", "p b 3 1 21")
	r := Evaluate(Claim{Stat: StatDifference, Curves: []string{"a", "b"}, Expect: "<", Threshold: 0}, paired)
	f := r.Findings[0]
	if f.Value != -1 || f.Lo != -1 || f.Hi != -1 || r.Verdict != Holds || f.Seeds != 3 || f.Method != MethodPairedT {
		t.Errorf("paired: %+v, verdict %s", f, r.Verdict)
	}
	unpaired := table(t, "p a 1 1 0", "p a 2 1 10", "p a 3 1 20", "p b 4 1 1", "p b 5 1 11", "p b 6 1 21")
	r = Evaluate(Claim{Stat: StatDifference, Curves: []string{"a", "b"}, Expect: "<", Threshold: 0}, unpaired)
	f = r.Findings[0]
	// Welch: both variances 100, df 4: −1 ± 2.776445·√(200/3).
	if f.Value != -1 || math.Abs(f.Lo-(-1-2.776445*math.Sqrt(200.0/3))) > 1e-5 || r.Verdict != Inconclusive || f.Method != MethodWelch {
		t.Errorf("unpaired: %+v, verdict %s", f, r.Verdict)
	}
}

func TestJudge(t *testing.T) {
	iv := func(lo, hi float64) Interval { return Interval{Lo: lo, Hi: hi} }
	for _, c := range []struct {
		iv     Interval
		expect string
		thr    float64
		tol    float64
		want   Verdict
	}{
		{iv(1, 2), ">", 0, 0, Holds}, {iv(-1, 2), ">", 0, 0, Inconclusive}, {iv(-2, -1), ">", 0, 0, Contradicted}, {iv(-2, 0), ">", 0, 0, Contradicted},
		{iv(-2, -1), "<", 0, 0, Holds}, {iv(0, 1), "<", 0, 0, Contradicted},
		{iv(-0.6, -0.4), "~", -0.5, 0.15, Holds}, {iv(-0.9, -0.4), "~", -0.5, 0.15, Inconclusive}, {iv(-1.2, -0.8), "~", -0.5, 0.15, Contradicted},
		{iv(math.NaN(), 1), ">", 0, 0, Inconclusive}, {iv(math.Inf(-1), math.Inf(1)), ">", 0, 0, Inconclusive},
	} {
		if got := judge(c.iv, c.expect, c.thr, c.tol); got != c.want {
			t.Errorf("judge(%v %s %v±%v) = %s, want %s", c.iv, c.expect, c.thr, c.tol, got, c.want)
		}
	}
}

// A final-value figure (keys are the x values of the one panel): ExAct
// ahead at x = 1, level at 2, ARS ahead from 3: the crossover is 3, and
// ARS is ahead at every x from 4 on, so the claim "ahead from 3-4 on"
// holds; an order claim is contradicted at x = 1. When ARS is level at 4
// too, the claim is inconclusive (it was "fails", although no key from 4 on
// was against it), and contradicted only when ExAct is ahead there.
func TestCrossoverAndOrder(t *testing.T) {
	var lines []string
	// ars − exact = d + noise on seeds 1..3, noise −1, 0, 1.
	for seed, noise := range []float64{-1, 0, 1} {
		for x, d := range []float64{-5, 0, 5, 5} {
			lines = append(lines, fmt.Sprintf(`"" ars %d %d %v`, seed+1, x+1, 10+d+noise/2), fmt.Sprintf(`"" exact %d %d %v`, seed+1, x+1, 10-noise/2))
		}
	}
	tb := unpanelled(t, lines...)
	r := Evaluate(Claim{Stat: StatCrossover, Curves: []string{"ars", "exact"}, Over: "x", Between: [2]float64{3, 4}}, tb)
	if r.Summary == nil || r.Summary.Value != 3 || r.Verdict != Holds {
		t.Fatalf("crossover: %+v %+v %s %s", r.Summary, r.Findings, r.Verdict, r.Problem)
	}
	var verdicts []Verdict
	for _, f := range r.Findings {
		verdicts = append(verdicts, f.Verdict)
	}
	// Keys before the claimed crossover (4) are shown, not judged (issue
	// 43: ExAct ahead at x = 1 read "contradicted" inside a claim about
	// x >= 4).
	if fmt.Sprint(verdicts) != "[reported reported reported holds]" {
		t.Errorf("per-x verdicts %v", verdicts)
	}
	if r := Evaluate(Claim{Stat: StatCrossover, Curves: []string{"ars", "exact"}, Over: "x", Between: [2]float64{2, 3}}, tb); r.Verdict != Holds {
		t.Errorf("ahead from 2-3 on: %s, want holds (x = 2 is in the claimed range, not judged)", r.Verdict)
	}
	if r := Evaluate(Claim{Stat: StatCrossover, Curves: []string{"ars", "exact"}, Over: "x", Between: [2]float64{1, 2}}, tb); r.Verdict != Inconclusive {
		t.Errorf("ahead from 1-2 on: %s, want inconclusive (level at 2)", r.Verdict)
	}
	if r := Evaluate(Claim{Stat: StatCrossover, Curves: []string{"ars", "exact"}, Over: "x", Between: [2]float64{0, 1}}, tb); r.Verdict != Contradicted {
		t.Errorf("ahead from 0-1 on: %s, want contradicted (behind at 1)", r.Verdict)
	}
	// A claimed crossover beyond the grid's last key has nothing to judge:
	// not run, saying which keys were computed (Humanoid's, at H = 20.6 to
	// 34.3, on a grid that stopped at 34), and explained.
	r = Evaluate(Claim{Stat: StatCrossover, Curves: []string{"ars", "exact"}, Over: "x", Between: [2]float64{3, 4.5}}, tb)
	if want := "no point at x ≥ 4.5, where the claimed crossover has happened: this profile computes x = 1, 2, 3, 4"; r.Verdict != NotRun || r.Problem != want || Explain(r) != want+"." {
		t.Errorf("ahead from 3-4.5 on, keys to 4: %s, %q, explained %q; want not-run, %q", r.Verdict, r.Problem, Explain(r), want)
	}
	r = Evaluate(Claim{Stat: StatOrder, Curves: []string{"ars", "exact"}, Over: "x", Expect: ">"}, tb)
	if r.Verdict != Contradicted {
		t.Errorf("order ars > exact at every x: %s, want contradicted", r.Verdict)
	}
	r = Evaluate(Claim{Stat: StatDifference, Curves: []string{"ars", "exact"}, Over: "x", Keys: []string{"3", "4"}, Expect: ">"}, tb)
	if r.Verdict != Holds || len(r.Findings) != 2 {
		t.Errorf("ars ahead at x = 3, 4: %s, %d findings", r.Verdict, len(r.Findings))
	}
}

// A crossover over several rivals (ARS against every ExAct estimator):
// ahead of the best of them at a key only when ahead of each; the summary
// is the key from which it is ahead of all at every larger key.
func TestCrossoverOverSeveralRivals(t *testing.T) {
	var lines []string
	// ars − exact = −5, 0, 5, 5 and ars − exact_all = −5, −5, −5, 5 at
	// x = 1..4 (noise −1, 0, 1 over seeds 1..3).
	for seed, noise := range []float64{-1, 0, 1} {
		for x, d := range [][2]float64{{-5, -5}, {0, -5}, {5, -5}, {5, 5}} {
			lines = append(lines, fmt.Sprintf(`"" ars %d %d %v`, seed+1, x+1, 10+noise/2),
				fmt.Sprintf(`"" exact %d %d %v`, seed+1, x+1, 10-d[0]-noise/2),
				fmt.Sprintf(`"" exact_all %d %d %v`, seed+1, x+1, 10-d[1]-noise/2))
		}
	}
	tb := unpanelled(t, lines...)
	one := Evaluate(Claim{Stat: StatCrossover, Curves: []string{"ars", "exact"}, Over: "x", Between: [2]float64{2, 3}}, tb)
	all := Evaluate(Claim{Stat: StatCrossover, Curves: []string{"ars", "exact", "exact_all"}, Over: "x", Between: [2]float64{2, 3}}, tb)
	if one.Verdict != Holds || one.Summary.Value != 3 || one.Summary.Label != "crossover of ars over exact" {
		t.Errorf("against exact alone: %s, summary %+v", one.Verdict, one.Summary)
	}
	if all.Verdict != Contradicted || all.Summary.Value != 4 || all.Summary.Label != "crossover of ars over exact, exact_all" {
		t.Errorf("against exact and exact_all: %s (want contradicted: behind exact_all at 3), summary %+v", all.Verdict, all.Summary)
	}
	if len(all.Findings) != 8 || all.Findings[5].Label != "ars − exact_all" || all.Findings[5].Verdict != Contradicted {
		t.Errorf("findings: %d, the sixth %+v", len(all.Findings), all.Findings[5])
	}
	if d := describe(all.Claim); !strings.Contains(d, "ars − each of exact, exact_all > 0 at every key from 3 on") {
		t.Errorf("describe: %q", d)
	}
	if late := Evaluate(Claim{Stat: StatCrossover, Curves: []string{"ars", "exact", "exact_all"}, Over: "x", Between: [2]float64{3, 4}}, tb); late.Verdict != Holds {
		t.Errorf("ahead of both from 3-4 on: %s", late.Verdict)
	}
}

// Exact power laws: a/b = d (trend slope 1) and y = x^−1/2 (slope −1/2),
// the same slope on every seed, so the intervals collapse onto the values.
func TestTrendAndSlope(t *testing.T) {
	var lines []string
	for _, d := range []float64{10, 100, 1000} {
		for s := 1; s <= 3; s++ {
			lines = append(lines, fmt.Sprintf("%v a %d 1 %v", d, s, 2*d*float64(s)), fmt.Sprintf("%v b %d 1 %v", d, s, 2*float64(s)))
			for _, x := range []float64{100, 10000} {
				lines = append(lines, fmt.Sprintf("%v r %d %v %v", d, s, x, float64(s)/math.Sqrt(x)))
			}
		}
	}
	tb := table(t, lines...)
	r := Evaluate(Claim{Stat: StatTrend, Curves: []string{"a", "b"}, Expect: ">", Threshold: 0}, tb)
	if r.Summary == nil || math.Abs(r.Summary.Value-1) > 1e-12 || math.Abs(r.Summary.Lo-1) > 1e-12 || r.Verdict != Holds {
		t.Errorf("trend: %+v %s %s", r.Summary, r.Verdict, r.Problem)
	}
	r = Evaluate(Claim{Stat: StatSlope, Curves: []string{"r"}, Expect: "~", Threshold: -0.5, Tolerance: 0.05}, tb)
	if len(r.Findings) != 3 || r.Verdict != Holds {
		t.Fatalf("slope: %+v %s %s", r.Findings, r.Verdict, r.Problem)
	}
	for _, f := range r.Findings {
		if math.Abs(f.Value+0.5) > 1e-12 || f.Seeds != 3 {
			t.Errorf("slope in panel %s: %+v", f.Key, f)
		}
	}
}

// A slope without a claimed side is reported, never judged: Theorem 1's
// rate is an upper bound's, and the report shows the measured slope
// without a verdict.
func TestSlopeReported(t *testing.T) {
	tb := table(t, "10 r 1 100 1", "10 r 1 10000 0.1", "10 r 2 100 2", "10 r 2 10000 0.2")
	r := Evaluate(Claim{Stat: StatSlope, Curves: []string{"r"}}, tb)
	if r.Verdict != Reported || len(r.Findings) != 1 || r.Findings[0].Verdict != Reported || math.Abs(r.Findings[0].Value+0.5) > 1e-12 {
		t.Fatalf("reported slope: %+v %s %s", r.Findings, r.Verdict, r.Problem)
	}
	if d := describe(r.Claim); d != "slope of log r against log x per seed, per panel" {
		t.Errorf("describe = %q", d)
	}
}

// Known answers of a bound claim, worked by hand: the bound is
// 2·(p + 1)^0.5·x^−0.5; in panel 3 at x = 4 it is 2·2·0.5 = 2, at x = 16 it
// is 1. Seeds 1.0 and 1.4 at x = 4 give ratios 0.5 and 0.7 (mean 0.6, sd
// √0.02, t₀.₉₇₅(1) = 12.706: half-width 12.706·0.1 = 1.2706, so the
// interval [−0.67, 1.87] straddles 1: inconclusive); seeds 0.1 and 0.1 at
// x = 16 give 0.1 exactly (holds); in panel 8 (bound 2·3·x^−0.5 = 3 at
// x = 4) the seeds 6.3 and 6.3 give 2.1 (contradicted).
func TestBound(t *testing.T) {
	tb := table(t, "3 a 1 4 1.0", "3 a 2 4 1.4", "3 a 1 16 0.1", "3 a 2 16 0.1", "8 a 1 4 6.3", "8 a 2 4 6.3")
	b := Bound{Coef: 2, PanelAdd: 1, PanelPow: 0.5, XPow: -0.5}
	if got := b.At(4, 3); got != 2 {
		t.Fatalf("bound at x = 4, p = 3: %v, want 2", got)
	}
	c := Claim{Stat: StatBound, Curves: []string{"a"}, Expect: "<", Threshold: 1, Bound: b}
	r := Evaluate(c, tb)
	if len(r.Findings) != 3 {
		t.Fatalf("findings: %+v (%s)", r.Findings, r.Problem)
	}
	want := []struct {
		key, x string
		value  float64
		v      Verdict
	}{{"3", "x = 4", 0.6, Inconclusive}, {"3", "x = 16", 0.1, Holds}, {"8", "x = 4", 2.1, Contradicted}}
	for i, w := range want {
		f := r.Findings[i]
		if f.Key != w.key || f.X != w.x || math.Abs(f.Value-w.value) > 1e-12 || f.Verdict != w.v || f.Seeds != 2 {
			t.Errorf("finding %d: %+v, want key %s at %s value %v %s", i, f, w.key, w.x, w.value, w.v)
		}
	}
	if f := r.Findings[0]; math.Abs(f.Hi-(0.6+12.706204736174705*0.1)) > 1e-9 {
		t.Errorf("interval at x = 4: [%v, %v], want 0.6 ± 1.2706", f.Lo, f.Hi)
	}
	if r.Verdict != Contradicted {
		t.Errorf("verdict %s, want contradicted (one finding is)", r.Verdict)
	}
	if d := describe(c); d != "mean of a / bound, the bound 2·(p + 1)^0.5·x^-0.5 (p the panel's key), at every x, per panel < 1" {
		t.Errorf("describe = %q", d)
	}
	if r := Evaluate(c, table(t, "ten a 1 4 1")); r.Verdict != Inconclusive || !strings.Contains(r.Problem, "numeric panels") {
		t.Errorf("a non-numeric panel: %s %q", r.Verdict, r.Problem)
	}
	// A bound that does not depend on the panel takes any panel, a figure
	// without panels too: 4·x^−0.5 is 2 at x = 4, so 1.0 and 1.4 give 0.6.
	flat := Claim{Stat: StatBound, Curves: []string{"a"}, Expect: "<", Threshold: 1, Bound: Bound{Coef: 4, XPow: -0.5}}
	if r := Evaluate(flat, unpanelled(t, `"" a 1 4 1.0`, `"" a 2 4 1.4`)); len(r.Findings) != 1 || math.Abs(r.Findings[0].Value-0.6) > 1e-12 || r.Verdict != Inconclusive {
		t.Errorf("a bound without panels: %+v %s %q", r.Findings, r.Verdict, r.Problem)
	}
}

// The same claim on the same table gives the same bits.
func TestDeterministic(t *testing.T) {
	tb := table(t, "p a 1 1 0.3", "p a 2 1 1.7", "p a 3 1 0.9", "p b 1 1 1.1", "p b 2 1 0.2", "p b 3 1 2.5")
	c := Claim{Stat: StatRatio, Curves: []string{"a", "b"}, Expect: "<", Threshold: 1}
	a, b := Evaluate(c, tb), Evaluate(c, tb)
	if fmt.Sprintf("%#v", a) != fmt.Sprintf("%#v", b) {
		t.Errorf("two evaluations differ:\n%#v\n%#v", a, b)
	}
	v := Evaluate(Claim{Stat: StatValue, Curves: []string{"a", "b"}}, tb)
	if v.Verdict != Reported || len(v.Findings) != 2 || v.Findings[0].Value != (0.3+1.7+0.9)/3 {
		t.Errorf("value: %+v", v)
	}
	bad := Evaluate(Claim{Stat: "mode", Curves: []string{"a"}}, tb)
	if bad.Verdict != Inconclusive || !strings.Contains(bad.Problem, `unknown statistic "mode"`) {
		t.Errorf("unknown statistic: %+v", bad)
	}
}

// Fractions, medians and the best curve, on numbers worked by hand: x = 1,
// a = 50, 100, 100 (one of three seeds below the cap of 100), median 100;
// x = 2 every seed at the cap: 0 of 3, whose exact interval [0, 0.708]
// does not show a fraction below 0.5 (three seeds cannot), while 0 of 10
// would ([0, 0.308]). b is 2 below c on every seed and 6 below d on
// average, so b, the claimed lowest, is clearly below both; claiming d
// lowest is contradicted.
func TestFractionMedianBest(t *testing.T) {
	tb := table(t, "p a 1 1 50", "p a 2 1 100", "p a 3 1 100", "p a 1 2 100", "p a 2 2 100", "p a 3 2 100",
		"q b 1 1 1", "q b 2 1 5", "q b 3 1 3", "q c 1 1 3", "q c 2 1 7", "q c 3 1 5", "q d 1 1 9", "q d 2 1 9", "q d 3 1 9")
	r := Evaluate(Claim{Stat: StatFraction, Curves: []string{"a"}, Over: "x", Panel: "p", Below: 100}, tb)
	if r.Verdict != Reported || len(r.Findings) != 2 || r.Findings[0].Value != 1.0/3 || r.Findings[1].Value != 0 || r.Findings[0].Method != MethodExact {
		t.Errorf("fraction: %+v", r)
	}
	capped := Evaluate(Claim{Stat: StatFraction, Curves: []string{"a"}, Over: "x", Panel: "p", Keys: []string{"2"}, Below: 100, Expect: "<", Threshold: 0.5}, tb)
	if f := capped.Findings[0]; capped.Verdict != Inconclusive || f.Lo != 0 || math.Abs(f.Hi-0.7075982) > 1e-6 {
		t.Errorf("every run capped, three seeds: %+v", capped)
	}
	m := Evaluate(Claim{Stat: StatMedian, Curves: []string{"a"}, Over: "x", Panel: "p", Keys: []string{"1"}, Cap: 100}, tb)
	if f := m.Findings[0]; f.Value != 100 || !math.IsInf(f.Lo, -1) || !math.IsInf(f.Hi, 1) || m.Verdict != Reported {
		t.Errorf("median: %+v", m)
	}
	b := Evaluate(Claim{Stat: StatBest, Curves: []string{"d", "c", "b"}, Winner: "b", Keys: []string{"q"}, Expect: "<"}, tb)
	if len(b.Findings) != 2 || b.Verdict != Holds || b.Findings[1].Label != "b − c (claimed lowest: b)" || b.Findings[1].Value != -2 || b.Findings[1].Hi != -2 {
		t.Errorf("best: %+v", b)
	}
	if d := Evaluate(Claim{Stat: StatBest, Curves: []string{"d", "c", "b"}, Winner: "d", Keys: []string{"q"}, Expect: "<"}, tb); d.Verdict != Contradicted {
		t.Errorf("d claimed lowest: %s, want contradicted", d.Verdict)
	}
}

// A censoring-aware increase: each seed compared with itself between the
// first and the last key, capped values only known to be at least the cap.
// Seeds 1-4 need more samples at the last key (two of them capped there),
// seed 5 fewer, seed 6 is capped at both (a tie, left out): 4 of 5.
func TestIncreaseWithCensoring(t *testing.T) {
	var lines []string
	for s, v := range [][2]float64{{10, 20}, {30, 100}, {5, 100}, {50, 60}, {40, 20}, {100, 100}} {
		lines = append(lines, fmt.Sprintf("p a %d 1 %v", s+1, v[0]), fmt.Sprintf("p a %d 9 %v", s+1, v[1]))
	}
	r := Evaluate(Claim{Stat: StatIncrease, Curves: []string{"a"}, Over: "x", Panel: "p", Expect: ">", Cap: 100}, table(t, lines...))
	f := r.Findings[0]
	if f.Value != 0.8 || f.Seeds != 5 || f.Method != MethodSign || r.Verdict != Inconclusive {
		t.Errorf("increase: %+v %s", f, r.Verdict)
	}
}

// Sample efficiency: the mean of log₁₀ y over log₁₀ x from the curves'
// common first x. a = 10^−log₁₀x on [1, 100] has mean −1 over [0, 2]; b
// starts at x = 10, so the range is [1, 2] and a's mean there is −1.5.
func TestLogAUC(t *testing.T) {
	tb := table(t, "p a 1 1 1", "p a 1 10 0.1", "p a 1 100 0.01", "p b 1 10 1", "p b 1 100 1", "p a 2 1 1", "p a 2 10 0.1", "p a 2 100 0.01", "p b 2 10 1", "p b 2 100 1")
	r := Evaluate(Claim{Stat: StatValue, Curves: []string{"a"}, Measure: MeasureLogAUC}, tb)
	if v := r.Findings[0].Value; math.Abs(v+1) > 1e-12 {
		t.Errorf("a alone: %v, want −1", v)
	}
	r = Evaluate(Claim{Stat: StatDifference, Curves: []string{"a", "b"}, Measure: MeasureLogAUC, Expect: "<"}, tb)
	if f := r.Findings[0]; math.Abs(f.Value+1.5) > 1e-12 || r.Verdict != Holds {
		t.Errorf("a − b: %+v %s", f, r.Verdict)
	}
}

// "common" counts a curve that passes the common x by at most one batch
// as reaching it (issue 28: REINFORCE's last point, 96 samples past 10^5,
// was left out), and "matched" takes one x for every panel.
func TestCommonWithOvershootAndMatched(t *testing.T) {
	tb := table(t, "p a 1 50000 5", "p a 1 100000 4", "p b 1 50000 7", "p b 1 100096 3",
		"q a 1 50000 2", "q a 1 300000 1", "q b 1 50000 3", "q b 1 300000 2")
	p, err := tb.Point("p", []string{"a", "b"}, At{Common: true})
	if err != nil || p.X["b"] != 100096 || p.Values["b"][0] != 3 {
		t.Errorf("common: %+v %v", p, err)
	}
	r := Evaluate(Claim{Stat: StatValue, Curves: []string{"a", "b"}, At: At{Matched: true}}, tb)
	if len(r.Findings) != 4 || r.Findings[2].Value != 2 || r.Findings[2].X != "x = 50000" {
		t.Errorf("matched: %+v", r.Findings)
	}
}

// A growing gap: a − b = seed + 2·key on every seed, so each seed's slope
// against the key is 2 and the interval collapses onto it.
func TestGrowth(t *testing.T) {
	var lines []string
	for s := 1; s <= 3; s++ {
		for _, h := range []int{1, 5, 15} {
			lines = append(lines, fmt.Sprintf(`"" a %d %d %d`, s, h, 10+s+2*h), fmt.Sprintf(`"" b %d %d 10`, s, h))
		}
	}
	tb := unpanelled(t, lines...)
	r := Evaluate(Claim{Stat: StatGrowth, Curves: []string{"a", "b"}, Over: "x", Expect: ">"}, tb)
	if r.Summary == nil || r.Summary.Value != 2 || r.Summary.Lo != 2 || r.Verdict != Holds || r.Summary.Seeds != 3 {
		t.Errorf("growth: %+v %s %s", r.Summary, r.Verdict, r.Problem)
	}
}

// A claim about x values the figure has no point at (the horizons beyond
// 200, which only the horizon-long profile computes) is not run in this
// profile, saying which x it has; with some of its x present it is
// computed on those.
func TestClaimAboutPointsNotComputedIsNotRun(t *testing.T) {
	c := Claim{Stat: StatDifference, Curves: []string{"a", "b"}, Over: "x", Panel: "p", Keys: []string{"500", "1000"}, Expect: ">"}
	rows := []string{"p a 1 15 3", "p a 2 15 4", "p b 1 15 1", "p b 2 15 2", "p a 1 200 5", "p a 2 200 6", "p b 1 200 1", "p b 2 200 2"}
	r := Evaluate(c, table(t, rows...))
	if r.Verdict != NotRun || r.Problem != "no point at x = 500, 1000 of panel p: this profile computes x = 15, 200" || len(r.Findings) != 0 {
		t.Errorf("keys the figure lacks: %s %q %v", r.Verdict, r.Problem, r.Findings)
	}
	for n, want := range map[string]string{"": "inconclusive", "–": "inconclusive", "1": "inconclusive with 1 seed", "10": "inconclusive with 10 seeds", "2–5": "inconclusive with 2–5 seeds"} {
		if got := verdictText(Inconclusive, n); got != want {
			t.Errorf("inconclusive with seeds %q reads %q, want %q", n, got, want)
		}
	}
	if got := verdictText(r.Verdict, ""); got != "not run in this profile" {
		t.Errorf("verdict text %q", got)
	}
	r = Evaluate(c, table(t, append(rows, "p a 1 500 9", "p a 2 500 8", "p b 1 500 1", "p b 2 500 2")...))
	if r.Verdict == NotRun || r.Problem != "" || len(r.Findings) != 1 || r.Findings[0].Key != "500" {
		t.Errorf("one of the keys present: %s %q %+v", r.Verdict, r.Problem, r.Findings)
	}
	// A curve missing from the panel altogether is the profile's choice
	// too (the smoke profile runs no constant-eps natural REINFORCE): a
	// claim's curves are checked against its figure's curves in dag.yaml
	// (TestClaimCurvesAreDrawn in stages), so a misspelt one cannot get
	// here.
	if r := Evaluate(c, table(t, "q a 1 500 9")); r.Verdict != NotRun || !strings.Contains(r.Problem, `curve "a" has no points in panel "p": this profile does not compute it there`) {
		t.Errorf("a curve with no points in the panel: %s %q", r.Verdict, r.Problem)
	}
	// Panels the profile does not compute (the smoke profile's linear
	// regression runs d = 10 only): a panel claim about d = 100 and 1000,
	// and a trend across d, which needs two of them.
	one := table(t, "10 a 1 500 9", "10 a 2 500 8", "10 b 1 500 1", "10 b 2 500 2")
	if r := Evaluate(Claim{Stat: StatDifference, Curves: []string{"a", "b"}, Keys: []string{"100", "1000"}, Expect: ">"}, one); r.Verdict != NotRun ||
		r.Problem != "the figure has none of the panels 100, 1000: this profile computes 10" {
		t.Errorf("panels the figure lacks: %s %q", r.Verdict, r.Problem)
	}
	if r := Evaluate(Claim{Stat: StatTrend, Curves: []string{"a", "b"}, Expect: ">"}, one); r.Verdict != NotRun ||
		r.Problem != "a trend needs at least two keys; this profile computes 1 (10)" {
		t.Errorf("a trend over one panel: %s %q", r.Verdict, r.Problem)
	}
}

// The companion views a plot made are shown under its figure, in the
// order of companionViews, each with its caption; a view not made is not
// mentioned.
func TestCompanionViewsShown(t *testing.T) {
	svg := func(s string) []byte {
		return []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><text style="font-family:Liberation Serif;">` + s + `</text></svg>`)
	}
	f := &Figure{Name: "crossover", svg: svg("main"), views: make([][]byte, len(companionViews))}
	f.views[3], f.views[4] = svg("differences"), svg("scaling")
	d := newDocument("t", Scale{Profile: "crossover"}, []*Figure{f}, nil)
	page, md := string(d.HTML([]*Figure{f})), string(d.Markdown())
	di, si := strings.Index(page, ">differences</text>"), strings.Index(page, ">scaling</text>")
	if di < 0 || si < di || !strings.Contains(page[di:], "<figcaption>The leader's final return minus each rival's") || !strings.Contains(page[si:], "<figcaption>Each body's crossover horizon, bracketed") {
		t.Errorf("the page does not show the difference and scaling views, in order, with their captions")
	}
	for _, want := range []string{"![crossover: differences](crossover-difference-view.svg)", "![crossover: crossover horizon against d/p](crossover-scaling-view.svg)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(md, "ratio-view") || strings.Contains(page, "ratio of the two methods") {
		t.Error("a view the plot did not make is mentioned")
	}
}

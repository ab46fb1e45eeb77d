package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func rng() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }

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

// Type-7 quantiles, as R's quantile(c(1,2,3,4), c(0.025, 0.5, 0.975)):
// 1.075, 2.5, 3.925.
func TestQuantileType7(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	for q, want := range map[float64]float64{0.025: 1.075, 0.5: 2.5, 0.975: 3.925, 1: 4, 0: 1} {
		if got := quantile(xs, q); math.Abs(got-want) > 1e-12 {
			t.Errorf("quantile(%v) = %v, want %v", q, got, want)
		}
	}
}

// With the same seeds, b = a + 1 seed by seed: the paired bootstrap's
// interval of a − b is exactly [−1, −1]; the same numbers on other seeds
// (unpaired) give a wide interval around −1.
func TestPairedBootstrap(t *testing.T) {
	paired := table(t, "p a 1 1 0", "p a 2 1 10", "p a 3 1 20", "p b 1 1 1", "p b 2 1 11", "p b 3 1 21")
	r := Evaluate(Claim{Stat: StatDifference, Curves: []string{"a", "b"}, Expect: "<", Threshold: 0}, paired, rng())
	f := r.Findings[0]
	if f.Value != -1 || math.Abs(f.Lo+1) > 1e-12 || math.Abs(f.Hi+1) > 1e-12 || r.Verdict != Holds || f.Seeds != 3 {
		t.Errorf("paired: %+v, verdict %s", f, r.Verdict)
	}
	unpaired := table(t, "p a 1 1 0", "p a 2 1 10", "p a 3 1 20", "p b 4 1 1", "p b 5 1 11", "p b 6 1 21")
	r = Evaluate(Claim{Stat: StatDifference, Curves: []string{"a", "b"}, Expect: "<", Threshold: 0}, unpaired, rng())
	f = r.Findings[0]
	if f.Value != -1 || !(f.Lo < -10 && f.Hi > 8) || r.Verdict != Inconclusive {
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
		{iv(1, 2), ">", 0, 0, Holds}, {iv(-1, 2), ">", 0, 0, Inconclusive}, {iv(-2, -1), ">", 0, 0, Fails}, {iv(-2, 0), ">", 0, 0, Fails},
		{iv(-2, -1), "<", 0, 0, Holds}, {iv(0, 1), "<", 0, 0, Fails},
		{iv(-0.6, -0.4), "~", -0.5, 0.15, Holds}, {iv(-0.9, -0.4), "~", -0.5, 0.15, Inconclusive}, {iv(-1.2, -0.8), "~", -0.5, 0.15, Fails},
		{iv(math.NaN(), 1), ">", 0, 0, Inconclusive},
	} {
		if got := judge(c.iv, c.expect, c.thr, c.tol); got != c.want {
			t.Errorf("judge(%v %s %v±%v) = %s, want %s", c.iv, c.expect, c.thr, c.tol, got, c.want)
		}
	}
}

// A final-value figure (keys are the x values of the one panel): ExAct
// ahead at x = 1, level at 2, ARS ahead from 3: the crossover is 3, inside
// the claimed [3, 4]; an order claim fails at x = 1.
func TestCrossoverAndOrder(t *testing.T) {
	var lines []string
	// ars − exact = d + noise on seeds 1..3, noise −1, 0, 1.
	for seed, noise := range []float64{-1, 0, 1} {
		for x, d := range []float64{-5, 0, 5, 5} {
			lines = append(lines, fmt.Sprintf(`"" ars %d %d %v`, seed+1, x+1, 10+d+noise/2), fmt.Sprintf(`"" exact %d %d %v`, seed+1, x+1, 10-noise/2))
		}
	}
	var b strings.Builder
	b.WriteString("panel,curve,seed,x,y\n")
	for _, l := range lines {
		b.WriteString(strings.ReplaceAll(strings.Join(strings.Fields(l), ","), `""`, "") + "\n")
	}
	tb, err := ParseSeedsCSV([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	r := Evaluate(Claim{Stat: StatCrossover, Curves: []string{"ars", "exact"}, Over: "x", Between: [2]float64{3, 4}}, tb, rng())
	if r.Summary == nil || r.Summary.Value != 3 || r.Verdict != Holds {
		t.Fatalf("crossover: %+v %+v %s %s", r.Summary, r.Findings, r.Verdict, r.Problem)
	}
	var verdicts []Verdict
	for _, f := range r.Findings {
		verdicts = append(verdicts, f.Verdict)
	}
	if fmt.Sprint(verdicts) != "[fails inconclusive holds holds]" {
		t.Errorf("per-x verdicts %v", verdicts)
	}
	r = Evaluate(Claim{Stat: StatOrder, Curves: []string{"ars", "exact"}, Over: "x", Expect: ">"}, tb, rng())
	if r.Verdict != Fails {
		t.Errorf("order ars > exact at every x: %s, want fails", r.Verdict)
	}
	r = Evaluate(Claim{Stat: StatDifference, Curves: []string{"ars", "exact"}, Over: "x", Keys: []string{"3", "4"}, Expect: ">"}, tb, rng())
	if r.Verdict != Holds || len(r.Findings) != 2 {
		t.Errorf("ars ahead at x = 3, 4: %s, %d findings", r.Verdict, len(r.Findings))
	}
}

// Exact power laws: a/b = d (trend slope 1) and y = x^−1/2 (slope −1/2),
// the same on every seed, so the intervals collapse onto the values.
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
	r := Evaluate(Claim{Stat: StatTrend, Curves: []string{"a", "b"}, Expect: ">", Threshold: 0}, tb, rng())
	if r.Summary == nil || math.Abs(r.Summary.Value-1) > 1e-12 || math.Abs(r.Summary.Lo-1) > 1e-12 || r.Verdict != Holds {
		t.Errorf("trend: %+v %s %s", r.Summary, r.Verdict, r.Problem)
	}
	r = Evaluate(Claim{Stat: StatSlope, Curves: []string{"r"}, Expect: "~", Threshold: -0.5, Tolerance: 0.05}, tb, rng())
	if len(r.Findings) != 3 || r.Verdict != Holds {
		t.Fatalf("slope: %+v %s %s", r.Findings, r.Verdict, r.Problem)
	}
	for _, f := range r.Findings {
		if math.Abs(f.Value+0.5) > 1e-12 || f.Seeds != 3 {
			t.Errorf("slope in panel %s: %+v", f.Key, f)
		}
	}
}

// The same claim on the same table and stream gives the same bits.
func TestDeterministic(t *testing.T) {
	tb := table(t, "p a 1 1 0.3", "p a 2 1 1.7", "p a 3 1 0.9", "p b 1 1 1.1", "p b 2 1 0.2", "p b 3 1 2.5")
	c := Claim{Stat: StatRatio, Curves: []string{"a", "b"}, Expect: "<", Threshold: 1}
	a, b := Evaluate(c, tb, rng()), Evaluate(c, tb, rng())
	if fmt.Sprintf("%#v", a) != fmt.Sprintf("%#v", b) {
		t.Errorf("two evaluations differ:\n%#v\n%#v", a, b)
	}
	v := Evaluate(Claim{Stat: StatValue, Curves: []string{"a", "b"}}, tb, rng())
	if v.Verdict != Reported || len(v.Findings) != 2 || v.Findings[0].Value != (0.3+1.7+0.9)/3 {
		t.Errorf("value: %+v", v)
	}
	bad := Evaluate(Claim{Stat: "mode", Curves: []string{"a"}}, tb, rng())
	if bad.Verdict != Inconclusive || !strings.Contains(bad.Problem, `unknown statistic "mode"`) {
		t.Errorf("unknown statistic: %+v", bad)
	}
}

// Fractions, medians and the best curve, on numbers worked by hand: x = 1,
// a = 50, 100, 100 (one of three seeds below the cap of 100), median 100;
// x = 2 every seed at the cap (fraction 0 on every replicate); b is 2
// below c on every seed, so b is clearly the lowest.
func TestFractionMedianBest(t *testing.T) {
	tb := table(t, "p a 1 1 50", "p a 2 1 100", "p a 3 1 100", "p a 1 2 100", "p a 2 2 100", "p a 3 2 100",
		"q b 1 1 1", "q b 2 1 5", "q b 3 1 3", "q c 1 1 3", "q c 2 1 7", "q c 3 1 5", "q d 1 1 9", "q d 2 1 9", "q d 3 1 9")
	r := Evaluate(Claim{Stat: StatFraction, Curves: []string{"a"}, Over: "x", Panel: "p", Below: 100}, tb, rng())
	if r.Verdict != Reported || len(r.Findings) != 2 || r.Findings[0].Value != 1.0/3 || r.Findings[1].Value != 0 {
		t.Errorf("fraction: %+v", r)
	}
	capped := Evaluate(Claim{Stat: StatFraction, Curves: []string{"a"}, Over: "x", Panel: "p", Keys: []string{"2"}, Below: 100, Expect: "~"}, tb, rng())
	if f := capped.Findings[0]; capped.Verdict != Holds || f.Lo != 0 || f.Hi != 0 {
		t.Errorf("every run capped: %+v", capped)
	}
	m := Evaluate(Claim{Stat: StatMedian, Curves: []string{"a"}, Over: "x", Panel: "p", Keys: []string{"1"}}, tb, rng())
	if m.Findings[0].Value != 100 || m.Verdict != Reported {
		t.Errorf("median: %+v", m)
	}
	b := Evaluate(Claim{Stat: StatBest, Curves: []string{"d", "c", "b"}, Keys: []string{"q"}, Expect: "<"}, tb, rng())
	if f := b.Findings[0]; b.Verdict != Holds || f.Label != "lowest: b (margin over c)" || f.Value != -2 || math.Abs(f.Hi+2) > 1e-12 {
		t.Errorf("best: %+v", b)
	}
}

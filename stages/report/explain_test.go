package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"zorepro/pipeline/task"
)

// Known answers of the exact two-sided sign test (binomial, p = 1/2):
// 10 of 10 gives 2·2^-10 = 0.001953125; 9 of 10 gives 2·11/1024 =
// 0.021484375; 8 of 10 gives 2·56/1024 = 0.109375; 5 of 10 and 0 of 0
// give 1.
func TestSignTestKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		k, n int
		p    float64
	}{{0, 10, 0.001953125}, {1, 10, 0.021484375}, {2, 10, 0.109375}, {5, 10, 1}, {0, 0, 1}, {0, 1, 1}, {0, 5, 0.0625}} {
		if got := binomTwoSided(tc.k, tc.n); math.Abs(got-tc.p) > 1e-15 {
			t.Errorf("%d of %d: p = %v, want %v", tc.k, tc.n, got, tc.p)
		}
	}
}

// The paper run's fig1-sgd-above, in miniature: SGD ahead of REINFORCE
// in 10 of 11 seeds, and one seed far behind, whose gap widens the t
// interval across 0 while the seeds lean clearly to one side. With the sign test as the primary statistic
// the claim holds; with the t interval it is inconclusive, and both show
// the sign count.
func TestSignTestAsPrimaryStatistic(t *testing.T) {
	var lines []string
	for seed := 1; seed <= 10; seed++ {
		d := 0.01
		if seed == 10 {
			d = 0.002
		}
		if seed == 3 {
			d = 0.3
		}
		lines = append(lines, fmt.Sprintf("p sgd %d 1000 %v", seed, 0.9+d), fmt.Sprintf("p reinforce %d 1000 0.9", seed))
	}
	// A seed behind by a lot: the t interval reaches below 0.
	lines = append(lines, "p sgd 11 1000 0.2", "p reinforce 11 1000 0.9")
	tb := table(t, lines...)
	c := Claim{ID: "sgd-above", Stat: StatOrder, Curves: []string{"sgd", "reinforce"}, Expect: ">"}
	byT := Evaluate(c, tb)
	c.Test = TestSign
	bySign := Evaluate(c, tb)
	if byT.Verdict != Inconclusive || bySign.Verdict != Holds {
		t.Fatalf("t interval: %s, sign test: %s; want inconclusive and holds (%+v)", byT.Verdict, bySign.Verdict, byT.Findings)
	}
	s := bySign.Findings[0].Sign
	if s == nil || s.Above != 10 || s.Below != 1 || math.Abs(s.P-binomTwoSided(1, 11)) > 1e-15 {
		t.Errorf("sign: %+v, want 10 above, 1 below, p = %v", s, binomTwoSided(1, 11))
	}
	why := Explain(byT)
	for _, want := range []string{"cannot decide", "n = 11", "sign test: 10 of 11 seeds above 0, p = 0.01172"} {
		if !strings.Contains(why, want) {
			t.Errorf("explanation %q lacks %q", why, want)
		}
	}
	if Explain(bySign) != "" {
		t.Errorf("a claim that holds plainly has an explanation: %q", Explain(bySign))
	}
	if !strings.Contains(ResultOf(byT).Findings[0].method(), "sign test: 10 of 11") {
		t.Errorf("the findings table does not show the sign count: %q", ResultOf(byT).Findings[0].method())
	}
	// The summary row leads with the primary statistic: with the sign
	// test, its count, the mean's interval beside it; with the interval,
	// the interval alone.
	cr := ResultOf(bySign)
	if cr.Test != TestSign || !strings.HasPrefix(cr.Statistic, "exact paired sign test of the per-seed differences (primary), beside the mean: ") ||
		!strings.HasPrefix(cr.result(), "sign test: 10 of 11 seeds above 0, p = 0.01172; mean ") {
		t.Errorf("the sign test's claim: test %q, statistic %q, result %q", cr.Test, cr.Statistic, cr.result())
	}
	if ct := ResultOf(byT); ct.Test != "" || strings.Contains(ct.Statistic, "sign") || strings.Contains(ct.result(), "sign") {
		t.Errorf("the interval's claim: test %q, statistic %q, result %q", ct.Test, ct.Statistic, ct.result())
	}
	// Seeds leaning the other way contradict it.
	c.Curves = []string{"reinforce", "sgd"}
	if r := Evaluate(c, tb); r.Verdict != Contradicted || !strings.Contains(Explain(r), "lean to the other side") {
		t.Errorf("reversed: %s, %q", r.Verdict, Explain(r))
	}
}

// A trend of the ratio of two curves that never differ by more than 10%
// has nothing to measure: uninformative, with the ratios measured; the
// same claim on curves that do differ is judged as before.
func TestPremiseMakesAClaimUninformative(t *testing.T) {
	flat := table(t,
		"10 a 1 5 1.04", "10 b 1 5 1", "10 a 2 5 1.05", "10 b 2 5 1",
		"100 a 1 5 1.02", "100 b 1 5 1", "100 a 2 5 1.01", "100 b 2 5 1",
		"1000 a 1 5 0.99", "1000 b 1 5 1", "1000 a 2 5 1.0", "1000 b 2 5 1")
	c := Claim{ID: "b-dependence", Stat: StatTrend, Curves: []string{"a", "b"}, At: At{Matched: true}, Expect: ">",
		Premise: Premise{Text: "the two curves differ by more than 10% somewhere", RatioWithin: [2]float64{0.9, 1.1}},
		Note:    "neither learner moves."}
	r := Evaluate(c, flat)
	if r.Verdict != Uninformative {
		t.Fatalf("verdict %s, want uninformative (%s)", r.Verdict, r.Premise)
	}
	why := Explain(r)
	for _, want := range []string{"Its premise, that the two curves differ by more than 10% somewhere, does not hold in the data", "1.045 at 10", "1.015 at 100", "0.995 at 1000", "never leaves [0.9, 1.1]", "This project's reading: neither learner moves."} {
		if !strings.Contains(why, want) {
			t.Errorf("explanation %q lacks %q", why, want)
		}
	}
	apart := table(t,
		"10 a 1 5 1.5", "10 b 1 5 1", "10 a 2 5 1.6", "10 b 2 5 1",
		"100 a 1 5 3", "100 b 1 5 1", "100 a 2 5 3.2", "100 b 2 5 1",
		"1000 a 1 5 9", "1000 b 1 5 1", "1000 a 2 5 9.5", "1000 b 2 5 1")
	if r := Evaluate(c, apart); r.Verdict == Uninformative || !strings.Contains(r.Premise, "which leaves") {
		t.Errorf("curves 1.5 to 9 apart: %s (%s)", r.Verdict, r.Premise)
	}
	// A profile that computes one d does not run the claim: its
	// explanation is that, without the reading of an outcome it has not.
	one := table(t, "10 a 1 5 1.04", "10 b 1 5 1", "10 a 2 5 1.05", "10 b 2 5 1")
	if r := Evaluate(c, one); r.Verdict != NotRun || Explain(r) != "a trend needs at least two keys; this profile computes 1 (10)." {
		t.Errorf("one d: %s, explained %q", r.Verdict, Explain(r))
	}
}

// A mean over runs stopped at the cap is only a lower bound: no t
// interval ("25 [−3.4, 53.4]" and "100 [100, 100]" in the paper report
// before), written "≥ mean"; without capped runs the t interval stays.
func TestCappedMeanIsALowerBound(t *testing.T) {
	tb := unpanelled(t, `"" a 1 0.05 10`, `"" a 2 0.05 100`, `"" a 3 0.05 30`, `"" a 1 0.01 10`, `"" a 2 0.01 20`, `"" a 3 0.01 30`)
	r := Evaluate(Claim{Stat: StatValue, Curves: []string{"a"}, Over: "x", Cap: 100}, tb)
	if len(r.Findings) != 2 {
		t.Fatalf("findings %+v", r.Findings)
	}
	capped, free := r.Findings[1], r.Findings[0]
	if capped.Key != "0.05" || !capped.AtLeast || !math.IsNaN(capped.Lo) || capped.interval() != "≥ 46.67" || !strings.Contains(capped.Method, "1 of 3 runs at the cap 100") {
		t.Errorf("capped point: %+v, %q", capped, capped.interval())
	}
	if free.AtLeast || math.IsNaN(free.Lo) || free.Method != MethodT {
		t.Errorf("point without capped runs: %+v", free)
	}
}

// A bound that holds by orders of magnitude says so; one that holds
// tightly does not.
func TestBoundMargin(t *testing.T) {
	tb := table(t, "10 a 1 100 0.001", "10 a 2 100 0.0012", "10 a 3 100 0.0011")
	c := Claim{Stat: StatBound, Curves: []string{"a"}, Expect: "<", Threshold: 1, Bound: Bound{Coef: 1}}
	if why := Explain(Evaluate(c, tb)); !strings.Contains(why, "2 orders of magnitude below it") || !strings.Contains(why, "far from tight") {
		t.Errorf("far inside the bound: %q", why)
	}
	c.Bound.Coef = 0.0015
	if r := Evaluate(c, tb); r.Verdict != Holds || Explain(r) != "" {
		t.Errorf("close to the bound: %s, %q", r.Verdict, Explain(r))
	}
}

// The paper's sentences no claim tests are listed in every form of the
// report, each with why; an entry without its reason is named by field.
func TestUntestedSentences(t *testing.T) {
	p := task.NewParams("dag.yaml", "report", map[string]any{"untested": []any{
		map[string]any{"section": "§4", "text": "No dependence on H <sic>.", "why": "no run measures it"},
		map[string]any{"section": "§3", "text": "sqrt(p)"},
	}})
	us := decodeUntested(p)
	if len(us) != 2 || us[0].Why != "no run measures it" || !strings.Contains(fmt.Sprint(p.Problems()), "untested[1].why") {
		t.Fatalf("decoded %+v, problems %v", us, p.Problems())
	}
	d := newDocument("R", Scale{Profile: "smoke"}, nil, nil)
	d.Untested = us[:1]
	if md := string(d.Markdown()); !strings.Contains(md, "## Sentences of the paper no claim tests") || !strings.Contains(md, "| No dependence on H <sic>. | §4 | no run measures it |") {
		t.Errorf("report.md:\n%s", md)
	}
	if h := string(d.HTML(nil)); !strings.Contains(h, `<h2 id="untested">`) || !strings.Contains(h, "No dependence on H &lt;sic&gt;.") {
		t.Errorf("report.html lacks the untested sentences")
	}
}

// A figure's provenance on the page is a table: the seeds once when every
// curve has the same, each tune stage's chosen points a table of their
// own (one row a task: its coordinates, values, score, grid edges, edge
// extension and what it carried, the carried values and their stage named
// once in the header when every row shares them), each note a line, each
// file a row.
func TestProvenanceTable(t *testing.T) {
	x := hyperSource{Stage: "tune/x", Points: []chosen{
		{Task: "tune/x/horizon=1/method=ars", Chosen: choice(t, `{"params": {"alpha": 1, "nu": 0.1}, "score": 2, "score_name": "return",
			"carried": {"nu": 0.1}, "carried_from": "tune/p/method=ars"}`), Edges: []gridEdge{{Axis: "alpha", Value: 1, Largest: true, Of: 3}}},
		{Task: "tune/x/horizon=2/method=ars", Chosen: choice(t, `{"params": {"alpha": 0.5, "nu": 0.1}, "score": 3, "score_name": "return",
			"search": {"rounds": 2, "extended": [{"round": 1, "axis": "alpha", "value": 0.3, "edge": "smallest"}, {"round": 2, "axis": "alpha", "value": 0.1, "edge": "smallest"}],
			"stopped": "the chosen point is inside the extended grid after 2 round(s)"}}`)},
	}}
	f := &Figure{Name: "fig", Task: "plot/fig", Files: map[string]string{"fig.svg": "xxh64-1", "fig.csv": "xxh64-2"},
		Curves: []CurveScale{{Curve: "ars", Seeds: []uint64{1, 2}, XMin: 1, XMax: 9}, {Curve: "sgd", Seeds: []uint64{1, 2}, XMin: 2, XMax: 9}},
		hyper:  []hyperSource{x, {Note: "SGD untuned; its rate 0.1 <fixed>"}}}
	h := f.provenanceHTML()
	for _, want := range []string{"<td>2 seeds (1, 2), every curve</td>", "<td>the same</td>",
		`<p class="prov">Hyperparameters: tuned by <code>tune/x</code>, 2 chosen points, 1 at a grid edge, 1 after an edge extension.</p>`,
		"<tr><th>horizon</th><th>method</th><th>alpha</th><th>nu</th><th>mean return</th><th>at its grid&#39;s edge</th><th>edge extension</th><th>nu carried from tune/p</th></tr>",
		"<tr><td>1</td><td>ars</td><td>1</td><td>0.1</td><td>2</td><td>alpha: largest of 3</td><td></td><td>method=ars</td></tr>",
		"<tr><td>2</td><td>ars</td><td>0.5</td><td>0.1</td><td>3</td><td></td><td>added alpha = 0.3, 0.1; inside the extended grid after 2 round(s)</td><td></td></tr>",
		`<p class="prov">Hyperparameters: SGD untuned; its rate 0.1 &lt;fixed&gt;.</p>`,
		"<tr><td><code>fig.csv</code></td><td><code>xxh64-2</code></td></tr>"} {
		if !strings.Contains(h, want) {
			t.Errorf("provenance lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, "<details") {
		t.Errorf("a table of 2 rows is folded:\n%s", h)
	}
	f.Curves[1].Seeds = []uint64{1}
	if h := f.provenanceHTML(); !strings.Contains(h, "<td>1 seeds (1)</td>") || strings.Contains(h, "every curve") {
		t.Errorf("curves with different seeds:\n%s", h)
	}
	wantMD := "Hyperparameters: tuned by `tune/x`, 2 chosen points, 1 at a grid edge, 1 after an edge extension.\n\n" +
		"| horizon | method | alpha | nu | mean return | at its grid's edge | edge extension | nu carried from tune/p |\n" +
		"|---|---|---|---|---|---|---|---|\n" +
		"| 1 | ars | 1 | 0.1 | 2 | alpha: largest of 3 |  | method=ars |\n" +
		"| 2 | ars | 0.5 | 0.1 | 3 |  | added alpha = 0.3, 0.1; inside the extended grid after 2 round(s) |  |\n"
	if got := x.markdown(); got != wantMD {
		t.Errorf("markdown:\n%s\nwant\n%s", got, wantMD)
	}
	// Points that carry different values (or from different stages) name
	// them in each cell.
	x.Points[1].Carried, x.Points[1].CarriedFrom = map[string]json.RawMessage{"alpha": json.RawMessage("0.5"), "nu": json.RawMessage("0.1")}, "tune/p/method=ars"
	if _, rows := x.table(); rows[0][7] != "nu from tune/p/method=ars" || rows[1][7] != "alpha, nu from tune/p/method=ars" {
		t.Errorf("carried cells %q, %q", rows[0][7], rows[1][7])
	}
	// A stage with more points than foldRows folds its table away under
	// a summary; the columns without an entry (edges, extension,
	// carried) are left out.
	var many hyperSource
	many.Stage = "tune/h"
	for i := range foldRows + 1 {
		many.Points = append(many.Points, chosen{Task: fmt.Sprintf("tune/h/horizon=%d", i+1), Chosen: choice(t, `{"params": {"alpha": 0.1}, "score": 1}`)})
	}
	h = many.html()
	if !strings.Contains(h, "<details class=\"prov\"><summary>the 13 chosen points of tune/h</summary>") || strings.Count(h, "<tr>") != foldRows+2 ||
		!strings.Contains(h, "<tr><th>horizon</th><th>alpha</th><th>score</th></tr>") {
		t.Errorf("a long table:\n%s", h)
	}
}

// A contradicted claim's explanation names the findings that contradict
// it first, then the inconclusive ones, four at most: with five
// inconclusive keys before the one against it, that one is still shown
// (it was hidden in "and 2 more").
func TestContradictionExplainedFirst(t *testing.T) {
	c := Claim{Stat: StatDifference, Curves: []string{"a", "b"}, Over: "x", Expect: ">"}
	r := Result{Claim: c, Verdict: Contradicted}
	for i := range 5 {
		r.Findings = append(r.Findings, Finding{Key: fmt.Sprint(i + 1), Label: "a − b", Value: 0.1, Lo: -1, Hi: 1.2, Seeds: 10, Method: MethodPairedT, Verdict: Inconclusive})
	}
	r.Findings = append(r.Findings, Finding{Key: "6", Label: "a − b", Value: -2, Lo: -3, Hi: -1, Seeds: 10, Method: MethodPairedT, Verdict: Contradicted})
	why := Explain(r)
	if want := "The data say otherwise, claimed > 0: at 6: a − b = -2 [-3, -1], n = 10, wholly on the other side of 0; at 1: "; !strings.HasPrefix(why, want) || !strings.HasSuffix(why, "and 2 more.") {
		t.Errorf("explanation %q\nwant it to start %q and end with \"and 2 more.\"", why, want)
	}
}

// A report whose every claim is this project's (the crossover profile's)
// heads their column "the claim" and says so once above the table,
// instead of "the paper says" and a note on every claim; one paper claim
// among them brings the paper's header and the notes back.
func TestAllProjectClaims(t *testing.T) {
	d := newDocument("R", Scale{Profile: "crossover"}, nil, nil)
	d.Claims = []ClaimResult{{ID: "a", Figure: "f", Text: "ARS ahead", Source: "project", Verdict: Holds}, {ID: "b", Figure: "f", Text: "grows", Source: "project", Verdict: Holds}}
	h, m := string(d.HTML(nil)), string(d.Markdown())
	for i, page := range []string{h, m} {
		header := []string{"<th>the claim</th>", "| the claim |"}[i]
		if !strings.Contains(page, header) || strings.Contains(page, "the paper says") || strings.Count(page, "not a sentence of the paper") != 1 || strings.Contains(page, "chosen by this project") {
			t.Errorf("all project claims:\n%s", page)
		}
	}
	d.Claims = append(d.Claims, ClaimResult{ID: "c", Figure: "f", Text: "from the paper", Source: "paper", Verdict: Holds})
	h, m = string(d.HTML(nil)), string(d.Markdown())
	if !strings.Contains(h, "<th>the paper says</th>") || strings.Count(h, "[threshold chosen by this project, not the paper]") != 2 || strings.Contains(h, "not a sentence of the paper") {
		t.Errorf("mixed claims, HTML:\n%s", h)
	}
	if !strings.Contains(m, "| the paper says |") || strings.Count(m, "[threshold or claim chosen by this project, not the paper]") != 2 {
		t.Errorf("mixed claims, markdown:\n%s", m)
	}
}

// A finding reads back what it writes to claims.json, non-finite numbers
// included (null, "inf", "-inf").
func TestFindingJSONRoundTrip(t *testing.T) {
	for _, f := range []Finding{
		{Key: "10", Label: "ars − reinforce", Value: -0.0147, Lo: -0.0201, Hi: -0.0092, Seeds: 10, Method: MethodPairedT, X: "x = 300000", Verdict: Contradicted, Sign: &Sign{Below: 10, P: 0.001953}},
		{Label: "ratio", Value: 1.5, Lo: math.Inf(-1), Hi: math.Inf(1), Seeds: 3, Verdict: Inconclusive},
		{Label: "capped mean", Value: 25, Lo: math.NaN(), Hi: math.NaN(), Seeds: 10, AtLeast: true, Verdict: Reported},
	} {
		data, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var g Finding
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		if !same(f.Value, g.Value) || !same(f.Lo, g.Lo) || !same(f.Hi, g.Hi) || f.Key != g.Key || f.Label != g.Label ||
			f.Seeds != g.Seeds || f.Method != g.Method || f.X != g.X || f.Verdict != g.Verdict || f.AtLeast != g.AtLeast ||
			(f.Sign == nil) != (g.Sign == nil) || f.Sign != nil && *f.Sign != *g.Sign {
			t.Errorf("%s read back as %+v", data, g)
		}
	}
	var g Finding
	if err := json.Unmarshal([]byte(`{"label":"x","value":"lots"}`), &g); err == nil {
		t.Error("a value that is not a number was accepted")
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Document is the report's content: claims.json, and what report.md and
// report.html show. Nothing in it varies from run to run.
type Document struct {
	Title  string         `json:"title"`
	Scale  Scale          `json:"scale"`
	Method string         `json:"method"`
	Counts map[string]int `json:"counts"`
	Claims []ClaimResult  `json:"claims"`
	// Untested are the paper's sentences no claim tests, each with what
	// would test it.
	Untested []Untested `json:"untested,omitempty"`
	// Reference sets every verdict beside another run's (params.reference).
	Reference *ComparisonSection `json:"reference,omitempty"`
	Figures   []*Figure          `json:"figures"`
}

// Untested is a sentence of the paper that no claim tests, and why: what
// the runs lack, and what would test it.
type Untested struct {
	Section string `json:"section"`
	Text    string `json:"text"`
	Why     string `json:"why"`
}

// Scale is the scale the report's numbers were made at, shown at its top:
// the profile and what it runs, from the report stage's parameters.
type Scale struct {
	Profile string `json:"profile"`
	// Paper reports whether the profile runs the paper's scale.
	Paper bool `json:"paper_scale"`
	// Text says what the profile runs: seeds, budgets, grids.
	Text string `json:"text"`
}

// ClaimResult is one claim and what its statistic says.
type ClaimResult struct {
	ID        string `json:"id"`
	Figure    string `json:"figure"`
	Section   string `json:"section"`
	Text      string `json:"text"`
	Stat      Stat   `json:"stat"`
	Statistic string `json:"statistic"`
	// Test is "sign" where the exact paired sign test is the claim's
	// primary statistic (its headline is the sign count, the mean's
	// interval beside it).
	Test string `json:"test,omitempty"`
	// Source is "paper" (the paper's sentence and threshold) or
	// "project" (a threshold or claim this project chose).
	Source   string    `json:"source"`
	Verdict  Verdict   `json:"verdict"`
	Summary  *Finding  `json:"summary,omitempty"`
	Findings []Finding `json:"findings"`
	Problem  string    `json:"problem,omitempty"`
	// Explanation says, with the measured evidence, why the claim does
	// not hold (or how far inside a bound it holds).
	Explanation string `json:"explanation,omitempty"`
	// CapNote says where this profile's runs stop at another cap than
	// the one the text names.
	CapNote string `json:"cap_note,omitempty"`
}

// method says how every interval and verdict is computed.
const method = "Each statistic is computed from the per-seed numbers behind its figure (n, the seeds behind it, on every row), " +
	"with a 95% interval whose coverage holds at that n (checked by seeded simulation at 2, 3, 5 and 10 seeds): Student t " +
	"for means; paired t on the per-seed differences where methods share seeds (a seed fixes the problem instance), Welch " +
	"t otherwise; Fieller for ratios of means; Clopper–Pearson for fractions of seeds; order statistics for medians (no " +
	"95% interval exists from fewer than six seeds: it is then unbounded); t over the per-seed least-squares slopes for " +
	"slopes and trends. A claim holds when the whole interval is on the claimed side, is contradicted when it is wholly on " +
	"the other side, and is inconclusive otherwise: with the seeds there are, the interval cannot tell. Where a claim " +
	"is about A above B in each seed, dag.yaml may make the exact paired sign test its primary statistic (holding when the " +
	"seeds lean to the claimed side at the 5% level, two-sided); paired differences show the sign count beside the interval " +
	"either way. A claim whose premise does not hold in the data (e.g. two curves that never differ) is uninformative: " +
	"its test has nothing to measure. A mean over runs stopped at a cap is a lower bound and gets no interval. A claim " +
	"about points this profile does not compute (the horizons beyond 200 outside the horizon-long profile) is not run in " +
	"this profile. Nothing " +
	"is random: the same numbers give the same report."

func newDocument(title string, scale Scale, figs []*Figure, rs []Result) *Document {
	d := &Document{Title: title, Scale: scale, Method: method, Counts: map[string]int{}, Figures: figs}
	for _, v := range verdictOrder {
		d.Counts[string(v)] = 0
	}
	for _, r := range rs {
		d.Counts[string(r.Verdict)]++
		d.Claims = append(d.Claims, ResultOf(r))
	}
	return d
}

// ResultOf is a claim's entry in claims.json.
func ResultOf(r Result) ClaimResult {
	cr := ClaimResult{
		ID: r.Claim.ID, Figure: r.Claim.Figure, Section: r.Claim.Section, Text: r.Claim.Text,
		Stat: r.Claim.Stat, Statistic: describe(r.Claim), Test: signOnly(r.Claim.Test), Source: cmpOr(r.Claim.Source, "paper"), Verdict: r.Verdict, Summary: r.Summary, Findings: r.Findings, Problem: r.Problem,
		Explanation: Explain(r), CapNote: r.Claim.CapNote,
	}
	if cr.Findings == nil {
		cr.Findings = []Finding{}
	}
	return cr
}

// cmpOr is a, or b when a is empty.
func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// signOnly is test where it is the sign test, else "" (the interval is
// every other claim's primary statistic).
func signOnly(test string) string {
	if test == TestSign {
		return test
	}
	return ""
}

// describe says in words what a claim's statistic is and where it is
// taken; a claim whose primary statistic is the sign test says so first.
func describe(c Claim) string {
	if c.Test == TestSign {
		return "exact paired sign test of the per-seed differences (primary), beside the " + describeStat(c)
	}
	return describeStat(c)
}

func describeStat(c Claim) string {
	where := "at the last x of each curve"
	switch {
	case c.Over == "x":
		where = "at each x"
		if c.Panel != "" {
			where += " of panel " + c.Panel
		}
	case c.At.Common:
		where = "at the largest x every curve reaches"
	case c.At.Matched:
		where = "at the largest x every curve reaches in every panel (one budget for all)"
	case c.At.Set:
		where = "at x ≤ " + c.At.String()
	}
	if c.Over != "x" && c.Stat != StatSlope && c.Stat != StatTrend && c.Stat != StatBound {
		where += ", per panel"
	}
	if len(c.Keys) > 0 {
		where += " (" + strings.Join(c.Keys, ", ") + ")"
	}
	side := fmt.Sprintf(" %s %s", c.Expect, num(c.Threshold))
	switch {
	case c.Expect == "~":
		side = fmt.Sprintf(" within %s of %s", num(c.Tolerance), num(c.Threshold))
	case c.Expect == "":
		side = ""
	}
	of := "mean"
	if c.Measure == MeasureLogAUC {
		of = "mean log-AUC (log₁₀ y averaged over log₁₀ x up to the point; lower learns faster)"
	}
	a := c.Curves[0]
	switch c.Stat {
	case StatValue:
		return of + " of " + strings.Join(c.Curves, ", ") + " " + where
	case StatDifference:
		return fmt.Sprintf("%s: %s − %s %s%s", of, a, c.Curves[1], where, side)
	case StatRatio:
		return fmt.Sprintf("%s: %s / %s %s%s", of, a, c.Curves[1], where, side)
	case StatOrder:
		return fmt.Sprintf("%s: consecutive differences of %s %s%s", of, strings.Join(c.Curves, ", "), where, side)
	case StatCrossover:
		rivals := c.Curves[1]
		if len(c.Curves) > 2 {
			rivals = "each of " + strings.Join(c.Curves[1:], ", ")
		}
		return fmt.Sprintf("%s − %s > 0 at every key from %s on (the crossover claimed in [%s, %s]) %s", a, rivals, num(c.Between[1]), num(c.Between[0]), num(c.Between[1]), where)
	case StatTrend:
		return fmt.Sprintf("slope of log(%s) against log(%s) per seed %s%s", strings.Join(c.Curves, " / "), c.over(), where, side)
	case StatSlope:
		return fmt.Sprintf("slope of log %s against log x per seed, per panel%s", a, side)
	case StatGrowth:
		return fmt.Sprintf("slope of %s − %s against %s per seed %s%s", a, c.Curves[1], c.over(), where, side)
	case StatBound:
		key := ""
		if c.Bound.PanelPow != 0 {
			key = " (p the panel's key)"
		}
		return fmt.Sprintf("mean of %s / bound, the bound %s%s, at every x, per panel%s", a, c.Bound, key, side)
	case StatScaling:
		claimed := "claimed above " + num(c.Threshold)
		if c.Expect == "~" {
			claimed = "claimed consistent with " + num(c.Threshold) + " (it inside, 0 outside)"
		}
		return fmt.Sprintf("per panel, the horizon from which %s is ahead of %s, bracketed; then the slopes s of the lines log H = c + s·log %s through every bracket, %s", a, strings.Join(c.Curves[1:], " and "), c.xLabel(), claimed)
	case StatFraction, StatMedian:
		what := "fraction of seeds below " + num(c.Below) + " of "
		if c.Stat == StatMedian {
			what = "median of "
			if c.Cap > 0 {
				what = "median (runs at the cap " + num(c.Cap) + " censored) of "
			}
		}
		return what + strings.Join(c.Curves, ", ") + " " + where + side
	case StatBest:
		return fmt.Sprintf("%s claimed %s of %s %s: its margin over every other curve", c.Winner, bestWord(c), strings.Join(c.Curves, ", "), where)
	case StatIncrease:
		dir := "more than half"
		if c.Expect == "<" {
			dir = "fewer than half"
		}
		return fmt.Sprintf("fraction of seeds whose %s is higher at the last key than at the first (%s claimed; runs at the cap %s count as ties when both are capped)", strings.Join(c.Curves, ", "), dir, num(c.Cap))
	}
	return string(c.Stat)
}

// num formats a number for reading: 4 significant digits, "–" for NaN,
// ±∞ for infinities.
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "−∞"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// interval formats a finding's value and interval.
func (f Finding) interval() string {
	if f.AtLeast {
		return "≥ " + num(f.Value)
	}
	if math.IsNaN(f.Lo) || math.IsNaN(f.Hi) {
		return num(f.Value)
	}
	return fmt.Sprintf("%s [%s, %s]", num(f.Value), num(f.Lo), num(f.Hi))
}

// MarshalJSON writes non-finite numbers as null (and infinite ends of an
// interval as the strings "inf" and "-inf").
func (f Finding) MarshalJSON() ([]byte, error) {
	n := func(x float64) any {
		switch {
		case math.IsNaN(x):
			return nil
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		}
		return x
	}
	return json.Marshal(struct {
		Key     string  `json:"key"`
		Label   string  `json:"label"`
		Value   any     `json:"value"`
		Lo      any     `json:"lo"`
		Hi      any     `json:"hi"`
		Seeds   int     `json:"n"`
		Method  string  `json:"interval,omitempty"`
		X       string  `json:"at,omitempty"`
		Verdict Verdict `json:"verdict"`
		Sign    *Sign   `json:"sign,omitempty"`
		AtLeast bool    `json:"at_least,omitempty"`
	}{f.Key, f.Label, n(f.Value), n(f.Lo), n(f.Hi), f.Seeds, f.Method, f.X, f.Verdict, f.Sign, f.AtLeast})
}

// UnmarshalJSON reads what MarshalJSON writes (null as NaN, "inf" and
// "-inf" as the infinities), so that claims.json's readers share this type.
func (f *Finding) UnmarshalJSON(data []byte) error {
	var raw struct {
		Key     string          `json:"key"`
		Label   string          `json:"label"`
		Value   json.RawMessage `json:"value"`
		Lo      json.RawMessage `json:"lo"`
		Hi      json.RawMessage `json:"hi"`
		Seeds   int             `json:"n"`
		Method  string          `json:"interval"`
		X       string          `json:"at"`
		Verdict Verdict         `json:"verdict"`
		Sign    *Sign           `json:"sign"`
		AtLeast bool            `json:"at_least"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	n := func(name string, m json.RawMessage) (float64, error) {
		switch s := string(m); s {
		case "", "null":
			return math.NaN(), nil
		case `"inf"`:
			return math.Inf(1), nil
		case `"-inf"`:
			return math.Inf(-1), nil
		}
		var x float64
		if err := json.Unmarshal(m, &x); err != nil {
			return 0, fmt.Errorf("finding %q: %s: %w", raw.Label, name, err)
		}
		return x, nil
	}
	var err error
	*f = Finding{Key: raw.Key, Label: raw.Label, Seeds: raw.Seeds, Method: raw.Method, X: raw.X, Verdict: raw.Verdict, Sign: raw.Sign, AtLeast: raw.AtLeast}
	if f.Value, err = n("value", raw.Value); err != nil {
		return err
	}
	if f.Lo, err = n("lo", raw.Lo); err != nil {
		return err
	}
	f.Hi, err = n("hi", raw.Hi)
	return err
}

// verdictText is how a verdict reads in the report; n, when given, is
// the number of seeds behind it ("inconclusive with 10 seeds").
func verdictText(v Verdict, n string) string {
	switch v {
	case Inconclusive:
		switch n {
		case "", "–":
		case "1":
			return "inconclusive with 1 seed"
		default:
			return "inconclusive with " + n + " seeds"
		}
		return "inconclusive"
	case NotRun:
		return "not run in this profile"
	}
	return string(v)
}

// method is how a finding's interval is made, with its sign count where
// it has one.
func (f Finding) method() string {
	if f.Sign == nil {
		return f.Method
	}
	return f.Method + "; " + f.Sign.String()
}

// result is a claim's headline: its summary, or its single finding, or
// the number of findings.
func (c ClaimResult) result() string {
	switch {
	case c.Verdict == NotRun:
		return c.Problem
	case c.Problem != "":
		return "not computed: " + c.Problem
	case c.Stat == StatCrossover && c.Summary != nil && c.Summary.Key != "":
		return "clearly ahead from " + c.Summary.Key + " on"
	case c.Stat == StatCrossover:
		return "not clearly ahead at the last key"
	case c.Summary != nil:
		return c.Summary.interval()
	case len(c.Findings) == 1 && c.Test == TestSign && c.Findings[0].Sign != nil:
		return c.Findings[0].Sign.String() + "; mean " + c.Findings[0].interval()
	case len(c.Findings) == 1:
		return c.Findings[0].interval()
	case c.Verdict == Reported:
		return fmt.Sprintf("%d values, below", len(c.Findings))
	}
	n := map[Verdict]int{}
	for _, f := range c.Findings {
		n[f.Verdict]++
	}
	var parts []string
	for _, v := range []Verdict{Holds, Contradicted, Inconclusive, Uninformative} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], verdictText(v, "")))
		}
	}
	return fmt.Sprintf("%d findings: %s", len(c.Findings), strings.Join(parts, ", "))
}

// seeds is the range of n over a claim's findings, e.g. "3" or "2–5".
func (c ClaimResult) seeds() string {
	lo, hi := math.MaxInt, 0
	for _, f := range append(slices.Clone(c.Findings), derefFinding(c.Summary)...) {
		if f.Seeds > 0 {
			lo, hi = min(lo, f.Seeds), max(hi, f.Seeds)
		}
	}
	switch {
	case hi == 0:
		return "–"
	case lo == hi:
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func derefFinding(f *Finding) []Finding {
	if f == nil {
		return nil
	}
	return []Finding{*f}
}

// sourceNote marks what this project chose rather than the paper (nothing
// where every claim is, allProjectNote says it once).
func (d *Document) sourceNote(c ClaimResult) string {
	note := ""
	if c.Source == "project" && !d.allProject() {
		note = " [threshold or claim chosen by this project, not the paper]"
	}
	if c.CapNote != "" {
		note += " [" + c.CapNote + "]"
	}
	return note
}

// allProjectNote says, above the claims of a report whose every claim is
// this project's (the crossover profile's), what they are, once instead
// of a note on each.
const allProjectNote = "Every claim below is this project's, not a sentence of the paper: its text and threshold follow from the paper's theory at the section cited."

// allProject reports whether every claim is this project's (source:
// project).
func (d *Document) allProject() bool {
	return len(d.Claims) > 0 && !slices.ContainsFunc(d.Claims, func(c ClaimResult) bool { return c.Source != "project" })
}

// claimHeader heads the claims' text column: "the paper says", or "the
// claim" when every claim is this project's.
func (d *Document) claimHeader() string {
	if d.allProject() {
		return "the claim"
	}
	return "the paper says"
}

// banner is the scale line at the top of the report.
func (d *Document) banner() string {
	if d.Scale.Paper {
		return fmt.Sprintf("Profile %s: the paper's scale. %s", d.Scale.Profile, d.Scale.Text)
	}
	return fmt.Sprintf("Profile %s: NOT the paper's scale. %s The verdicts below are at this scale: \"inconclusive\" means these seeds and budgets cannot decide a claim.", d.Scale.Profile, d.Scale.Text)
}

// headline is the verdict counts, said to be at this scale unless the
// profile is the paper's.
func (d *Document) headline() string {
	counts := strings.ReplaceAll(d.countsText(), ", ", " · ")
	if d.Scale.Paper {
		return counts
	}
	return fmt.Sprintf("At the %s profile's scale: %s", d.Scale.Profile, counts)
}

// Markdown is report.md.
func (d *Document) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n> **%s**\n\n%s\n\n", d.Title, md(d.banner()), d.Method)
	fmt.Fprintf(&b, "**%s.**\n\n", d.headline())
	if d.allProject() {
		b.WriteString(allProjectNote + "\n\n")
	}
	fmt.Fprintf(&b, "| claim | figure | %s | statistic | n | result [95%% CI] | verdict |\n|---|---|---|---|---|---|---|\n", d.claimHeader())
	for _, c := range d.Claims {
		fmt.Fprintf(&b, "| %s | %s | %s (%s)%s | %s | %s | %s | **%s** |\n", c.ID, c.Figure, md(c.Text), md(c.Section), md(d.sourceNote(c)), md(c.Statistic), c.seeds(), md(c.result()), verdictText(c.Verdict, c.seeds()))
	}
	if len(d.Untested) > 0 {
		b.WriteString("\n## Sentences of the paper no claim tests\n\n| the paper says | where | why not, and what would test it |\n|---|---|---|\n")
		for _, u := range d.Untested {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", md(u.Text), md(u.Section), md(u.Why))
		}
	}
	if d.Reference != nil {
		d.Reference.markdown(&b, md)
	}
	for _, f := range d.Figures {
		fmt.Fprintf(&b, "\n## %s\n\n", f.Name)
		if f.Extension {
			b.WriteString("*This project's addition, not a figure of the paper.*\n\n")
		}
		fmt.Fprintf(&b, "![%s](%s.svg)\n\n", f.Name, f.Name)
		for i, v := range companionViews {
			if f.views[i] != nil {
				fmt.Fprintf(&b, "![%s%s](%s%s)\n\n*%s*\n\n", f.Name, v.alt, f.Name, v.suffix, v.markdown)
			}
		}
		for _, c := range d.Claims {
			if c.Figure != f.Name {
				continue
			}
			fmt.Fprintf(&b, "**%s** (%s, %s): %s%s — *%s*\n\n", c.ID, md(c.Section), verdictText(c.Verdict, c.seeds()), md(c.Text), md(d.sourceNote(c)), md(c.Statistic))
			if c.Explanation != "" {
				fmt.Fprintf(&b, "*Why:* %s\n\n", md(c.Explanation))
			}
			if len(c.Findings) > 0 {
				b.WriteString("| key | statistic | at | value [95% CI] | n | interval | verdict |\n|---|---|---|---|---|---|---|\n")
				for _, x := range c.Findings {
					fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %s |\n", md(x.Key), md(x.Label), md(x.X), x.interval(), x.Seeds, md(x.method()), verdictText(x.Verdict, ""))
				}
				b.WriteString("\n")
			}
		}
		fmt.Fprintf(&b, "Provenance: %s Task `%s`; files %s. Trace any plotted point with `pipeline audit %s.svg`.\n", md(f.provenance()), f.Task, fileList(f, "`"), f.Name)
		for _, src := range f.hyper {
			b.WriteString("\n" + src.markdown())
		}
	}
	return b.Bytes()
}

func fileList(f *Figure, quote string) string {
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(f.Files)) {
		parts = append(parts, quote+n+" "+f.Files[n]+quote)
	}
	return strings.Join(parts, ", ")
}

const css = `body{font-family:Georgia,serif;max-width:62em;margin:2em auto;padding:0 1em;color:#111;line-height:1.4}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}th,td{border:1px solid #bbb;padding:.3em .5em;vertical-align:top;text-align:left}
th{background:#eee}.holds{background:#d9f2d9}.contradicted{background:#f7d4d4}.inconclusive{background:#fff3c4}.uninformative{background:#e8e0f0}.not-run{background:#eee}.reported{background:#eef}
.banner{border:2px solid #b35900;background:#fff4e5;padding:.6em .8em;font-size:1.05em}.banner.paper{border-color:#2c7a2c;background:#eef8ee}
.project{font-size:.85em;color:#8a4b00}.extension{font-style:italic;color:#8a4b00}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}code{font-size:.9em}.prov{font-size:.85em;color:#444;word-break:break-all}
table.hyper td,table.hyper th{word-break:normal}details.prov summary{cursor:pointer}
@media (max-width:40em){table#claims,table#claims tbody,table#claims tr,table#claims td{display:block;width:auto}
table#claims tr:first-child{display:none}table#claims tr{margin:0 0 .8em;border:1px solid #bbb}table#claims td{border:none;border-bottom:1px solid #ddd}
table#claims td::before{content:attr(data-h) ": ";font-weight:bold}.findings{display:block;overflow-x:auto}}
@media print{section{break-inside:avoid}}`

// HTML is report.html: one self-contained page (inline SVG and CSS, the
// figures' font embedded (font.go), no
// script, nothing fetched). Below 40em wide the summary table stacks each
// claim's cells, so that a phone shows every verdict.
func (d *Document) HTML(figs []*Figure) []byte {
	var b bytes.Buffer
	e := html.EscapeString
	svgs := pageSVGs(figs)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>\n%s\n%s\n</style>\n</head>\n<body>\n", e(d.Title), fontFace(svgs), css)
	paper := ""
	if d.Scale.Paper {
		paper = " paper"
	}
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p class=\"banner%s\" id=\"scale\"><strong>%s</strong></p>\n<p>%s</p>\n<p><strong>%s.</strong></p>\n", e(d.Title), paper, e(d.banner()), e(d.Method), e(d.headline()))
	cols := []string{"claim", "figure", d.claimHeader(), "statistic", "n", "result [95% CI]", "verdict"}
	if d.allProject() {
		fmt.Fprintf(&b, "<p>%s</p>\n", e(allProjectNote))
	}
	b.WriteString("<table id=\"claims\">\n<tr>")
	for _, h := range cols {
		fmt.Fprintf(&b, "<th>%s</th>", h)
	}
	b.WriteString("</tr>\n")
	for _, c := range d.Claims {
		cells := []string{e(c.ID), fmt.Sprintf("<a href=\"#fig-%s\">%s</a>", e(c.Figure), e(c.Figure)),
			fmt.Sprintf("%s <em>(%s)</em>%s", e(c.Text), e(c.Section), d.projectNote(c)), e(c.Statistic), c.seeds(), e(c.result()),
			"<strong>" + verdictText(c.Verdict, c.seeds()) + "</strong>"}
		fmt.Fprintf(&b, "<tr class=\"claim %s\" id=\"claim-%s\">", c.Verdict, e(c.ID))
		for i, cell := range cells {
			fmt.Fprintf(&b, "<td data-h=\"%s\">%s</td>", cols[i], cell)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	if len(d.Untested) > 0 {
		b.WriteString("<h2 id=\"untested\">Sentences of the paper no claim tests</h2>\n<table class=\"untested\">\n<tr><th>the paper says</th><th>where</th><th>why not, and what would test it</th></tr>\n")
		for _, u := range d.Untested {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>\n", e(u.Text), e(u.Section), e(u.Why))
		}
		b.WriteString("</table>\n")
	}
	if d.Reference != nil {
		d.Reference.html(&b)
	}
	for _, f := range figs {
		fmt.Fprintf(&b, "<section id=\"fig-%s\">\n<h2>%s</h2>\n", e(f.Name), e(f.Name))
		if f.Extension {
			b.WriteString("<p class=\"extension\">This project's addition, not a figure of the paper.</p>\n")
		}
		fmt.Fprintf(&b, "<figure class=\"figure\">\n%s\n</figure>\n", svgs[f].main)
		for i, v := range companionViews {
			if svgs[f].views[i] != nil {
				fmt.Fprintf(&b, "<figure class=\"companion\">\n%s\n<figcaption>%s</figcaption>\n</figure>\n", svgs[f].views[i], v.html)
			}
		}
		for _, c := range d.Claims {
			if c.Figure != f.Name {
				continue
			}
			fmt.Fprintf(&b, "<p class=\"%s\"><strong>%s</strong> (%s, %s): %s%s — <em>%s</em></p>\n", c.Verdict, e(c.ID), e(c.Section), verdictText(c.Verdict, c.seeds()), e(c.Text), d.projectNote(c), e(c.Statistic))
			if c.Explanation != "" {
				fmt.Fprintf(&b, "<p class=\"why\"><strong>Why:</strong> %s</p>\n", e(c.Explanation))
			}
			if len(c.Findings) > 0 {
				b.WriteString("<table class=\"findings\">\n<tr><th>key</th><th>statistic</th><th>at</th><th>value [95% CI]</th><th>n</th><th>interval</th><th>verdict</th></tr>\n")
				for _, x := range c.Findings {
					fmt.Fprintf(&b, "<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td></tr>\n", x.Verdict, e(x.Key), e(x.Label), e(x.X), e(x.interval()), x.Seeds, e(x.method()), verdictText(x.Verdict, ""))
				}
				b.WriteString("</table>\n")
			}
		}
		b.WriteString(f.provenanceHTML())
		b.WriteString("</section>\n")
	}
	fmt.Fprintf(&b, "<footer class=\"prov\">%s</footer>\n</body>\n</html>\n", e(fontCredit))
	return b.Bytes()
}

// companionViews are the views a plot may make beside its figure, in the
// order the report shows them: the file suffix, the Markdown image's alt
// text after the figure's name, and the caption in Markdown and in HTML.
var companionViews = []struct{ suffix, alt, markdown, html string }{
	{"-logy.svg", " on a log y axis", "The same numbers on a log y axis (a companion view, not a figure of the paper).",
		"The same numbers on a log y axis, where the final values the paper's linear axis squeezes together can be told apart (a companion view, not a figure of the paper)."},
	{"-ratio-view.svg", " as a ratio", "The same numbers as the ratio of the two methods' mean returns (a companion view, not a figure of the paper).",
		"The same numbers as the ratio of the two methods' mean returns at each horizon, on one scale for both environments (a companion view, not a figure of the paper)."},
	{"-converged-view.svg", ": fraction converged", "The fraction of seeds that converged at each x, with its Clopper–Pearson 95% interval (a companion view, not a figure of the paper).",
		"The fraction of seeds that converged at each x, with its Clopper–Pearson 95% interval: the mean above counts a run that never converged at the cap, so it cannot say how many did (a companion view, not a figure of the paper)."},
	{"-difference-view.svg", ": differences", "The leader's return minus each rival's, seed by seed, with its 95% paired t interval at each horizon (a companion view, not a figure of the paper).",
		"The leader's final return minus each rival's, seed by seed, with the 95% paired t interval at each horizon: above 0 the leader is ahead (a companion view, not a figure of the paper)."},
	{"-scaling-view.svg", ": crossover horizon against d/p", "Each body's crossover horizon, bracketed as the scaling claims judge it, against d/p on log-log axes, beside the theory's slope (a companion view, not a figure of the paper).",
		"Each body's crossover horizon, bracketed as the scaling claims below judge it (all brackets hold together with at least 95% if the advantage changes sign once), against d/p on log-log axes, beside the theory's slope ½ (a companion view, not a figure of the paper)."},
}

// projectNote marks, in HTML, a claim whose threshold this project chose
// (nothing where every claim is this project's).
func (d *Document) projectNote(c ClaimResult) string {
	note := ""
	if c.Source == "project" && !d.allProject() {
		note = ` <span class="project">[threshold chosen by this project, not the paper]</span>`
	}
	if c.CapNote != "" {
		note += ` <span class="project">[` + html.EscapeString(c.CapNote) + `]</span>`
	}
	return note
}

// inlineSVG drops the XML declaration of an SVG file so that it can sit
// inside HTML.
func inlineSVG(svg []byte) []byte {
	s := bytes.TrimSpace(svg)
	if bytes.HasPrefix(s, []byte("<?xml")) {
		if i := bytes.Index(s, []byte("?>")); i >= 0 {
			s = bytes.TrimSpace(s[i+2:])
		}
	}
	return s
}

// provenanceHTML is a figure's provenance as compact tables: each curve's
// seeds (once, when every curve has the same) and x range, the
// hyperparameters (hyperSource.html), and the files with their content
// IDs.
func (f *Figure) provenanceHTML() string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString("<table class=\"prov\">\n<tr><th>curve</th><th>seeds</th><th>x</th></tr>\n")
	same := len(f.Curves) > 1
	for _, c := range f.Curves[min(1, len(f.Curves)):] {
		same = same && slices.Equal(c.Seeds, f.Curves[0].Seeds)
	}
	for i, c := range f.Curves {
		seeds := fmt.Sprintf("%d seeds (%s)", len(c.Seeds), seedList(c.Seeds))
		switch {
		case same && i == 0:
			seeds = fmt.Sprintf("%d seeds (%s), every curve", len(c.Seeds), seedList(c.Seeds))
		case same:
			seeds = "the same"
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s to %s</td></tr>\n", e(c.Curve), e(seeds), e(num(c.XMin)), e(num(c.XMax)))
	}
	b.WriteString("</table>\n")
	for _, src := range f.hyper {
		b.WriteString(src.html())
	}
	fmt.Fprintf(&b, "<p class=\"prov\">Task <code>%s</code>; trace any plotted point with <code>pipeline audit %s.svg</code>. Files:</p>\n<table class=\"prov\">\n", e(f.Task), e(f.Name))
	for _, n := range slices.Sorted(maps.Keys(f.Files)) {
		fmt.Fprintf(&b, "<tr><td><code>%s</code></td><td><code>%s</code></td></tr>\n", e(n), e(f.Files[n]))
	}
	b.WriteString("</table>\n")
	return b.String()
}

func seedList(seeds []uint64) string {
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatUint(s, 10)
	}
	return strings.Join(parts, ", ")
}

// md escapes text for a markdown table cell or line.
func md(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }

// sentence ends s with a full stop unless it ends with one already.
func sentence(s string) string {
	if strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

// foldRows is the number of rows above which a page folds a table of
// chosen hyperparameters away (a horizon sweep has dozens).
const foldRows = 12

// html is a source of hyperparameters on the page: its note, or a line
// counting the stage's chosen points and their table (folded when long).
func (s hyperSource) html() string {
	e := html.EscapeString
	if s.Note != "" {
		return fmt.Sprintf("<p class=\"prov\">Hyperparameters: %s</p>\n", e(sentence(s.Note)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<p class=\"prov\">Hyperparameters: tuned by <code>%s</code>, %s.</p>\n", e(s.Stage), e(s.summary()))
	header, rows := s.table()
	var t strings.Builder
	t.WriteString("<table class=\"prov hyper\">\n<tr>")
	for _, h := range header {
		fmt.Fprintf(&t, "<th>%s</th>", e(h))
	}
	t.WriteString("</tr>\n")
	for _, r := range rows {
		t.WriteString("<tr>")
		for _, c := range r {
			// A task name may break after each "/", a word nowhere.
			fmt.Fprintf(&t, "<td>%s</td>", strings.ReplaceAll(e(c), "/", "/<wbr>"))
		}
		t.WriteString("</tr>\n")
	}
	t.WriteString("</table>\n")
	if len(rows) <= foldRows {
		b.WriteString(t.String())
		return b.String()
	}
	fmt.Fprintf(&b, "<details class=\"prov\"><summary>the %d chosen points of %s</summary>\n%s</details>\n", len(rows), e(s.Stage), t.String())
	return b.String()
}

// markdown is a source of hyperparameters in report.md: its note, or a
// line counting the stage's chosen points and their table.
func (s hyperSource) markdown() string {
	if s.Note != "" {
		return "Hyperparameters: " + md(sentence(s.Note)) + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Hyperparameters: tuned by `%s`, %s.\n\n", s.Stage, md(s.summary()))
	header, rows := s.table()
	for i, r := range append([][]string{header}, rows...) {
		cells := make([]string, len(r))
		for j, c := range r {
			cells[j] = md(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		if i == 0 {
			b.WriteString(strings.Repeat("|---", len(r)) + "|\n")
		}
	}
	return b.String()
}

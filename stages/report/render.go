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
	Title   string         `json:"title"`
	Method  string         `json:"method"`
	Counts  map[string]int `json:"counts"`
	Claims  []ClaimResult  `json:"claims"`
	Figures []*Figure      `json:"figures"`
}

// ClaimResult is one claim and what its statistic says.
type ClaimResult struct {
	ID        string    `json:"id"`
	Figure    string    `json:"figure"`
	Section   string    `json:"section"`
	Text      string    `json:"text"`
	Stat      Stat      `json:"stat"`
	Statistic string    `json:"statistic"`
	Verdict   Verdict   `json:"verdict"`
	Summary   *Finding  `json:"summary,omitempty"`
	Findings  []Finding `json:"findings"`
	Problem   string    `json:"problem,omitempty"`
}

// method says how every interval and verdict is computed.
const method = "Each statistic is computed from the per-seed numbers behind its figure, with a 95% percentile-bootstrap " +
	"interval (2000 replicates; seeds resampled with replacement, each seed's values kept together across methods " +
	"and keys when they share seeds; type-7 quantiles; one seeded stream per claim, so the numbers are the same on " +
	"every run). A claim holds when the whole interval is on the claimed side, fails when it is wholly on the other " +
	"side, and is inconclusive at this profile's scale otherwise."

func newDocument(title string, figs []*Figure, rs []Result) *Document {
	d := &Document{Title: title, Method: method, Counts: map[string]int{}, Figures: figs}
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
		Stat: r.Claim.Stat, Statistic: describe(r.Claim), Verdict: r.Verdict, Summary: r.Summary, Findings: r.Findings, Problem: r.Problem,
	}
	if cr.Findings == nil {
		cr.Findings = []Finding{}
	}
	return cr
}

// describe says in words what a claim's statistic is.
func describe(c Claim) string {
	where := "at the last x of each curve"
	switch {
	case c.Over == "x":
		where = "at each x"
		if c.Panel != "" {
			where += " of panel " + c.Panel
		}
	case c.At.Common:
		where = "at the largest x every curve reaches"
	case c.At.Set:
		where = "at x ≤ " + c.At.String()
	}
	if c.Over != "x" && c.Stat != StatSlope && c.Stat != StatTrend {
		where += ", per panel"
	}
	if len(c.Keys) > 0 {
		where += " (" + strings.Join(c.Keys, ", ") + ")"
	}
	side := fmt.Sprintf(" %s %s", c.Expect, num(c.Threshold))
	if c.Expect == "~" {
		side = fmt.Sprintf(" within %s of %s", num(c.Tolerance), num(c.Threshold))
	}
	a := c.Curves[0]
	switch c.Stat {
	case StatValue:
		return "mean of " + strings.Join(c.Curves, ", ") + " " + where
	case StatDifference:
		return fmt.Sprintf("mean %s − mean %s %s%s", a, c.Curves[1], where, side)
	case StatRatio:
		return fmt.Sprintf("mean %s / mean %s %s%s", a, c.Curves[1], where, side)
	case StatOrder:
		return fmt.Sprintf("consecutive differences of %s %s%s", strings.Join(c.Curves, ", "), where, side)
	case StatCrossover:
		return fmt.Sprintf("smallest key from which %s − %s > 0 at every larger key, %s; claimed in [%s, %s]", a, c.Curves[1], where, num(c.Between[0]), num(c.Between[1]))
	case StatTrend:
		return fmt.Sprintf("least-squares slope of log(%s) against log(%s) %s%s", strings.Join(c.Curves, " / "), c.over(), where, side)
	case StatSlope:
		return fmt.Sprintf("least-squares slope of log mean %s against log x, per panel%s", a, side)
	case StatFraction, StatMedian:
		what := "fraction of seeds below " + num(c.Below) + " of "
		if c.Stat == StatMedian {
			what = "median of "
		}
		if c.Expect == "" {
			side = ""
		}
		return what + strings.Join(c.Curves, ", ") + " " + where + side
	case StatBest:
		word := "lowest"
		if c.Expect == ">" {
			word = "highest"
		}
		return fmt.Sprintf("the curve of %s with the %s mean %s, and its margin over the runner-up (clear when the interval excludes 0)", strings.Join(c.Curves, ", "), word, where)
	}
	return string(c.Stat)
}

// num formats a number for reading: 4 significant digits, "–" for NaN.
func num(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// interval formats a finding's value and interval.
func (f Finding) interval() string {
	if math.IsNaN(f.Lo) {
		return num(f.Value)
	}
	return fmt.Sprintf("%s [%s, %s]", num(f.Value), num(f.Lo), num(f.Hi))
}

// MarshalJSON writes non-finite numbers as null.
func (f Finding) MarshalJSON() ([]byte, error) {
	n := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		Key     string   `json:"key"`
		Label   string   `json:"label"`
		Value   *float64 `json:"value"`
		Lo      *float64 `json:"lo"`
		Hi      *float64 `json:"hi"`
		Seeds   int      `json:"seeds"`
		Verdict Verdict  `json:"verdict"`
	}{f.Key, f.Label, n(f.Value), n(f.Lo), n(f.Hi), f.Seeds, f.Verdict})
}

// result is a claim's headline: its summary, or its single finding, or
// the number of findings.
func (c ClaimResult) result() string {
	switch {
	case c.Problem != "":
		return "not computed: " + c.Problem
	case c.Stat == StatCrossover && c.Summary != nil && c.Summary.Key != "":
		return "crossover at " + c.Summary.Key
	case c.Stat == StatCrossover:
		return "no crossover"
	case c.Summary != nil:
		return c.Summary.interval()
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
	for _, v := range []Verdict{Holds, Fails, Inconclusive} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	return fmt.Sprintf("of %d findings below: %s", len(c.Findings), strings.Join(parts, ", "))
}

// Markdown is report.md.
func (d *Document) Markdown() []byte {
	var b bytes.Buffer
	md := func(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", d.Title, d.Method)
	fmt.Fprintf(&b, "**%s.**\n\n", strings.ReplaceAll(d.countsText(), ", ", " · "))
	b.WriteString("| claim | figure | the paper says | statistic | result [95% CI] | verdict |\n|---|---|---|---|---|---|\n")
	for _, c := range d.Claims {
		fmt.Fprintf(&b, "| %s | %s | %s (%s) | %s | %s | **%s** |\n", c.ID, c.Figure, md(c.Text), md(c.Section), md(c.Statistic), md(c.result()), c.Verdict)
	}
	for _, f := range d.Figures {
		fmt.Fprintf(&b, "\n## %s\n\n![%s](%s.svg)\n\n", f.Name, f.Name, f.Name)
		for _, c := range d.Claims {
			if c.Figure != f.Name {
				continue
			}
			fmt.Fprintf(&b, "**%s** (%s, %s): %s — *%s*\n\n", c.ID, md(c.Section), c.Verdict, md(c.Text), md(c.Statistic))
			if len(c.Findings) > 0 {
				b.WriteString("| key | statistic | value [95% CI] | seeds | verdict |\n|---|---|---|---|---|\n")
				for _, x := range c.Findings {
					fmt.Fprintf(&b, "| %s | %s | %s | %d | %s |\n", md(x.Key), md(x.Label), x.interval(), x.Seeds, x.Verdict)
				}
				b.WriteString("\n")
			}
		}
		fmt.Fprintf(&b, "Provenance: task `%s`; files %s. Trace any plotted point with `pipeline audit %s.svg`.\n", f.Task, fileList(f, "`"), f.Name)
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
th{background:#eee}.holds{background:#d9f2d9}.fails{background:#f7d4d4}.inconclusive{background:#fff3c4}.reported{background:#eef}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}code{font-size:.9em}.prov{font-size:.85em;color:#444;word-break:break-all}
@media print{section{break-inside:avoid}}`

// HTML is report.html: one self-contained page (inline SVG and CSS, no
// script, nothing fetched).
func (d *Document) HTML(figs []*Figure) []byte {
	var b bytes.Buffer
	e := html.EscapeString
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", e(d.Title), css)
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p>%s</p>\n<p><strong>%s.</strong></p>\n", e(d.Title), e(d.Method), e(strings.ReplaceAll(d.countsText(), ", ", " · ")))
	b.WriteString("<table id=\"claims\">\n<tr><th>claim</th><th>figure</th><th>the paper says</th><th>statistic</th><th>result [95% CI]</th><th>verdict</th></tr>\n")
	for _, c := range d.Claims {
		fmt.Fprintf(&b, "<tr class=\"claim %s\" id=\"claim-%s\"><td>%s</td><td><a href=\"#fig-%s\">%s</a></td><td>%s <em>(%s)</em></td><td>%s</td><td>%s</td><td><strong>%s</strong></td></tr>\n",
			c.Verdict, e(c.ID), e(c.ID), e(c.Figure), e(c.Figure), e(c.Text), e(c.Section), e(c.Statistic), e(c.result()), c.Verdict)
	}
	b.WriteString("</table>\n")
	for _, f := range figs {
		fmt.Fprintf(&b, "<section id=\"fig-%s\">\n<h2>%s</h2>\n<figure class=\"figure\">\n%s\n</figure>\n", e(f.Name), e(f.Name), inlineSVG(f.svg))
		for _, c := range d.Claims {
			if c.Figure != f.Name {
				continue
			}
			fmt.Fprintf(&b, "<p class=\"%s\"><strong>%s</strong> (%s, %s): %s — <em>%s</em></p>\n", c.Verdict, e(c.ID), e(c.Section), c.Verdict, e(c.Text), e(c.Statistic))
			if len(c.Findings) > 0 {
				b.WriteString("<table class=\"findings\">\n<tr><th>key</th><th>statistic</th><th>value [95% CI]</th><th>seeds</th><th>verdict</th></tr>\n")
				for _, x := range c.Findings {
					fmt.Fprintf(&b, "<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td></tr>\n", x.Verdict, e(x.Key), e(x.Label), e(x.interval()), x.Seeds, x.Verdict)
				}
				b.WriteString("</table>\n")
			}
		}
		fmt.Fprintf(&b, "<p class=\"prov\">Provenance: task <code>%s</code>; files %s. Trace any plotted point with <code>pipeline audit %s.svg</code>.</p>\n</section>\n",
			e(f.Task), e(fileList(f, "")), e(f.Name))
	}
	b.WriteString("</body>\n</html>\n")
	return b.Bytes()
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

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"strings"
)

// Published is a report as its claims.json gives it: what a comparison
// reads of each side.
type Published struct {
	Path   string
	Scale  Scale
	Claims []ClaimResult
}

// ParseClaims reads a report's claims.json (path names it in errors).
func ParseClaims(path string, data []byte) (Published, error) {
	var doc struct {
		Scale  Scale         `json:"scale"`
		Claims []ClaimResult `json:"claims"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return Published{}, fmt.Errorf("%s: not a report's claims.json: %v", path, err)
	}
	if len(doc.Claims) == 0 {
		return Published{}, fmt.Errorf("%s: not a report's claims.json: it lists no claims", path)
	}
	return Published{Path: path, Scale: doc.Scale, Claims: doc.Claims}, nil
}

// Comparison sets two reports' verdicts side by side, claim by claim: a
// run with the authors' hyperparameters against the tuned one, a rerun
// against the published result, one scale against another.
type Comparison struct {
	A      ComparedReport  `json:"a"`
	B      ComparedReport  `json:"b"`
	Claims []ComparedClaim `json:"claims"` // the claims both test, in A's order
	Same   int             `json:"same"`   // of Claims, with the same verdict
	Differ []string        `json:"differ"` // of Claims, the IDs whose verdicts differ
	OnlyA  []string        `json:"only_a"`
	OnlyB  []string        `json:"only_b"`
}

// ComparedReport names one side of a comparison.
type ComparedReport struct {
	Path string `json:"path"`
	// SHA256 is the digest of the claims.json read, where the reader
	// pinned it (a report's reference).
	SHA256     string `json:"sha256,omitempty"`
	Profile    string `json:"profile"`
	PaperScale bool   `json:"paper_scale"`
	Claims     int    `json:"claims"`
}

// ComparedClaim is one claim both reports test.
type ComparedClaim struct {
	ID     string      `json:"id"`
	Figure string      `json:"figure"`
	A      SideVerdict `json:"a"`
	B      SideVerdict `json:"b"`
	Same   bool        `json:"same"`
}

// SideVerdict is a claim's verdict in one report and the statistic behind
// it (the claim's summary, or its first finding).
type SideVerdict struct {
	Verdict Verdict  `json:"verdict"`
	Finding *Finding `json:"finding,omitempty"`
	Problem string   `json:"problem,omitempty"` // why there is no statistic
}

// Compare sets a's and b's verdicts side by side: the claims both test in
// a's order, then the IDs only one of them has.
func Compare(a, b Published) Comparison {
	side := func(r Published) ComparedReport {
		return ComparedReport{Path: r.Path, Profile: r.Scale.Profile, PaperScale: r.Scale.Paper, Claims: len(r.Claims)}
	}
	c := Comparison{A: side(a), B: side(b), Claims: []ComparedClaim{}, Differ: []string{}, OnlyA: []string{}, OnlyB: []string{}}
	inB := map[string]ClaimResult{}
	for _, cl := range b.Claims {
		inB[cl.ID] = cl
	}
	inA := map[string]bool{}
	for _, ca := range a.Claims {
		inA[ca.ID] = true
		cb, ok := inB[ca.ID]
		if !ok {
			c.OnlyA = append(c.OnlyA, ca.ID)
			continue
		}
		cc := ComparedClaim{ID: ca.ID, Figure: ca.Figure, A: sideVerdict(ca), B: sideVerdict(cb), Same: ca.Verdict == cb.Verdict}
		if cc.Same {
			c.Same++
		} else {
			c.Differ = append(c.Differ, ca.ID)
		}
		c.Claims = append(c.Claims, cc)
	}
	for _, cb := range b.Claims {
		if !inA[cb.ID] {
			c.OnlyB = append(c.OnlyB, cb.ID)
		}
	}
	return c
}

func sideVerdict(c ClaimResult) SideVerdict {
	v := SideVerdict{Verdict: c.Verdict, Finding: c.Summary, Problem: c.Problem}
	if v.Finding == nil && len(c.Findings) > 0 {
		v.Finding = &c.Findings[0]
	}
	return v
}

// Line is the statistic behind a verdict as one line: where, what,
// value [lo, hi], n; or why there is none.
func (v SideVerdict) Line() string {
	f := v.Finding
	if f == nil {
		if v.Problem != "" {
			return v.Problem
		}
		return "no statistic"
	}
	var parts []string
	if f.Key != "" {
		parts = append(parts, f.Key)
	}
	if f.X != "" {
		parts = append(parts, f.X)
	}
	val := fmt.Sprintf("%s = %.4g", f.Label, f.Value)
	switch {
	case f.AtLeast:
		val = fmt.Sprintf("%s ≥ %.4g", f.Label, f.Value)
	case !math.IsNaN(f.Lo) || !math.IsNaN(f.Hi):
		val += fmt.Sprintf(" [%.4g, %.4g]", f.Lo, f.Hi)
	}
	return strings.Join(append(parts, fmt.Sprintf("%s, n = %d", val, f.Seeds)), "; ")
}

// ScaleWords says at what scale a compared report was made.
func (r ComparedReport) ScaleWords() string {
	if r.PaperScale {
		return "the paper's scale"
	}
	return "reduced scale"
}

// ComparisonSection is a report's section that sets each of its verdicts
// beside a reference run's (A: the reference, B: this report).
type ComparisonSection struct {
	Name string `json:"name"`
	Comparison
}

// intro says what the section compares and how many verdicts agree.
func (s *ComparisonSection) intro() string {
	a := s.A
	pin := ""
	if len(a.SHA256) >= 12 {
		pin = ", sha256 " + a.SHA256[:12] + "…"
	}
	out := fmt.Sprintf("Each claim's verdict here beside its verdict in %s (%s%s: profile %s, %s, %d claims). "+
		"The same verdict in %d of the %d claims both reports test", s.Name, a.Path, pin, a.Profile, a.ScaleWords(), a.Claims, s.Same, len(s.Claims))
	if len(s.Differ) == 0 {
		return out + "."
	}
	return out + "; where they differ, the statistic behind each verdict is beside it."
}

// only lists the claims one side lacks, as sentences ("" when none).
func (s *ComparisonSection) only() []string {
	var out []string
	if len(s.OnlyA) > 0 {
		out = append(out, fmt.Sprintf("Tested only there: %s.", strings.Join(s.OnlyA, ", ")))
	}
	if len(s.OnlyB) > 0 {
		out = append(out, fmt.Sprintf("Tested only here: %s.", strings.Join(s.OnlyB, ", ")))
	}
	return out
}

func (s *ComparisonSection) markdown(b *bytes.Buffer, md func(string) string) {
	fmt.Fprintf(b, "\n## Against %s\n\n%s\n\n", md(s.Name), md(s.intro()))
	b.WriteString("| claim | there | here | the statistic there | the statistic here |\n|---|---|---|---|---|\n")
	for _, c := range s.Claims {
		there, here := "same verdict", ""
		if !c.Same {
			there, here = md(c.A.Line()), md(c.B.Line())
		}
		fmt.Fprintf(b, "| %s | %s | **%s** | %s | %s |\n", c.ID, c.A.Verdict.Words(), c.B.Verdict.Words(), there, here)
	}
	for _, o := range s.only() {
		fmt.Fprintf(b, "\n%s\n", o)
	}
}

func (s *ComparisonSection) html(b *bytes.Buffer) {
	e := html.EscapeString
	fmt.Fprintf(b, "<h2 id=\"reference\">Against %s</h2>\n<p>%s</p>\n<table class=\"reference\">\n<tr><th>claim</th><th>there</th><th>here</th><th>the statistic there</th><th>the statistic here</th></tr>\n", e(s.Name), e(s.intro()))
	for _, c := range s.Claims {
		there, here, class := "same verdict", "", "same"
		if !c.Same {
			there, here, class = e(c.A.Line()), e(c.B.Line()), "differs"
		}
		fmt.Fprintf(b, "<tr class=\"%s\"><td><a href=\"#claim-%s\">%s</a></td><td class=\"%s\">%s</td><td class=\"%s\"><strong>%s</strong></td><td>%s</td><td>%s</td></tr>\n",
			class, e(c.ID), e(c.ID), c.A.Verdict, c.A.Verdict.Words(), c.B.Verdict, c.B.Verdict.Words(), there, here)
	}
	b.WriteString("</table>\n")
	for _, o := range s.only() {
		fmt.Fprintf(b, "<p>%s</p>\n", e(o))
	}
}

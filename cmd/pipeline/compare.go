package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"zorepro/stages/report"
)

// compareCmd sets two reports' verdicts side by side, claim by claim: a
// run with the authors' hyperparameters against the tuned one, a rerun
// against the published result, one scale against another.
type compareCmd struct {
	outputFlags
	a, b string
}

func (c *compareCmd) doc() commandDoc {
	return commandDoc{name: "compare", args: "A B", summary: "two reports' verdicts side by side, claim by claim (A, B: a publication, a figures directory or a claims.json)",
		detail: "For every claim both reports test: its verdict in each and, where they differ, the statistic each\n" +
			"computed (value, 95% interval, seeds); then the claims only one report has. Reads the two claims.json\n" +
			"files only (no store): e.g. compare results/paper results/published. Exit 0 whether or not they agree."}
}

func (c *compareCmd) define(f *flagSet) { c.outputFlags.define(f, false) }

func (c *compareCmd) check(args []string) []string {
	if len(args) != 2 {
		return []string{fmt.Sprintf("pipeline compare: takes two reports (A B), got %d arguments", len(args))}
	}
	c.a, c.b = args[0], args[1]
	return nil
}

func (c *compareCmd) run(inv *invocation) (int, error) {
	a, err := readClaims(c.a)
	if err != nil {
		return exitInvalid, err
	}
	b, err := readClaims(c.b)
	if err != nil {
		return exitInvalid, err
	}
	doc := compareReports(a, b)
	if c.json {
		return exitOK, json.NewEncoder(inv.stdout).Encode(doc)
	}
	printComparison(inv.stdout, doc)
	return exitOK, nil
}

// reportFile is one side of a comparison: what compare reads of a
// report's claims.json.
type reportFile struct {
	path string
	doc  struct {
		Scale  report.Scale         `json:"scale"`
		Claims []report.ClaimResult `json:"claims"`
	}
}

// readClaims reads the claims.json at path, or in the directory path.
func readClaims(path string) (reportFile, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		path = filepath.Join(path, "claims.json")
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return reportFile{}, fmt.Errorf("%s: no such file (give a publication, a figures directory or a claims.json)", path)
	}
	if err != nil {
		return reportFile{}, err
	}
	rf := reportFile{path: path}
	if err := json.Unmarshal(data, &rf.doc); err != nil {
		return reportFile{}, fmt.Errorf("%s: not a report's claims.json: %v", path, err)
	}
	if len(rf.doc.Claims) == 0 {
		return reportFile{}, fmt.Errorf("%s: not a report's claims.json: it lists no claims", path)
	}
	return rf, nil
}

// compareDoc is what compare prints (--json: this document).
type compareDoc struct {
	A      compareSide    `json:"a"`
	B      compareSide    `json:"b"`
	Claims []claimCompare `json:"claims"` // the claims both test, in A's order
	Same   int            `json:"same"`   // of Claims, with the same verdict
	Differ []string       `json:"differ"` // of Claims, the IDs whose verdicts differ
	OnlyA  []string       `json:"only_a"`
	OnlyB  []string       `json:"only_b"`
}

// compareSide names one report.
type compareSide struct {
	Path       string `json:"path"`
	Profile    string `json:"profile"`
	PaperScale bool   `json:"paper_scale"`
	Claims     int    `json:"claims"`
}

// claimCompare is one claim in both reports.
type claimCompare struct {
	ID     string           `json:"id"`
	Figure string           `json:"figure"`
	A      claimSideVerdict `json:"a"`
	B      claimSideVerdict `json:"b"`
	Same   bool             `json:"same"`
}

// claimSideVerdict is a claim's verdict in one report and the statistic
// behind it (the claim's summary, or its first finding).
type claimSideVerdict struct {
	Verdict report.Verdict  `json:"verdict"`
	Finding *report.Finding `json:"finding,omitempty"`
	Problem string          `json:"problem,omitempty"` // why there is no statistic
}

func compareReports(a, b reportFile) compareDoc {
	side := func(r reportFile) compareSide {
		return compareSide{Path: r.path, Profile: r.doc.Scale.Profile, PaperScale: r.doc.Scale.Paper, Claims: len(r.doc.Claims)}
	}
	doc := compareDoc{A: side(a), B: side(b), Claims: []claimCompare{}, Differ: []string{}, OnlyA: []string{}, OnlyB: []string{}}
	inB := map[string]report.ClaimResult{}
	for _, cl := range b.doc.Claims {
		inB[cl.ID] = cl
	}
	inA := map[string]bool{}
	for _, ca := range a.doc.Claims {
		inA[ca.ID] = true
		cb, ok := inB[ca.ID]
		if !ok {
			doc.OnlyA = append(doc.OnlyA, ca.ID)
			continue
		}
		cc := claimCompare{ID: ca.ID, Figure: ca.Figure, A: sideVerdict(ca), B: sideVerdict(cb), Same: ca.Verdict == cb.Verdict}
		if cc.Same {
			doc.Same++
		} else {
			doc.Differ = append(doc.Differ, ca.ID)
		}
		doc.Claims = append(doc.Claims, cc)
	}
	for _, cb := range b.doc.Claims {
		if !inA[cb.ID] {
			doc.OnlyB = append(doc.OnlyB, cb.ID)
		}
	}
	return doc
}

func sideVerdict(c report.ClaimResult) claimSideVerdict {
	v := claimSideVerdict{Verdict: c.Verdict, Finding: c.Summary, Problem: c.Problem}
	if v.Finding == nil && len(c.Findings) > 0 {
		v.Finding = &c.Findings[0]
	}
	return v
}

func printComparison(w io.Writer, d compareDoc) {
	for _, s := range []struct {
		name string
		side compareSide
	}{{"A", d.A}, {"B", d.B}} {
		scale := "reduced scale"
		if s.side.PaperScale {
			scale = "the paper's scale"
		}
		fmt.Fprintf(w, "%s: %s (profile %s, %s; %d claims)\n", s.name, s.side.Path, s.side.Profile, scale, s.side.Claims)
	}
	fmt.Fprintf(w, "\n%-28s %-14s %-14s\n", "claim", "A", "B")
	for _, c := range d.Claims {
		mark := ""
		if !c.Same {
			mark = "  differs"
		}
		fmt.Fprintf(w, "%-28s %-14s %-14s%s\n", c.ID, c.A.Verdict, c.B.Verdict, mark)
	}
	fmt.Fprintf(w, "\nthe same verdict in %d of the %d claims both test", d.Same, len(d.Claims))
	if len(d.Differ) == 0 {
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "; %d differ:\n", len(d.Differ))
		for _, c := range d.Claims {
			if c.Same {
				continue
			}
			fmt.Fprintf(w, "  %s\n    A %s: %s\n    B %s: %s\n", c.ID, c.A.Verdict, c.A.line(), c.B.Verdict, c.B.line())
		}
	}
	for _, only := range []struct {
		name string
		ids  []string
	}{{"A", d.OnlyA}, {"B", d.OnlyB}} {
		if len(only.ids) > 0 {
			fmt.Fprintf(w, "only in %s: %s\n", only.name, strings.Join(only.ids, ", "))
		}
	}
}

// line is the statistic behind a verdict as one line: where, what,
// value [lo, hi], n; or why there is none.
func (v claimSideVerdict) line() string {
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

package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"zorepro/stages/report"
)

// compare sets two reports' verdicts side by side: the smoke report
// against a copy in which one verdict changed, one claim is gone and one
// is new; the claims both test, the one that differs with each side's
// statistic, and those only one has, in text and in JSON. A path that
// holds no claims.json, or one that is not a report's, is bad input
// (exit 2) named in the error.
func TestCompareReports(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir, _ := smokeStore(t)
	figDir := filepath.Join(dir, "fig")
	other := filepath.Join(dir, "other.json")
	alt := alterClaims(t, filepath.Join(figDir, "claims.json"), other)
	claims, changed, gone, was, now := alt.claims, alt.changed, alt.gone, alt.was, alt.now

	out, code := cli(t, bin, root, "compare", figDir, other)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, out)
	}
	both := claims - 1
	for _, want := range []string{
		"A: " + filepath.Join(figDir, "claims.json") + " (profile smoke, reduced scale; " + strconv.Itoa(claims) + " claims)",
		"the same verdict in " + strconv.Itoa(both-1) + " of the " + strconv.Itoa(both) + " claims both test; 1 differ:",
		"only in A: " + gone, "only in B: " + alt.added,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compare's output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(changed) + ` +` + was + ` +` + now + ` +differs$`).MatchString(out) {
		t.Errorf("compare's table does not mark %s (%s, then %s) as differing:\n%s", changed, was, now, out)
	}
	if !regexp.MustCompile(`(?m)^    A ` + was + `: .*n = \d+$`).MatchString(out) {
		t.Errorf("compare does not give A's statistic for %s:\n%s", changed, out)
	}

	js, code := cliStdout(t, bin, root, "compare", figDir, other, "--json")
	var cd comparisonJSON
	if err := json.Unmarshal([]byte(js), &cd); err != nil || code != 0 {
		t.Fatalf("compare --json: %v (exit %d)\n%s", err, code, js)
	}
	if cd.Same != both-1 || !slices.Equal(cd.Differ, []string{changed}) || !slices.Equal(cd.OnlyA, []string{gone}) ||
		!slices.Equal(cd.OnlyB, []string{alt.added}) || len(cd.Claims) != both {
		t.Errorf("compare --json: same %d, differ %v, only A %v, only B %v, %d claims", cd.Same, cd.Differ, cd.OnlyA, cd.OnlyB, len(cd.Claims))
	}
	if c := cd.Claims[0]; c.ID != changed || c.Same || c.A.Verdict != was || c.B.Verdict != now {
		t.Errorf("compare --json, first claim: %+v", c)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"claims": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ arg, want string }{
		{filepath.Join(dir, "missing"), filepath.Join(dir, "missing") + ": no such file"},
		{dir, filepath.Join(dir, "claims.json") + ": no such file"},
		{bad, bad + ": not a report's claims.json"},
	} {
		out, code := cli(t, bin, root, "compare", figDir, c.arg)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("compare with %s: exit %d, want 2 and %q:\n%s", c.arg, code, c.want, out)
		}
	}
}

// comparisonJSON is what the tests read of a comparison in JSON: compare
// --json's document, and a report's reference section.
type comparisonJSON struct {
	A      struct{ Path, SHA256 string }
	Same   int
	Differ []string
	OnlyA  []string `json:"only_a"`
	OnlyB  []string `json:"only_b"`
	Claims []struct {
		ID   string
		Same bool
		A, B struct {
			Verdict string
			Finding *struct {
				Label string
				N     int
			}
		}
	}
}

// alteredClaims is a report's claims.json with one verdict changed, its
// last claim removed and a new one added.
type alteredClaims struct {
	claims                  int // in the original
	changed, gone, was, now string
	added                   string
	sha256                  string // of the altered file
}

// alterClaims writes to dst the claims.json at src, altered.
func alterClaims(t *testing.T, src, dst string) alteredClaims {
	t.Helper()
	var doc map[string]any
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	claims := doc["claims"].([]any)
	first, last := claims[0].(map[string]any), claims[len(claims)-1].(map[string]any)
	a := alteredClaims{claims: len(claims), changed: first["id"].(string), gone: last["id"].(string), was: first["verdict"].(string), now: "holds", added: "new-claim"}
	if a.was == "holds" {
		a.now = "contradicted"
	}
	first["verdict"] = a.now
	added := map[string]any{"id": a.added, "figure": "fig2-linreg", "verdict": "holds", "findings": []any{}}
	doc["claims"] = append(claims[:len(claims)-1:len(claims)-1], added)
	b, _ := json.Marshal(doc)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	a.sha256 = fmt.Sprintf("%x", sha256.Sum256(b))
	return a
}

// A report with a reference (the published-hyperparameter profile's: the
// tuned run's claims.json) sets each verdict beside the reference's, in
// claims.json, report.md and report.html, with the statistic behind each
// verdict that differs and the claims only one tests. The reference is
// pinned by its SHA-256: a changed or missing file fails the report task
// with an error naming the field and the file, and the report already
// exported stays.
func TestReportComparesWithItsReference(t *testing.T) {
	t.Parallel() // no clock in its checks; see tests.md
	bin, root, dir, _ := smokeStore(t)
	figDir := filepath.Join(dir, "fig")
	ref := filepath.Join(dir, "reference.json")
	alt := alterClaims(t, filepath.Join(figDir, "claims.json"), ref)
	text, err := os.ReadFile(filepath.Join(root, "dag.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	anchor := "  - name: report\n    kind: report\n"
	i := strings.Index(string(text), anchor)
	j := strings.Index(string(text)[max(i, 0):], "    params:\n")
	if i < 0 || j < 0 {
		t.Fatal("dag.yaml: no report stage with params")
	}
	at := i + j + len("    params:\n")
	withRef := func(path, sum string) string {
		dag := filepath.Join(dir, "dag-"+filepath.Base(path)+"-"+sum[:8]+".yaml")
		line := fmt.Sprintf("      reference: {path: %q, sha256: %q, name: \"the altered copy\"}\n", path, sum)
		if err := os.WriteFile(dag, []byte(string(text[:at])+line+string(text[at:])), 0o644); err != nil {
			t.Fatal(err)
		}
		return dag
	}
	flags := func(dag string) []string {
		return []string{"report", "--dag", dag, "--profile", "smoke", "--store", filepath.Join(dir, "store"), "--figures", figDir}
	}
	dag := withRef(ref, alt.sha256)
	res, _ := pipelineRun(t, bin, root, flags(dag)...)
	if !slices.Equal(res.Executed, []string{"report"}) {
		t.Fatalf("run report with a reference: executed %v, want the report alone", res.Executed)
	}
	var doc struct {
		Reference struct {
			Name string
			comparisonJSON
		}
	}
	data, err := os.ReadFile(filepath.Join(figDir, "claims.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Reference
	both := alt.claims - 1
	if r.Name != "the altered copy" || r.A.Path != ref || r.A.SHA256 != alt.sha256 || r.Same != both-1 || len(r.Claims) != both ||
		!slices.Equal(r.Differ, []string{alt.changed}) || !slices.Equal(r.OnlyA, []string{alt.added}) || !slices.Equal(r.OnlyB, []string{alt.gone}) {
		t.Fatalf("claims.json's reference: %+v", r)
	}
	if c := r.Claims[0]; c.ID != alt.changed || c.Same || c.A.Verdict != alt.now || c.B.Verdict != alt.was {
		t.Errorf("claims.json's reference, first claim: %+v", c)
	}
	md, _ := os.ReadFile(filepath.Join(figDir, "report.md"))
	page, _ := os.ReadFile(filepath.Join(figDir, "report.html"))
	words := func(v string) string { return strings.ReplaceAll(v, "-", " ") }
	for _, want := range []string{
		"## Against the altered copy",
		fmt.Sprintf("The same verdict in %d of the %d claims both reports test", both-1, both),
		fmt.Sprintf("| %s | %s | **%s** | ", alt.changed, words(alt.now), words(alt.was)),
		"Tested only there: " + alt.added + ".", "Tested only here: " + alt.gone + ".",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if !regexp.MustCompile(`\| ` + regexp.QuoteMeta(alt.changed) + ` \|[^\n]*\| [^|\n]*n = \d+ \| [^|\n]*n = \d+ \|`).Match(md) {
		t.Errorf("report.md does not give both statistics for %s", alt.changed)
	}
	for _, want := range []string{`<h2 id="reference">Against the altered copy</h2>`, `<tr class="differs"><td><a href="#claim-` + alt.changed + `">`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if n := strings.Count(string(page), `<tr class="same">`); n != both-1 {
		t.Errorf("report.html has %d rows of the same verdict, want %d", n, both-1)
	}

	// A pin the file does not match, then a file that is not there: the
	// report task (a new identity) fails, naming the field and the file;
	// the exported report stays. (The same pin and path with the file
	// changed under them is the cached report: its output is that of
	// the pinned bytes.)
	wrong := fmt.Sprintf("%x", sha256.Sum256(data))
	gone := ref + ".gone"
	for _, c := range []struct {
		step string
		dag  string
		want []string
	}{
		{"pinned to other bytes", withRef(ref, wrong), []string{"params.reference.sha256: " + ref + " has sha256 " + alt.sha256 + ", the dag pins " + wrong}},
		{"missing", withRef(gone, alt.sha256), []string{"params.reference.path: " + gone + ": no such file"}},
	} {
		out, code := cli(t, bin, root, append([]string{"run"}, flags(c.dag)...)...)
		if code == 0 {
			t.Errorf("run report with its reference %s: exit 0\n%s", c.step, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("run report with its reference %s: the output lacks %q:\n%s", c.step, w, out)
			}
		}
		if now, _ := os.ReadFile(filepath.Join(figDir, "claims.json")); string(now) != string(data) {
			t.Errorf("run report with its reference %s: the exported claims.json changed", c.step)
		}
	}
}

// The table's verdict columns line up whatever the length of the claim
// IDs: each row's A verdict starts where the header's A does.
func TestCompareTableAligned(t *testing.T) {
	d := report.Comparison{Claims: []report.ComparedClaim{
		{ID: "fig1-order", A: report.SideVerdict{Verdict: report.Holds}, B: report.SideVerdict{Verdict: report.Holds}, Same: true},
		{ID: "fig2-nreinforce-const-between", A: report.SideVerdict{Verdict: report.Inconclusive}, B: report.SideVerdict{Verdict: report.Holds}},
	}}
	var b strings.Builder
	printComparison(&b, d)
	lines := strings.Split(b.String(), "\n")
	col := -1
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "claim "):
			col = strings.Index(l, "A")
		case strings.HasPrefix(l, "fig1-order "):
			if col < 0 || strings.Index(l, "holds") != col {
				t.Errorf("row %q: A's verdict not at column %d", l, col)
			}
		case strings.HasPrefix(l, "fig2-nreinforce-const-between "):
			if col < 0 || strings.Index(l, "inconclusive") != col {
				t.Errorf("row %q: A's verdict not at column %d", l, col)
			}
		}
	}
	if col < 0 {
		t.Fatalf("no header in:\n%s", b.String())
	}
}

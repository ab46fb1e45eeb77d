package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
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
	var doc map[string]any
	data, err := os.ReadFile(filepath.Join(figDir, "claims.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	claims := doc["claims"].([]any)
	first, last := claims[0].(map[string]any), claims[len(claims)-1].(map[string]any)
	changed, gone := first["id"].(string), last["id"].(string)
	was := first["verdict"].(string)
	now := "holds"
	if was == "holds" {
		now = "contradicted"
	}
	first["verdict"] = now
	added := map[string]any{"id": "new-claim", "figure": "fig2-linreg", "verdict": "holds", "findings": []any{}}
	doc["claims"] = append(claims[:len(claims)-1:len(claims)-1], added)
	other := filepath.Join(dir, "other.json")
	b, _ := json.Marshal(doc)
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}

	out, code := cli(t, bin, root, "compare", figDir, other)
	if code != 0 {
		t.Fatalf("compare: exit %d\n%s", code, out)
	}
	both := len(claims) - 1
	for _, want := range []string{
		"A: " + filepath.Join(figDir, "claims.json") + " (profile smoke, reduced scale; " + strconv.Itoa(len(claims)) + " claims)",
		"the same verdict in " + strconv.Itoa(both-1) + " of the " + strconv.Itoa(both) + " claims both test; 1 differ:",
		"only in A: " + gone, "only in B: new-claim",
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
	var cd struct {
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
	if err := json.Unmarshal([]byte(js), &cd); err != nil || code != 0 {
		t.Fatalf("compare --json: %v (exit %d)\n%s", err, code, js)
	}
	if cd.Same != both-1 || !slices.Equal(cd.Differ, []string{changed}) || !slices.Equal(cd.OnlyA, []string{gone}) ||
		!slices.Equal(cd.OnlyB, []string{"new-claim"}) || len(cd.Claims) != both {
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

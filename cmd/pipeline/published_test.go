package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestPublishedPaperReport checks what issue 43 asks of the published
// paper report, on results/paper itself: every verdict of the vocabulary
// (none "not shown at this scale"), every claim that does not hold with
// its explanation in claims.json and on the page, olr-b-dependence not
// contradicted (neither learner moves θ, so its test measures nothing),
// and no Student t interval on Fig. 3c's sample counts where a seed's run
// stopped at the 10^6 cap (a censored count: its mean is a lower bound).
func TestPublishedPaperReport(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "results", "paper")
	var m struct {
		Profile, Revision string
	}
	readJSON(t, filepath.Join(dir, "manifest.json"), &m)
	if m.Profile != "paper" {
		t.Fatalf("results/paper/manifest.json: profile %q", m.Profile)
	}
	var doc struct {
		Claims []struct {
			claimVerdict
			Findings []struct {
				Key, Label, Interval string
			}
		}
	}
	readJSON(t, filepath.Join(dir, "claims.json"), &doc)
	if len(doc.Claims) < 30 {
		t.Fatalf("results/paper/claims.json: %d claims", len(doc.Claims))
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	verdicts := make([]claimVerdict, len(doc.Claims))
	for i, c := range doc.Claims {
		verdicts[i] = c.claimVerdict
	}
	checkVerdictsExplained(t, verdicts, page, md)

	capped := cappedSeeds(t, filepath.Join(dir, "fig3c-lqr-seeds.csv"), 100)
	seen := map[string]bool{}
	for _, c := range doc.Claims {
		seen[c.ID] = true
		switch c.ID {
		case "olr-b-dependence":
			if c.Verdict == "contradicted" {
				t.Errorf("olr-b-dependence is contradicted; where neither learner moves θ its test measures nothing (uninformative)")
			}
		case "fig3c-samples":
			for _, f := range c.Findings {
				if f.Interval == "Student t" && capped[f.Label+" "+f.Key] {
					t.Errorf("fig3c-samples: %s at c = %s has a Student t interval, and a seed's run stopped at the cap there", f.Label, f.Key)
				}
			}
		}
	}
	for _, id := range []string{"olr-b-dependence", "fig3c-samples"} {
		if !seen[id] {
			t.Errorf("results/paper/claims.json has no claim %s", id)
		}
	}
}

// cappedSeeds reads a figure's per-seed CSV and returns the "curve x"
// keys where some seed's value is at or above limit.
func cappedSeeds(t *testing.T, path string, limit float64) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[0]) != 5 || rows[0][1] != "curve" || rows[0][3] != "x" || rows[0][4] != "y" {
		t.Fatalf("%s: not a per-seed CSV (panel,curve,seed,x,y): %v", path, err)
	}
	out := map[string]bool{}
	for _, r := range rows[1:] {
		y, err := strconv.ParseFloat(r[4], 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if y >= limit {
			out[r[1]+" "+r[3]] = true
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no seed at the cap %v; Fig. 3c at paper scale has capped runs, so the check would test nothing", path, limit)
	}
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPublishedReportsWithoutTheirFont: every report published under
// results/ draws its figures' text where it draws it with the Liberation
// fonts installed, and inside each figure, on a machine without them
// (issue 43: the paper report's figures broke on a Mac).
func TestPublishedReportsWithoutTheirFont(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	pages, _ := filepath.Glob(filepath.Join(repoRoot(t), "results", "*", "report.html"))
	if len(pages) == 0 {
		t.Fatal("no report under results/")
	}
	for _, page := range pages {
		dir := filepath.Dir(page)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			checkFiguresWithoutTheirFont(t, data, chromium)
		})
	}
}

package stages

import (
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"zorepro/pipeline/dag"
	"zorepro/pipeline/task"
	"zorepro/stages/report"
)

// checkedOnce remembers that ../dag.yaml was checked under every profile,
// as the pipeline command remembers it (dag.Options.Checked): the tests
// here load the file 18 times, and the first load checks it in full.
type checkedOnce struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (c *checkedOnce) Has(d string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[d]
}

func (c *checkedOnce) Add(d string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[d] = true
}

var checkedDAG = &checkedOnce{seen: map[string]bool{}}

// loadDAG loads ../dag.yaml under profile.
func loadDAG(profile string) (*dag.Plan, error) {
	return dag.LoadWith("../dag.yaml", profile, Kinds(), dag.Options{Checked: checkedDAG})
}

// TestNonPaperFiguresSayTheirProfile: a figure drawn at another profile's
// scale must not pass for the paper's, so every plot task of every profile
// but paper has a caption naming its profile (and the paper profile's
// captions name none).
func TestNonPaperFiguresSayTheirProfile(t *testing.T) {
	for _, profile := range []string{"paper", "quick", "smoke"} {
		plan, err := loadDAG(profile)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tk := range plan.Tasks {
			if tk.Stage.Kind != "plot" {
				continue
			}
			n++
			caption := tk.Params.String("caption")
			switch {
			case profile == "paper" && strings.Contains(caption, "profile"):
				t.Errorf("paper: %s's caption names a profile: %q", tk.Path, caption)
			case profile != "paper" && !strings.HasPrefix(caption, profile+" profile, "):
				t.Errorf("%s: %s's caption does not begin with %q: %q", profile, tk.Path, profile+" profile, ", caption)
			}
		}
		if n < 6 {
			t.Errorf("%s: %d plot tasks, want at least 6", profile, n)
		}
	}
}

// TestEveryTaskFeedsAFigure: in every profile each task's output is an
// input of another task, up to the plots and the report, so that no
// profile spends time on work nothing uses. (The quick profile generated
// three linear-regression data sets at d = 1000 for seeds it excluded from
// training there.)
func TestEveryTaskFeedsAFigure(t *testing.T) {
	for _, profile := range profiles {
		plan, err := loadDAG(profile)
		if err != nil {
			t.Fatal(err)
		}
		used := map[*dag.Task]bool{}
		for _, tk := range plan.Tasks {
			for _, d := range tk.Deps {
				used[d] = true
			}
		}
		var unused []string
		for _, tk := range plan.Tasks {
			if !used[tk] && tk.Stage.Kind != "plot" && tk.Stage.Kind != "report" {
				unused = append(unused, tk.Path)
			}
		}
		if len(unused) > 0 {
			t.Errorf("%s: %d task(s) feed no other task, e.g. %s", profile, len(unused), strings.Join(unused[:min(3, len(unused))], ", "))
		}
	}
}

// TestCrossoverClaimsCanBeTested: a crossover claim ("ahead from H = a-b
// on") is judged at the keys from b on, so every profile that plans its
// figure must compute a key there on the claim's panel. Humanoid's claim
// (20.6-34.3) on a grid that stopped at 34 read as an unexplained
// inconclusive in a trial run of the crossover profile; H = 55 on
// Humanoid is what this test asks for.
func TestCrossoverClaimsCanBeTested(t *testing.T) {
	checked := 0
	for _, profile := range profiles {
		plots, claims := plotsAndClaims(t, profile)
		for _, c := range claims {
			plot := plots[c.Figure]
			if c.Stat != report.StatCrossover || c.Over != "x" || plot == nil {
				continue
			}
			xAxis, panelAxis := plot.Params.String("x_coord"), plot.Params.String("panel")
			largest := math.Inf(-1)
			for _, in := range plot.Inputs["curves"] {
				if p, _ := in.Coord(panelAxis); c.Panel != "" && p != c.Panel {
					continue
				}
				if v, ok := in.Coord(xAxis); ok {
					x, err := strconv.ParseFloat(v, 64)
					if err != nil {
						t.Fatalf("%s: %s's %s = %q", profile, in.Path, xAxis, v)
					}
					largest = max(largest, x)
				}
			}
			checked++
			if largest < c.Between[1] {
				t.Errorf("%s: claim %s is judged from %s = %g on, but panel %q computes %s up to %g", profile, c.ID, xAxis, c.Between[1], c.Panel, xAxis, largest)
			}
		}
	}
	if checked < 20 {
		t.Errorf("%d crossover claims checked, want at least 20 (the paper's four and the crossover profile's twelve)", checked)
	}
}

// TestClaimCurvesAreDrawn: every curve a claim names is one its figure
// draws (a key of the plot's labels), in every profile. A report calls a
// curve with no points in a panel "not run in this profile" (the smoke
// profile runs no constant-eps natural REINFORCE); this test keeps a
// misspelt curve from passing for that.
func TestClaimCurvesAreDrawn(t *testing.T) {
	checked := 0
	for _, profile := range profiles {
		plots, claims := plotsAndClaims(t, profile)
		for _, c := range claims {
			plot, ok := plots[c.Figure]
			labels, has := (*task.Params)(nil), false
			if ok {
				labels, has = plot.Params.Sub("labels")
			}
			if !has {
				t.Errorf("%s: claim %s is about figure %q, which no plot task of the profile draws with labels", profile, c.ID, c.Figure)
				continue
			}
			drawn := labels.Keys()
			for _, curve := range append(slices.Clone(c.Curves), c.Winner) {
				if curve != "" && !slices.Contains(drawn, curve) {
					t.Errorf("%s: claim %s names curve %q, which %s does not draw (its curves: %s)", profile, c.ID, curve, c.Figure, strings.Join(drawn, ", "))
				}
			}
			checked++
		}
	}
	if checked < 200 {
		t.Errorf("%d claims checked across the profiles, want at least 200", checked)
	}
}

// profiles are the profiles of ../dag.yaml.
var profiles = []string{"paper", "quick", "smoke", "horizon-long", "published", "crossover", "horizon-variants"}

// plotsAndClaims loads ../dag.yaml under profile and returns its plot
// tasks by figure and its reports' claims.
func plotsAndClaims(t *testing.T, profile string) (map[string]*dag.Task, []report.Claim) {
	t.Helper()
	plan, err := loadDAG(profile)
	if err != nil {
		t.Fatal(err)
	}
	plots := map[string]*dag.Task{}
	var claims []report.Claim
	for _, tk := range plan.Tasks {
		switch tk.Stage.Kind {
		case "plot":
			plots[tk.Params.String("figure")] = tk
		case "report":
			claims = append(claims, report.DecodeClaims(tk.Params)...)
		}
	}
	return plots, claims
}

// TestPublishedReportPinsTheTunedRun: the published-hyperparameter
// profile's report sets its verdicts beside the tuned run's, the
// claims.json under results/paper, pinned by its SHA-256 (the report's
// identity covers the reference's bytes). Republishing results/paper
// without pinning the new digest would make that report fail on a fresh
// machine; this test says so first.
func TestPublishedReportPinsTheTunedRun(t *testing.T) {
	plan, err := loadDAG("published")
	if err != nil {
		t.Fatal(err)
	}
	var ref *task.Params
	for _, tk := range plan.Tasks {
		if tk.Stage.Kind == "report" {
			if ref, _ = tk.Params.Sub("reference"); ref == nil {
				t.Fatalf("%s has no params.reference", tk.Path)
			}
		}
	}
	if ref == nil {
		t.Fatal("the published profile plans no report")
	}
	path, pin := ref.String("path"), ref.String("sha256")
	if path != "results/paper/claims.json" {
		t.Errorf("the published report's reference is %q, want the tuned run's results/paper/claims.json", path)
	}
	data, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	if sum := fmt.Sprintf("%x", sha256.Sum256(data)); sum != pin {
		t.Errorf("%s has sha256 %s; dag.yaml's published profile pins %s (report.params.reference.sha256): pin the new digest", path, sum, pin)
	}
}

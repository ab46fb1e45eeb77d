package stages

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zorepro/pipeline/dag"
	"zorepro/pipeline/task"
)

// TestNonPaperFiguresSayTheirProfile: a figure drawn at another profile's
// scale must not pass for the paper's, so every plot task of every profile
// but paper has a caption naming its profile (and the paper profile's
// captions name none).
func TestNonPaperFiguresSayTheirProfile(t *testing.T) {
	for _, profile := range []string{"paper", "quick", "smoke"} {
		plan, err := dag.Load("../dag.yaml", profile, Kinds())
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
	for _, profile := range []string{"paper", "quick", "smoke", "horizon-long", "published", "crossover", "horizon-variants"} {
		plan, err := dag.Load("../dag.yaml", profile, Kinds())
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

// TestPublishedReportPinsTheTunedRun: the published-hyperparameter
// profile's report sets its verdicts beside the tuned run's, the
// claims.json under results/paper, pinned by its SHA-256 (the report's
// identity covers the reference's bytes). Republishing results/paper
// without pinning the new digest would make that report fail on a fresh
// machine; this test says so first.
func TestPublishedReportPinsTheTunedRun(t *testing.T) {
	plan, err := dag.Load("../dag.yaml", "published", Kinds())
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

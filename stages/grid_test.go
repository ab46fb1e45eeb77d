package stages_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zorepro/pipeline/dag"
	"zorepro/stages"
	"zorepro/stages/tune"
)

// loadEdited loads the repository's dag.yaml under profile with each old
// text replaced by its new one (each must occur).
func loadEdited(t *testing.T, profile string, edits ...string) (*dag.Plan, error) {
	t.Helper()
	b, err := os.ReadFile("../dag.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for i := 0; i < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("dag.yaml has no %q", edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	path := filepath.Join(t.TempDir(), "dag.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dag.Load(path, profile, stages.Kinds())
}

// A grid value is checked exactly as the parameter it stands for: a value
// the parameter would reject is an error naming the grid axis (issue 27:
// such points were dropped without a word and the run exited 0), every
// problem at once, and a reference likewise.
func TestGridValuesAreValidatedLikeTheirParameters(t *testing.T) {
	cases := []struct {
		name  string
		edits []string
		want  []string
	}{
		{"negative learning rate", []string{"grid: {lr: [0.08, 0.03]}", `grid: {lr: [0.08, -0.03]}`},
			[]string{`stage "tune/linreg": params.grid.lr: must be > 0, got -0.03`}},
		{"string learning rate", []string{"grid: {lr: [0.08, 0.03]}", `grid: {lr: [0.08, "fast"]}`},
			[]string{`params.grid.lr: must be a number, got a string`}},
		{"negative step and zero perturbation", []string{
			"grid: {alpha: [0.02, 0.03], directions: [10], nu: [0.03], top: [5, 10]}",
			"grid: {alpha: [-0.03, 0.03], directions: [10], nu: [0, 0.03], top: [5, 10]}"},
			[]string{`params.grid.alpha: must be > 0, got -0.03`, `params.grid.nu: must be > 0, got 0`}},
		{"negative reference", []string{"params: {reference: {lr: 0.08}}", "params: {reference: {lr: -0.08}}"},
			[]string{`stage "tune/linreg": params.reference.lr: must be > 0, got -0.08`}},
		// Issue 41: 10^14 directions passed validation and the task
		// panicked allocating them (makeslice: len out of range).
		{"directions beyond allocation", []string{
			"grid: {alpha: [0.02, 0.03], directions: [10], nu: [0.03], top: [5, 10]}",
			"grid: {alpha: [0.02, 0.03], directions: [100000000000000], nu: [0.03], top: [5, 10]}"},
			[]string{`stage "tune/linreg": params.grid.directions: must be >= 1 and <= 1e+06, got 1e+14`}},
		{"reference top above directions", []string{
			"params: {reference: {alpha: 0.03, directions: 10, top: 10, nu: 0.03}}",
			"params: {reference: {alpha: 0.03, directions: 10, top: 20, nu: 0.03}}"},
			[]string{`params.reference.top: must be <= directions = 10, got 20`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadEdited(t, "smoke", c.edits...)
			if err == nil {
				t.Fatal("loaded without error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// The only grid points a tuner leaves out are infeasible combinations of
// valid values, and the plan says which and why: the paper profile's ARS
// grid for linear regression has 150 points with top-b above the number of
// directions (spec §3.8: b ≤ N).
func TestInfeasibleGridPointsAreListed(t *testing.T) {
	plan, err := loadEdited(t, "paper")
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, tk := range plan.Tasks {
		if tk.Path != "tune/linreg/d=100/method=ars" {
			continue
		}
		found = true
		sk, ok := tk.Runner.(interface{ Skipped() []tune.Skip })
		if !ok {
			t.Fatalf("%s's runner (%T) does not list skipped points", tk.Path, tk.Runner)
		}
		got := sk.Skipped()
		if len(got) != 150 {
			t.Fatalf("%d skipped points, want 150 (5 α × 5 ν × 6 (N, b) pairs with b > N)", len(got))
		}
		want := tune.Skip{Point: "alpha=0.001 directions=10 nu=0.001 top=50", Reason: "top: must be <= directions = 10, got 50"}
		if got[0].Point != want.Point || got[0].Reason != want.Reason {
			t.Errorf("first skipped point %+v, want %+v", got[0], want)
		}
	}
	if !found {
		t.Fatal("no task tune/linreg/d=100/method=ars in the paper profile")
	}
}

//go:build mujoco

package stages_test

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"zorepro/stages/plot/crossing"
	"zorepro/stages/report"
)

// crossoverDAG is the crossover experiment in miniature: two bodies, three
// horizons, ARS and the three ExAct estimators, a step size tuned over two
// values (one extension round), three evaluation seeds, the figure with
// its difference and scaling views, and the report's claims against the
// best ExAct estimator and on the scaling.
const crossoverDAG = `version: 1
stages:
  - name: generate/crossover
    kind: generate
    params: {env: mujoco}
    matrix: {name: [swimmer, hopper], horizon: [1, 2, 4]}
    overrides: [{when: {name: hopper}, params: {env: hopper}}]
  - name: tune/crossover
    kind: tune
    inputs: {data: generate/crossover}
    matrix: {name: [swimmer, hopper], horizon: [1, 2, 4], method: [arsv1, exact, exact_togo, exact_all]}
    params: {env: mujoco, seeds: [283, 457], budget: 30, budget_per: horizon, strict_budget: false, score: return, select: max,
      directions: 2, nu: 0.1, grid: {alpha: [1e-3, 1e-2]}, extend: 1}
    overrides: &methods
      - {when: {name: hopper}, params: {env: hopper}}
      - {when: {method: exact_togo}, params: {algo: exact, variant: reward-to-go}}
      - {when: {method: exact_all}, params: {algo: exact, variant: all-steps}}
  - name: train/crossover
    kind: train
    inputs: {data: generate/crossover, hyper: tune/crossover}
    matrix: {name: [swimmer, hopper], horizon: [1, 2, 4], method: [arsv1, exact, exact_togo, exact_all], seed: [11, 12, 13]}
    params: {env: mujoco, budget: 30, budget_per: horizon, snapshot_every: 0, snapshot_per_decade: 1, alpha: 1e-3, directions: 2, nu: 0.1}
    overrides: *methods
  - name: evaluate/crossover
    kind: evaluate
    inputs: {trained: train/crossover, data: generate/crossover}
    matrix: {name: [swimmer, hopper], horizon: [1, 2, 4], method: [arsv1, exact, exact_togo, exact_all], seed: [11, 12, 13]}
    params: {env: mujoco}
  - name: plot/crossover
    kind: plot
    inputs: {curves: evaluate/crossover}
    params: {figure: crossover, title: "t", mode: final, x_coord: horizon, x: samples, y: return, panel: name, panels: [swimmer, hopper],
      curve: method, curves: [arsv1, exact, exact_togo, exact_all], log_x: true, band: stderr, caption: "c",
      companion_crossover: {leader: arsv1, rivals: [exact, exact_togo, exact_all], scaling_rivals: [exact], panel_x: {swimmer: 8, hopper: 11}, x_label: d/p, slope: 0.5}}
  - name: report
    kind: report
    inputs: {figures: [plot/crossover], tuned: [tune/crossover]}
    params:
      profile: crossover
      tuning: [{figure: crossover, stage: tune/crossover}]
      claims:
        - {id: best, figure: crossover, section: "§5.2", text: t, stat: crossover, curves: [arsv1, exact, exact_togo, exact_all], over: x, panel: swimmer, between: [1, 2]}
        - {id: grows, figure: crossover, section: "§3", text: t, stat: scaling, curves: [arsv1, exact], panel_x: {swimmer: 8, hopper: 11}, x_label: d/p, expect: ">"}
`

// The crossover experiment runs end to end through the engine with every
// ExAct estimator: tuning (with its extension), training, evaluation, the
// figure with its difference and scaling views, and the report, whose
// scaling claim is what crossing.Analyze computes from the figure's
// per-seed numbers (the scaling view draws the same brackets), and whose
// crossover claim compares ARS with each estimator at every horizon.
func TestCrossoverPipeline(t *testing.T) {
	outs, _ := runDAG(t, crossoverDAG, dagRun{})
	files := lastStore.names(t, outs["plot/crossover"])
	for _, want := range []string{"crossover.svg", "crossover-seeds.csv", "crossover-difference-view.svg", "crossover-difference-view.csv", "crossover-scaling-view.svg", "crossover-scaling.csv"} {
		if !slices.Contains(files, want) {
			t.Errorf("plot/crossover wrote %v, no %s", files, want)
		}
	}
	table, err := report.ParseSeedsCSV(lastStore.read(t, outs["plot/crossover"], "crossover-seeds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	an, err := crossing.Analyze(table, []string{"swimmer", "hopper"}, []float64{8, 11}, []string{"arsv1", "exact"}, crossing.Premise{})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Claims []report.ClaimResult
	}
	if err := json.Unmarshal(lastStore.read(t, outs["report"], "claims.json"), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Claims) != 2 {
		t.Fatalf("claims: %+v", doc.Claims)
	}
	best, grows := doc.Claims[0], doc.Claims[1]
	if len(best.Findings) != 3*3 || best.Findings[2].Label != "arsv1 − exact_all" || best.Problem != "" {
		t.Errorf("best: %d findings, the third %+v, problem %q", len(best.Findings), best.Findings[2], best.Problem)
	}
	for i, f := range grows.Findings {
		b := an.Brackets[i]
		if f.Lo != b.Lo || f.Hi != b.Hi || !(f.Value == b.Point || math.IsNaN(f.Value) && math.IsNaN(b.Point)) {
			t.Errorf("grows, %s: (%v, %v] at %v, Analyze (%v, %v] at %v", f.Key, f.Lo, f.Hi, f.Value, b.Lo, b.Hi, b.Point)
		}
	}
	if s := grows.Summary; s == nil || an.OK && (s.Lo != an.Lo || s.Hi != an.Hi) {
		t.Errorf("grows: summary %+v, Analyze [%v, %v] %v", s, an.Lo, an.Hi, an.OK)
	}
	scaling := string(lastStore.read(t, outs["plot/crossover"], "crossover-scaling.csv"))
	if !strings.HasPrefix(scaling, "panel,x,lo,hi,point,seeds,alpha,used\nswimmer,8,") || strings.Count(scaling, "\n") != 3 {
		t.Errorf("crossover-scaling.csv:\n%s", scaling)
	}
	// Every ExAct estimator was tuned, extended beyond its grid's edge
	// where its choice sat there, and trained with its choice.
	for _, m := range []string{"exact_togo", "exact_all"} {
		var ch struct{ Params map[string]float64 }
		if err := json.Unmarshal(lastStore.read(t, outs["tune/crossover/horizon=4/method="+m+"/name=hopper"], "chosen.json"), &ch); err != nil || ch.Params["alpha"] == 0 {
			t.Errorf("%s's choice: %+v %v", m, ch, err)
		}
	}
}

package report

import (
	"strings"
	"testing"

	"zorepro/pipeline/task"
)

// A figure's provenance names the chosen point of every tune task of its
// stage (those with the coordinate where asks for), with the score and
// what was carried, and the notes of what is not tuned.
func TestHyperparameters(t *testing.T) {
	all := []chosen{
		{Task: "tune/mujoco/horizon=1/method=arsv1/name=swimmer", Params: map[string]any{"nu": 0.2, "alpha": 0.08}, Score: 2.5},
		{Task: "tune/mujoco/horizon=1/method=arsv1/name=halfcheetah", Params: map[string]any{"alpha": 0.008}, Score: 1},
		{Task: "tune/horizon/horizon=30/method=exact/name=swimmer", Params: map[string]any{"alpha": 0.005, "nu": 0.1}, Score: 1.806,
			Carried: map[string]any{"nu": 0.1}, CarriedFrom: "tune/mujoco/horizon=15/method=exact/name=swimmer"},
	}
	tunings := []Tuning{
		{Figure: "fig3a-swimmer", Stage: "tune/mujoco", Where: "name=swimmer"},
		{Figure: "fig3a-swimmer", Note: "nothing else"},
		{Figure: "fig3d-horizon", Stage: "tune/horizon"},
	}
	got, err := hyperparameters("fig3a-swimmer", tunings, all)
	if want := "tuned by tune/mujoco, horizon=1/method=arsv1/name=swimmer: alpha=0.08, nu=0.2 (score 2.5); nothing else"; err != nil || got != want {
		t.Errorf("fig3a: %q, %v\nwant %q", got, err, want)
	}
	got, err = hyperparameters("fig3d-horizon", tunings, all)
	if want := "tuned by tune/horizon, horizon=30/method=exact/name=swimmer: alpha=0.005, nu=0.1 (score 1.806; nu=0.1 carried from tune/mujoco/horizon=15/method=exact/name=swimmer)"; err != nil || got != want {
		t.Errorf("fig3d: %q, %v\nwant %q", got, err, want)
	}
	if got, err := hyperparameters("olr-regret", tunings, all); got != "" || err != nil {
		t.Errorf("a figure the tuning list does not name: %q, %v", got, err)
	}
	if _, err := hyperparameters("fig1", []Tuning{{Figure: "fig1", Stage: "tune/mnist"}}, all); err == nil || !strings.Contains(err.Error(), "no task of tune/mnist") {
		t.Errorf("a stage without bound tasks: %v", err)
	}
}

// Every problem of the tuning list is named as params.tuning[i].
func TestTuningValidation(t *testing.T) {
	p := task.NewParams("dag.yaml", "report", map[string]any{"tuning": []any{
		map[string]any{"figure": "f", "stage": "tune/x"},
		map[string]any{"figure": "f", "stage": "tune/x", "note": "both"},
		map[string]any{"stage": "tune/x"},
		"not a mapping",
	}})
	got := decodeTuning(p)
	if len(got) != 3 || got[0] != (Tuning{Figure: "f", Stage: "tune/x"}) {
		t.Errorf("decoded %+v", got)
	}
	var msgs []string
	for _, e := range p.Problems() {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"tuning[1]", "exactly one of stage and note", "tuning[2]", "figure", "tuning[3]", "must be a mapping"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "tuning[0]") {
		t.Errorf("a valid entry has problems:\n%s", all)
	}
}

package report

import (
	"encoding/json"
	"strings"
	"testing"

	"zorepro/pipeline/task"
	"zorepro/stages/tune/chosenjson"
)

// A figure's provenance names the chosen point of every tune task of its
// stage (those with the coordinate where asks for), with the score and
// what was carried, and the notes of what is not tuned.
func TestHyperparameters(t *testing.T) {
	all := []chosen{
		{Task: "tune/mujoco/horizon=1/method=arsv1/name=swimmer", Chosen: choice(t, `{"params": {"nu": 0.2, "alpha": 0.08}, "score": 2.5}`)},
		{Task: "tune/mujoco/horizon=1/method=arsv1/name=halfcheetah", Chosen: choice(t, `{"params": {"alpha": 0.008}, "score": 1}`)},
		{Task: "tune/horizon/horizon=30/method=exact/name=swimmer", Chosen: choice(t, `{"params": {"alpha": 0.005, "nu": 0.1}, "score": 1.806,
			"carried": {"nu": 0.1}, "carried_from": "tune/mujoco/horizon=15/method=exact/name=swimmer"}`)},
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

// A tuned value at the smallest or largest of its grid axis (three values
// or more) is named, from the tune task's own table.csv; a value inside
// its grid, a two-valued axis and a non-numeric axis are not.
func TestGridEdges(t *testing.T) {
	table := "point,alpha,directions,top,kind,mean_return,return_seed_283,chosen,reference\n" +
		"0,0.005,10,5,a,1,1,,\n" +
		"1,0.008,10,10,b,2,2,,\n" +
		"2,0.01,20,5,a,3,3,yes,\n" +
		"3,0.02,20,10,b,0,0,,\n"
	params := map[string]any{"alpha": 0.01, "directions": 20.0, "top": 5.0, "kind": "a"}
	got, err := gridEdges([]byte(table), "return", choiceOf(t, params))
	if err != nil || len(got) != 0 {
		t.Errorf("alpha inside its grid, two-valued axes: %q, %v", got, err)
	}
	table = strings.Replace(table, "0,0.005,10,5", "0,0.005,30,5", 1)
	params["alpha"], params["directions"] = 0.02, 10.0
	got, err = gridEdges([]byte(table), "return", choiceOf(t, params))
	if want := []string{"alpha=0.02 is the largest of 4", "directions=10 is the smallest of 3"}; err != nil || strings.Join(edgeStrings(got), "|") != strings.Join(want, "|") {
		t.Errorf("edges %q, %v; want %q", got, err, want)
	}
	params["alpha"] = 0.005
	got, _ = gridEdges([]byte(table), "return", choiceOf(t, params))
	if len(got) == 0 || got[0].String() != "alpha=0.005 is the smallest of 4" {
		t.Errorf("smallest alpha: %q", got)
	}
	if _, err := gridEdges([]byte(table), "test_loss", choiceOf(t, params)); err == nil || !strings.Contains(err.Error(), "mean_test_loss") {
		t.Errorf("a table without the score's column: %v", err)
	}
	all := []chosen{{Task: "tune/horizon/horizon=200/method=exact/name=swimmer", Chosen: choice(t, `{"params": {"alpha": 0.005}, "score": 19.8}`),
		Edges: []gridEdge{{Axis: "alpha", Value: 0.005, Of: 5}}}}
	got1, err := hyperparameters("fig3d-horizon", []Tuning{{Figure: "fig3d-horizon", Stage: "tune/horizon"}}, all)
	if want := "tuned by tune/horizon, horizon=200/method=exact/name=swimmer: alpha=0.005 (score 19.8; at its grid's edge: alpha=0.005 is the smallest of 5)"; err != nil || got1 != want {
		t.Errorf("provenance: %q, %v\nwant %q", got1, err, want)
	}
}

// edgeStrings is each edge as the provenance's text says it.
func edgeStrings(edges []gridEdge) []string {
	out := make([]string, len(edges))
	for i, g := range edges {
		out[i] = g.String()
	}
	return out
}

// choice parses a chosen.json.
func choice(t *testing.T, text string) *chosenjson.Chosen {
	t.Helper()
	c, err := chosenjson.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// choiceOf is the choice of params.
func choiceOf(t *testing.T, params map[string]any) *chosenjson.Chosen {
	t.Helper()
	b, err := json.Marshal(map[string]any{"params": params})
	if err != nil {
		t.Fatal(err)
	}
	return choice(t, string(b))
}
